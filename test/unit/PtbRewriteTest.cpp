// The PTB rewrite (lib/Rewrite/PtbRewrite.h) against docs/generated-code.md: twins, task functions,
// launchers, clones, launch sites, refusals, #line mapping and determinism.
#include "CudaTestSupport.h"

#include "clang/Tooling/Core/Replacement.h"
#include "llvm/Support/FileSystem.h"

#include <map>
#include <sstream>

using namespace ptbtest;

namespace {

using Strings = std::vector<std::string>;

const std::string kMain = R"cu(#define CHECK(x) do { (x); } while (0)
#define LAUNCH_BODY(p) plain<<<1, 1>>>(p)
__device__ int readBlock() { return blockIdx.x; }
__device__ int viaOne() { return readBlock() + 1; }
__device__ int untouched(int v) { return v + threadIdx.x; }
__global__ void plain(int *p) { p[blockIdx.x] = viaOne() + untouched(1); }
__global__ void shares(int *p) { p[threadIdx.x] = readBlock(); }
template <typename T>
__global__ void __launch_bounds__(256) saxpy(int n, T a, const T *__restrict__ x, T *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
static __global__ void local_kernel(float *f) { f[threadIdx.x] = 0.f; }
namespace ns { template <typename T> __global__ void nk(T *p, int n = 3) { p[blockIdx.x] = n; } }
__global__ void refused(unsigned *p) { unsigned s; asm("mov.u32 %0, %%smid;" : "=r"(s)); p[0] = s; }
int next();
int main() {
  int *p = nullptr; float *f = nullptr;
  cudaStream_t st = 0;
  plain<<<dim3(4, 2), 128>>>(p);
  saxpy<float><<<8, 256, 0, st>>>(1024, 2.0f, f, f);
  saxpy<<<next(), 256>>>(1024, 2.0f, f, f);
  CHECK((plain<<<1, 32>>>(p)));
  LAUNCH_BODY(p);
  ns::nk<float><<<1, 1>>>(f);
  local_kernel<<<1, 1>>>(f);
  refused<<<1, 1>>>(nullptr);
  void *args[] = {&p};
  cudaLaunchKernel((const void *)plain, dim3(1), dim3(1), args, 0, st);
  return 0;
}
)cu";

ptb::RewriteOptions options() {
  ptb::RewriteOptions o;
  o.toolVersion = "9.9.9-test";
  return o;
}

// The main source rewritten once for the whole binary.
const RewriteRun &mainRun() {
  static const RewriteRun run = rewriteCuda(kMain, options(), "input.cu");
  return run;
}

Strings linesOf(const std::string &text) {
  Strings lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool hasLine(const std::string &text, const std::string &line) {
  Strings lines = linesOf(text);
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

bool hasDiag(const RewriteRun &run, const std::string &prefix, const std::string &part) {
  for (auto &d : run.diags)
    if (d.rfind(prefix, 0) == 0 && d.find(part) != std::string::npos) return true;
  return false;
}

// Follows the output's #line directives: for every other line, the (file, line) it claims to come from.
struct MappedLine {
  std::string text, file;
  unsigned line;
};
std::vector<MappedLine> mapLines(const std::string &output) {
  std::vector<MappedLine> out;
  std::string file = "<output>";
  unsigned line = 1;
  for (const std::string &l : linesOf(output)) {
    if (l.rfind("#line ", 0) == 0) {
      std::istringstream in(l.substr(6));
      in >> line;
      size_t q = l.find('"');
      if (q != std::string::npos) file = l.substr(q + 1, l.rfind('"') - q - 1);
      continue;
    }
    out.push_back({l, file, line});
    ++line;
  }
  return out;
}

#ifndef PTB_TEST_RUNTIME_INCLUDE
#define PTB_TEST_RUNTIME_INCLUDE ""
#endif

// The generated code parsed again, host side, with the runtime header (the same parse as the input's).
// Skips the test when the runtime header is not in the checkout.
#define EXPECT_PARSES_WITH_RUNTIME(output, file)                                                                       \
  do {                                                                                                                 \
    std::string inc = PTB_TEST_RUNTIME_INCLUDE;                                                                        \
    if (inc.empty() || !llvm::sys::fs::exists(inc + "/ptb/ptb.cuh"))                                                   \
      GTEST_SKIP() << "no runtime header at " << inc << "/ptb/ptb.cuh";                                                \
    auto reparsed = parseCuda(output, file, {"-I" + inc});                                                             \
    EXPECT_TRUE(reparsed->ok) << "the rewritten code does not parse:\n" << reparsed->diags->all() << "\n" << output;   \
  } while (0)

class PtbRewriteTest : public ::testing::Test {
protected:
  void SetUp() override { PTB_REQUIRE_CUDA(); }
};

TEST_F(PtbRewriteTest, MainSourceIsRewrittenWithWarningsOnly) {
  const RewriteRun &run = mainRun();
  ASSERT_TRUE(run.parsed) << run.allDiags();
  ASSERT_TRUE(run.rewriteOk) << run.allDiags();
  EXPECT_EQ(run.errors, 0u) << run.allDiags();
  EXPECT_EQ(run.result.file, "input.cu");
  EXPECT_EQ(run.result.transformedKernels, (Strings{"plain", "shares", "saxpy", "local_kernel", "ns::nk"}));
  EXPECT_EQ(run.result.skippedKernels, (Strings{"refused"}));
  // plain x2 (+ its cudaLaunchKernel), saxpy x2, ns::nk, local_kernel; not LAUNCH_BODY's, not refused's.
  EXPECT_EQ(run.result.rewrittenLaunches, 7u);
  // The refused kernel, where and why; the launch in a macro definition.
  Pos asmPos = posOf(kMain, "asm(\"mov.u32");
  EXPECT_TRUE(hasDiag(run, std::to_string(asmPos.line) + ":" + std::to_string(asmPos.column) + ": warning:",
                      "kernel 'refused' is left as it is (no PTB twin): %smid read"))
      << run.allDiags();
  EXPECT_TRUE(hasDiag(run, std::to_string(posOf(kMain, "refused(unsigned").line) + ":",
                      "note: kernel 'refused' is defined here"))
      << run.allDiags();
  EXPECT_TRUE(hasDiag(run, std::to_string(posOf(kMain, "LAUNCH_BODY(p);").line) + ":",
                      "launch of 'plain' is written inside the definition of macro 'LAUNCH_BODY'"))
      << run.allDiags();
  EXPECT_EQ(run.warnings, 2u) << run.allDiags();
}

TEST_F(PtbRewriteTest, HeaderMarkerIncludeAndLineDirective) {
  const RewriteRun &run = mainRun();
  ASSERT_TRUE(run.rewriteOk) << run.allDiags();
  Strings lines = linesOf(run.result.output);
  ASSERT_GE(lines.size(), 4u);
  EXPECT_EQ(lines[0].rfind(std::string(ptb::kGeneratedMarker) + " 9.9.9-test from input.cu", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1], "#include \"ptb/ptb.cuh\"");
  EXPECT_EQ(lines[2], "#line 1 \"input.cu\"");
  EXPECT_EQ(lines[3], "#define CHECK(x) do { (x); } while (0)");
  // A different runtime header is honoured.
  ptb::RewriteOptions o = options();
  o.runtimeInclude = "my/ptb_runtime.cuh";
  RewriteRun other = rewriteCuda("__global__ void k(int *p) { p[blockIdx.x] = 0; }\n", o, "other.cu");
  ASSERT_TRUE(other.rewriteOk) << other.allDiags();
  EXPECT_TRUE(hasLine(other.result.output, "#include \"my/ptb_runtime.cuh\"")) << other.result.output;
}

TEST_F(PtbRewriteTest, TemplateKernelTwinTaskAndLauncherAsDocumented) {
  const std::string &out = mainRun().result.output;
  ASSERT_TRUE(mainRun().rewriteOk) << mainRun().allDiags();
  const std::string task =
      "template <typename T>\n"
      "static __device__ __forceinline__ void saxpy__ptb_task(const uint3 blockIdx, const dim3 gridDim, int n, T a, "
      "const T *__restrict__ x, T *y)\n";
  const std::string body =
      "{\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = a * x[i] + y[i];\n}\n";
  const std::string twin =
      "template <typename T>\n"
      "__global__ void __launch_bounds__(256) saxpy__ptb(int n, T a, const T *__restrict__ x, T *y, "
      "const ::ptb::Launch ptb_launch) {\n"
      // saxpy's threads never meet (no shared memory, barrier or warp operation): no barrier between tasks.
      "  ::ptb::run_tasks<::ptb::TaskSync::none>(ptb_launch, [&](const uint3 ptb_block, const dim3 ptb_grid) {\n"
      "    saxpy__ptb_task<T>(ptb_block, ptb_grid, n, a, x, y);\n"
      "  });\n"
      "}\n";
  const std::string launcher =
      "template <typename T>\n"
      "static inline void saxpy__ptb_launch(const ::ptb::LaunchConfig& ptb_config, int n, T a, "
      "const T *__restrict__ x, T *y) {\n"
      "  ::ptb::launch(ptb_config, saxpy<T>, saxpy__ptb<T>, n, a, x, y);\n"
      "}\n";
  size_t t = out.find(task), b = out.find(body, t), w = out.find(twin), l = out.find(launcher);
  EXPECT_NE(t, std::string::npos) << out;
  EXPECT_NE(b, std::string::npos) << out;
  EXPECT_NE(w, std::string::npos) << out;
  EXPECT_NE(l, std::string::npos) << out;
  // In that order, all after the original definition, which is kept byte for byte.
  size_t original = out.find(
      "__global__ void __launch_bounds__(256) saxpy(int n, T a, const T *__restrict__ x, T *y) {\n" + body.substr(2));
  ASSERT_NE(original, std::string::npos) << out;
  EXPECT_LT(original, t);
  EXPECT_LT(t, b);
  EXPECT_LT(b, w);
  EXPECT_LT(w, l);
}

TEST_F(PtbRewriteTest, StaticAttributeAndNamespaceCarryOver) {
  const std::string &out = mainRun().result.output;
  EXPECT_NE(out.find("static __global__ void local_kernel__ptb(float *f, const ::ptb::Launch ptb_launch) {"),
            std::string::npos)
      << out;
  // ns::nk: twin and launcher inside the namespace, default argument kept on the launcher only.
  EXPECT_NE(out.find("template <typename T> __global__ void nk__ptb(T *p, int n, const ::ptb::Launch ptb_launch) {"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("static inline void nk__ptb_launch(const ::ptb::LaunchConfig& ptb_config, T *p, int n = 3) {\n"
                     "  ::ptb::launch(ptb_config, nk<T>, nk__ptb<T>, p, n);\n}"),
            std::string::npos)
      << out;
  size_t nsOpen = out.find("namespace ns {"), launcher = out.find("nk__ptb_launch(const"),
         refusedKernel = out.find("__global__ void refused(");
  EXPECT_LT(nsOpen, launcher);
  EXPECT_LT(launcher, out.rfind(" }", refusedKernel));
}

TEST_F(PtbRewriteTest, DeviceFunctionsReadingBlockIdxAreClonedAndCallsRedirected) {
  const std::string &out = mainRun().result.output;
  EXPECT_NE(out.find("__device__ int readBlock__ptb(const uint3 blockIdx, const dim3 gridDim)"), std::string::npos)
      << out;
  EXPECT_NE(out.find("__device__ int viaOne__ptb(const uint3 blockIdx, const dim3 gridDim)"), std::string::npos) << out;
  EXPECT_NE(out.find("{ return readBlock__ptb(blockIdx, gridDim) + 1; }"), std::string::npos) << out;
  EXPECT_NE(
      out.find(
          "static __device__ __forceinline__ void plain__ptb_task(const uint3 blockIdx, const dim3 gridDim, int *p)"),
      std::string::npos)
      << out;
  EXPECT_NE(out.find("{ p[blockIdx.x] = viaOne__ptb(blockIdx, gridDim) + untouched(1); }"), std::string::npos) << out;
  // A callee that reads only threadIdx is not cloned; the originals stay as they were.
  EXPECT_EQ(out.find("untouched__ptb"), std::string::npos);
  EXPECT_TRUE(hasLine(out, "__device__ int readBlock() { return blockIdx.x; }"));
  EXPECT_TRUE(hasLine(out, "__device__ int viaOne() { return readBlock() + 1; }"));
  EXPECT_TRUE(hasLine(out, "__global__ void plain(int *p) { p[blockIdx.x] = viaOne() + untouched(1); }"));
  // A second kernel calling the same function uses the same clone; each clone is emitted once.
  EXPECT_NE(out.find("{ p[threadIdx.x] = readBlock__ptb(blockIdx, gridDim); }"), std::string::npos) << out;
  EXPECT_EQ(countOf(out, "int readBlock__ptb("), 1u);
  EXPECT_EQ(countOf(out, "int viaOne__ptb("), 1u);
}

TEST_F(PtbRewriteTest, LaunchSitesAreRewrittenInPlace) {
  const std::string &out = mainRun().result.output;
  for (const char *line : {
           "  plain__ptb_launch(::ptb::LaunchConfig(dim3(4, 2), 128), p);",
           "  saxpy__ptb_launch<float>(::ptb::LaunchConfig(8, 256, 0, st), 1024, 2.0f, f, f);",
           "  saxpy__ptb_launch(::ptb::LaunchConfig(next(), 256), 1024, 2.0f, f, f);",
           "  CHECK((plain__ptb_launch(::ptb::LaunchConfig(1, 32), p)));",
           "  ns::nk__ptb_launch<float>(::ptb::LaunchConfig(1, 1), f);",
           "  local_kernel__ptb_launch(::ptb::LaunchConfig(1, 1), f);",
           "  ::ptb::launch_kernel_args(plain, plain__ptb, dim3(1), dim3(1), args, 0, st);",
           // Left as written: the launch in a macro definition, and the refused kernel's launch.
           "  LAUNCH_BODY(p);",
           "#define LAUNCH_BODY(p) plain<<<1, 1>>>(p)",
           "  refused<<<1, 1>>>(nullptr);",
       })
    EXPECT_TRUE(hasLine(out, line)) << "missing: " << line << "\n" << out;
  // The grid expression with a side effect is still written (and so evaluated) once.
  EXPECT_EQ(countOf(out, "next(), 256"), 1u);
  // No <<< left outside the macro definition and the refused kernel's launch.
  EXPECT_EQ(countOf(out, "<<<"), 2u) << out;
}

TEST_F(PtbRewriteTest, RefusedKernelIsLeftByteIdentical) {
  const std::string &out = mainRun().result.output;
  const std::string refused =
      "__global__ void refused(unsigned *p) { unsigned s; asm(\"mov.u32 %0, %%smid;\" : \"=r\"(s)); p[0] = s; }\n"
      "int next();\n";
  EXPECT_NE(out.find(refused), std::string::npos) << out;
  EXPECT_EQ(out.find("refused__ptb"), std::string::npos);
}

TEST_F(PtbRewriteTest, ReplacementsReproduceTheOutputFromTheInput) {
  const RewriteRun &run = mainRun();
  ASSERT_TRUE(run.rewriteOk);
  for (const auto &r : run.result.replacements) EXPECT_EQ(r.getFilePath(), "input.cu");
  auto applied = clang::tooling::applyAllReplacements(kMain, run.result.replacements);
  ASSERT_TRUE(bool(applied)) << llvm::toString(applied.takeError());
  EXPECT_EQ(*applied, run.result.output);
}

TEST_F(PtbRewriteTest, LineDirectivesMapCopiedLinesBackToTheOriginal) {
  const RewriteRun &run = mainRun();
  ASSERT_TRUE(run.rewriteOk);
  // Original lines that occur once in the input: wherever they appear in the output (the original place,
  // or copied into a task function), #line must say they come from that line of input.cu.
  std::map<std::string, unsigned> unique;
  std::map<std::string, int> seen;
  Strings in = linesOf(kMain);
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i].find_first_not_of(" {}") == std::string::npos) continue;
    // A template header is copied into the generated declarations, which map to the kernel's name line.
    if (in[i].rfind("template", 0) == 0) continue;
    ++seen[in[i]];
    unique[in[i]] = unsigned(i + 1);
  }
  unsigned checked = 0;
  for (const MappedLine &m : mapLines(run.result.output)) {
    auto it = unique.find(m.text);
    if (it == unique.end() || seen[m.text] != 1) continue;
    EXPECT_EQ(m.file, "input.cu") << m.text;
    EXPECT_EQ(m.line, it->second) << "output line '" << m.text << "' maps to line " << m.line;
    ++checked;
  }
  // Every unchanged line of the input, plus saxpy's two body lines in the task function.
  EXPECT_GE(checked, 20u);
  EXPECT_EQ(countOf(run.result.output, "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"), 2u);
}

TEST_F(PtbRewriteTest, OutputIsDeterministic) {
  const RewriteRun &first = mainRun();
  RewriteRun second = rewriteCuda(kMain, options(), "input.cu");
  ASSERT_TRUE(second.rewriteOk) << second.allDiags();
  EXPECT_TRUE(first.result.output == second.result.output) << "two runs differ";
  EXPECT_EQ(first.result.replacements.size(), second.result.replacements.size());
  EXPECT_EQ(first.diags, second.diags);
}

TEST_F(PtbRewriteTest, RewrittenOutputParsesWithTheRuntimeHeader) {
  ASSERT_TRUE(mainRun().rewriteOk) << mainRun().allDiags();
  EXPECT_PARSES_WITH_RUNTIME(mainRun().result.output, "input.ptb.cu");
}

TEST_F(PtbRewriteTest, ExplicitSpecializationOfAKernelTemplate) {
  // Regression test (fixed bug): an explicit specialization `template <> __global__ void k<int>(int *p)` is a kernel of
  // its own in the inventory and gets a non-template launcher that calls `::ptb::launch(ptb_config, k, k__ptb, p)`: `k`
  // and `k__ptb` name templates there, so the runtime's Params cannot be deduced and the output does not compile ("no
  // matching function for call to 'launch'"); the launch `k<<<1, 1>>>(ip)` picks that launcher. Expected
  // `::ptb::launch(ptb_config, k<int>, k__ptb<int>, p)`. Reproducer: the source below, `ptb-transform spec.cu -o
  // out.cu`, then parse out.cu with -I runtime/include.
  const std::string src = "template <typename T> __global__ void k(T *p) { p[blockIdx.x] = T(1); }\n"
                          "template <> __global__ void k<int>(int *p) { p[blockIdx.x] = 7; }\n"
                          "void h(int *ip, float *fp) { k<<<1, 1>>>(ip); k<float><<<1, 1>>>(fp); }\n";
  RewriteRun run = rewriteCuda(src, options(), "spec.cu");
  ASSERT_TRUE(run.rewriteOk) << run.allDiags();
  EXPECT_PARSES_WITH_RUNTIME(run.result.output, "spec.ptb.cu");
}

TEST_F(PtbRewriteTest, OverloadedKernelsAreLeftAsTheyAreWithAWarning) {
  // Decision (docs/ptb-transform.md): overloaded kernel names are refused, so that no launcher names an
  // overload set the runtime cannot deduce; the output still compiles and launches the originals.
  const std::string src = "__global__ void ov(int *p) { p[blockIdx.x] = 1; }\n"
                          "__global__ void ov(float *p) { p[blockIdx.x] = 2.f; }\n"
                          "void h(int *ip, float *fp) { ov<<<1, 1>>>(ip); ov<<<1, 1>>>(fp); }\n";
  RewriteRun run = rewriteCuda(src, options(), "overloads.cu");
  ASSERT_TRUE(run.rewriteOk) << run.allDiags();
  EXPECT_TRUE(run.result.transformedKernels.empty());
  EXPECT_EQ(run.result.skippedKernels, (Strings{"ov", "ov"}));
  EXPECT_NE(run.allDiags().find("overloaded kernel names are not supported"), std::string::npos) << run.allDiags();
  EXPECT_NE(run.result.output.find("ov<<<1, 1>>>(ip); ov<<<1, 1>>>(fp);"), std::string::npos);
  EXPECT_PARSES_WITH_RUNTIME(run.result.output, "overloads.ptb.cu");
}

TEST_F(PtbRewriteTest, GridConstantParameterStaysOnTheKernelsOnly) {
  // Regression test (fixed bug): a `const __grid_constant__ Params prm` parameter is copied as written into K__ptb_task
  // (a
  // __device__ function) and K__ptb_launch (a host function); nvcc 13 rejects both: "__grid_constant__
  // annotation is only allowed on a parameter of a __global__ function" (checked with nvcc -arch=sm_90 on
  // the output of the source below). The twin may keep it; the task function and launcher must not.
  const std::string src = "struct Params { int n; float *x; };\n"
                          "__global__ void byval(const __grid_constant__ Params prm) { prm.x[blockIdx.x] = prm.n; }\n"
                          "void h(float *fp) { byval<<<1, 1>>>(Params{1, fp}); }\n";
  RewriteRun run = rewriteCuda(src, options(), "gridconst.cu");
  ASSERT_TRUE(run.rewriteOk) << run.allDiags();
  for (const std::string &line : linesOf(run.result.output)) {
    if (line.find("byval__ptb_task(const uint3") != std::string::npos ||
        line.find("void byval__ptb_launch(") != std::string::npos) {
      EXPECT_EQ(line.find("__grid_constant__"), std::string::npos) << line;
    }
  }
  EXPECT_NE(run.result.output.find(
                "__global__ void byval__ptb(const __grid_constant__ Params prm, const ::ptb::Launch ptb_launch)"),
            std::string::npos)
      << run.result.output;
}

TEST_F(PtbRewriteTest, AlreadyTransformedInputIsRefused) {
  RewriteRun marked =
      rewriteCuda(std::string(ptb::kGeneratedMarker) + " 0.1.0 from k.cu\n"
                                                       "__global__ void k(int *p) { p[blockIdx.x] = 0; }\n",
                  options(), "k.cu");
  ASSERT_TRUE(marked.parsed) << marked.allDiags();
  EXPECT_FALSE(marked.rewriteOk);
  EXPECT_TRUE(hasDiag(marked, "1:1: error:", "already transformed")) << marked.allDiags();
  EXPECT_TRUE(marked.result.output.empty());
  // Without the marker line, a kernel named like a twin betrays a transformed file too.
  RewriteRun withTask = rewriteCuda("__global__ void k(int *p) { p[blockIdx.x] = 0; }\n"
                                    "__global__ void k__ptb(int *p) { p[blockIdx.x] = 0; }\n",
                                    options(), "k2.cu");
  ASSERT_TRUE(withTask.parsed) << withTask.allDiags();
  EXPECT_FALSE(withTask.rewriteOk);
  EXPECT_TRUE(hasDiag(withTask, "1:1: error:", "already transformed")) << withTask.allDiags();
}

// --- Refusals, --strict, --kernels ---------------------------------------------------------------------

const std::string kRefusal = R"cu(__global__ void bad(int *p) {
  if (threadIdx.x >= 16) return;
  asm volatile("bar.sync 0;");
  p[threadIdx.x] = 1;
}
__global__ void good(int *p) { p[blockIdx.x] = 1; }
__global__ void other(int *p) { p[blockIdx.x] = 2; }
void h(int *p) { bad<<<1, 32>>>(p); good<<<1, 32>>>(p); other<<<1, 1>>>(p); }
)cu";

TEST_F(PtbRewriteTest, ThreadDependentReturnBeforeBarrierIsRefusedNamingBoth) {
  RewriteRun run = rewriteCuda(kRefusal, options(), "refusal.cu");
  ASSERT_TRUE(run.rewriteOk) << run.allDiags();
  EXPECT_EQ(run.result.skippedKernels, (Strings{"bad"}));
  EXPECT_EQ(run.result.transformedKernels, (Strings{"good", "other"}));
  EXPECT_EQ(run.result.rewrittenLaunches, 2u);
  // The warning is at the return and names the barrier's place.
  EXPECT_TRUE(hasDiag(run, "2:26: warning:", "thread-dependent return before a barrier")) << run.allDiags();
  EXPECT_TRUE(hasDiag(run, "2:26: warning:", "bar.sync (inline asm) at refusal.cu:3:3")) << run.allDiags();
  EXPECT_TRUE(hasDiag(run, "2:26: warning:", "it is inline asm")) << run.allDiags();
  // The kernel and its launch are untouched.
  const std::string &out = run.result.output;
  EXPECT_NE(out.find(kRefusal.substr(0, kRefusal.find("__global__ void good"))), std::string::npos) << out;
  EXPECT_NE(out.find("void h(int *p) { bad<<<1, 32>>>(p); good__ptb_launch(::ptb::LaunchConfig(1, 32), p); "
                     "other__ptb_launch(::ptb::LaunchConfig(1, 1), p); }"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("bad__ptb"), std::string::npos);
}

// A thread-dependent return before a barrier: the twin parks the threads that return (docs/ptb-transform.md,
// "Parking"): its barriers, and those of the callee it reaches them through (cloned), are task barriers, and
// run_tasks is told so. The original kernel and the callee stay as they were. A clone shared with a kernel
// that does not park is the same clone (task barriers are ordinary barriers when nobody parks).
const std::string kParked = R"cu(__device__ int sync_and_read(int *s) { __syncthreads(); return s[blockIdx.x % 4]; }
__global__ void parked(int *p, int n) {
  __shared__ int s[128];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  s[threadIdx.x] = p[i];
  __syncthreads();
  p[i] = s[127 - threadIdx.x] + sync_and_read(s);
}
__global__ void not_parked(int *p) {
  __shared__ int s[128];
  s[threadIdx.x] = p[threadIdx.x];
  __syncthreads();
  p[threadIdx.x] = sync_and_read(s);
}
void h(int *p, int n) { parked<<<4, 128>>>(p, n); not_parked<<<4, 128>>>(p); }
)cu";

TEST_F(PtbRewriteTest, ThreadDependentReturnBeforeBarrierParks) {
  RewriteRun run = rewriteCuda(kParked, options(), "parked.cu");
  ASSERT_TRUE(run.rewriteOk) << run.allDiags();
  EXPECT_EQ(run.warnings, 0u) << run.allDiags();
  EXPECT_EQ(run.result.transformedKernels, (Strings{"parked", "not_parked"}));
  const std::string &out = run.result.output;
  // The originals are untouched.
  EXPECT_NE(out.find(kParked.substr(0, kParked.find('\n') + 1)), std::string::npos) << out;
  EXPECT_NE(out.find("  if (i >= n) return;\n  s[threadIdx.x] = p[i];\n  __syncthreads();\n"
                     "  p[i] = s[127 - threadIdx.x] + sync_and_read(s);\n}\n"),
            std::string::npos)
      << out;
  // The parked twin's task body, and its run_tasks.
  EXPECT_NE(
      out.find("  if (i >= n) { ::ptb::task_exit(); return; }\n  s[threadIdx.x] = p[i];\n  ::ptb::task_sync();\n"
               "  p[i] = s[127 - threadIdx.x] + sync_and_read__ptb(blockIdx, gridDim, s);\n  ::ptb::task_exit();\n}\n"),
      std::string::npos)
      << out;
  EXPECT_NE(out.find("__global__ void parked__ptb(int *p, int n, const ::ptb::Launch ptb_launch) {\n"
                     "  ::ptb::run_tasks<::ptb::TaskSync::parked>(ptb_launch,"),
            std::string::npos)
      << out;
  // One clone, with the task barrier, serving both twins; the other twin keeps its own __syncthreads.
  EXPECT_EQ(countOf(out, "int sync_and_read__ptb("), 1u) << out;
  EXPECT_NE(out.find("{ ::ptb::task_sync(); return s[blockIdx.x % 4]; }"), std::string::npos) << out;
  EXPECT_NE(out.find("  s[threadIdx.x] = p[threadIdx.x];\n  __syncthreads();\n"
                     "  p[threadIdx.x] = sync_and_read__ptb(blockIdx, gridDim, s);\n}\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("__global__ void not_parked__ptb(int *p, const ::ptb::Launch ptb_launch) {\n"
                     "  ::ptb::run_tasks(ptb_launch,"),
            std::string::npos)
      << out;
  EXPECT_EQ(countOf(out, "::ptb::task_sync()"), 2u) << out;
}

TEST_F(PtbRewriteTest, StrictModeMakesARefusalAnError) {
  ptb::RewriteOptions o = options();
  o.strict = true;
  RewriteRun run = rewriteCuda(kRefusal, o, "refusal.cu");
  ASSERT_TRUE(run.parsed) << run.allDiags();
  EXPECT_FALSE(run.rewriteOk);
  EXPECT_TRUE(hasDiag(run, "2:26: error:", "kernel 'bad' is left as it is")) << run.allDiags();
  EXPECT_TRUE(run.result.output.empty()) << "an output was produced although the rewrite failed";
}

TEST_F(PtbRewriteTest, KernelFilterSelectsKernels) {
  ptb::RewriteOptions o = options();
  o.kernelFilter = "go+d";
  RewriteRun run = rewriteCuda(kRefusal, o, "refusal.cu");
  ASSERT_TRUE(run.rewriteOk) << run.allDiags();
  EXPECT_EQ(run.result.transformedKernels, (Strings{"good"}));
  // Kernels the filter leaves out are neither transformed nor reported.
  EXPECT_TRUE(run.result.skippedKernels.empty());
  EXPECT_EQ(run.warnings, 0u) << run.allDiags();
  EXPECT_EQ(run.result.rewrittenLaunches, 1u);
  EXPECT_NE(run.result.output.find("other<<<1, 1>>>(p);"), std::string::npos);
  EXPECT_EQ(run.result.output.find("other__ptb"), std::string::npos);
  // An invalid regex is an error.
  o.kernelFilter = "(";
  RewriteRun bad = rewriteCuda(kRefusal, o, "refusal.cu");
  EXPECT_FALSE(bad.rewriteOk);
  EXPECT_TRUE(hasDiag(bad, "", "invalid --kernels regex")) << bad.allDiags();
}

// --- Parameter packs, unnamed parameters, short cudaLaunchKernel -------------------------------------

TEST_F(PtbRewriteTest, PacksUnnamedParametersAndShortCudaLaunchKernel) {
  RewriteRun run = rewriteCuda(
      "template <typename... Ts> __global__ void packed(int *p, Ts... xs) { p[blockIdx.x] = sizeof...(xs); }\n"
      "__global__ void unnamed(int *p, int) { p[blockIdx.x] = 1; }\n"
      "void h(int *p) {\n"
      "  packed<<<1, 1>>>(p, 1, 2.0f);\n"
      "  unnamed<<<1, 1>>>(p, 3);\n"
      "  void *args[] = {&p};\n"
      "  cudaLaunchKernel((const void *)unnamed, dim3(1), dim3(1), args);\n"
      "}\n",
      options(), "packs.cu");
  ASSERT_TRUE(run.rewriteOk) << run.allDiags();
  const std::string &out = run.result.output;
  for (const char *text : {
           "static __device__ __forceinline__ void packed__ptb_task(const uint3 blockIdx, const dim3 gridDim, int *p, "
           "Ts... xs)",
           "    packed__ptb_task<Ts...>(ptb_block, ptb_grid, p, xs...);",
           "  ::ptb::launch(ptb_config, packed<Ts...>, packed__ptb<Ts...>, p, xs...);",
           // An unnamed parameter gets a name, so that it can be forwarded.
           "static __device__ __forceinline__ void unnamed__ptb_task(const uint3 blockIdx, const dim3 gridDim, int *p, "
           "int ptb_param1)",
           "    unnamed__ptb_task(ptb_block, ptb_grid, p, ptb_param1);",
           "  packed__ptb_launch(::ptb::LaunchConfig(1, 1), p, 1, 2.0f);",
           "  unnamed__ptb_launch(::ptb::LaunchConfig(1, 1), p, 3);",
           // cudaLaunchKernel's defaulted shared memory and stream are written out for the runtime call.
           "  ::ptb::launch_kernel_args(unnamed, unnamed__ptb, dim3(1), dim3(1), args, 0, 0);",
       })
    EXPECT_NE(out.find(text), std::string::npos) << "missing: " << text << "\n" << out;
  // The original kernel keeps its unnamed parameter.
  EXPECT_TRUE(hasLine(out, "__global__ void unnamed(int *p, int) { p[blockIdx.x] = 1; }"));
  EXPECT_PARSES_WITH_RUNTIME(out, "packs.ptb.cu");
}

// --- Declarations before definitions -----------------------------------------------------------------

const std::string kForward = R"cu(__global__ void later(int *p, int n = 7);
void h(int *p) { later<<<1, 1>>>(p); }
__global__ void later(int *p, int n) { p[blockIdx.x] = n; }
)cu";

TEST_F(PtbRewriteTest, LaunchBeforeDefinitionGetsAForwardDeclaredLauncher) {
  RewriteRun run = rewriteCuda(kForward, options(), "forward.cu");
  ASSERT_TRUE(run.rewriteOk) << run.allDiags();
  const std::string &out = run.result.output;
  const std::string decl =
      "static inline void later__ptb_launch(const ::ptb::LaunchConfig& ptb_config, int *p, int n = 7);";
  const std::string def =
      "static inline void later__ptb_launch(const ::ptb::LaunchConfig& ptb_config, int *p, int n) {";
  size_t d = out.find(decl), use = out.find("later__ptb_launch(::ptb::LaunchConfig(1, 1), p);"), f = out.find(def);
  ASSERT_NE(d, std::string::npos) << out;
  ASSERT_NE(use, std::string::npos) << out;
  ASSERT_NE(f, std::string::npos) << out;
  EXPECT_LT(d, use);
  EXPECT_LT(use, f);
  // The line after the forward declaration still maps to its place in forward.cu.
  for (const MappedLine &m : mapLines(out))
    if (m.text == "void h(int *p) { later__ptb_launch(::ptb::LaunchConfig(1, 1), p); }") { EXPECT_EQ(m.line, 2u); }
  EXPECT_PARSES_WITH_RUNTIME(out, "forward.ptb.cu");
}

TEST_F(PtbRewriteTest, RedirectedCallRelyingOnDefaultArgument) {
  // Regression test (fixed bug): a call to a __device__ function that reads blockIdx, written with its arguments
  // defaulted
  // (`rb()` for `int rb(int k = 1)`), is redirected to `rb__ptb(blockIdx, gridDim, )`, which does not
  // compile: whether the call has arguments was CallExpr::getNumArgs(), which includes CXXDefaultArgExpr
  // (the launch rewrite counts only written arguments). Reproducer: the source below; expected
  // `rb__ptb(blockIdx, gridDim)` in usesRb__ptb_task.
  RewriteRun run = rewriteCuda("__device__ int rb(int k = 1) { return blockIdx.x * k; }\n"
                               "__global__ void usesRb(int *p) { p[0] = rb(); }\n",
                               options(), "defarg.cu");
  ASSERT_TRUE(run.rewriteOk) << run.allDiags();
  EXPECT_NE(run.result.output.find("{ p[0] = rb__ptb(blockIdx, gridDim); }"), std::string::npos) << run.result.output;
  EXPECT_EQ(run.result.output.find("gridDim, )"), std::string::npos) << run.result.output;
  EXPECT_PARSES_WITH_RUNTIME(run.result.output, "defarg.ptb.cu");
}

TEST_F(PtbRewriteTest, DeviceSideLaunchInRefusedParentIsLeftAsWritten) {
  // A kernel refused for dynamic parallelism stays byte-identical: the device-side launch of the (eligible)
  // child inside it must not become a call of the host-side launcher (fixed in a3ea3c8; was a bug).
  const std::string src = "__global__ void child(int *p) { p[threadIdx.x] = 0; }\n"
                          "__global__ void parent(int *p) { child<<<1, 32>>>(p); }\n";
  RewriteRun run = rewriteCuda(src, options(), "dp.cu");
  ASSERT_TRUE(run.rewriteOk) << run.allDiags();
  EXPECT_EQ(run.result.skippedKernels, (Strings{"parent"}));
  EXPECT_TRUE(hasLine(run.result.output, "__global__ void parent(int *p) { child<<<1, 32>>>(p); }"))
      << run.result.output;
  EXPECT_EQ(run.result.rewrittenLaunches, 0u);
  EXPECT_PARSES_WITH_RUNTIME(run.result.output, "dp.ptb.cu");
}

} // namespace

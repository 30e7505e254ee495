// The kernel inventory (lib/Analysis/KernelInventory.h), checked field by field against what each kernel
// of one shared translation unit is expected to report. The source is parsed once for the whole suite.
#include "CudaTestSupport.h"
#include "InventoryFormat.h"
#include "TaskBarrierEdits.h"

#include "clang/AST/Decl.h"
#include "clang/AST/DeclTemplate.h"

#include <algorithm>

using namespace ptbtest;

namespace {

// A parking kernel's edits, as the rewrite spells them from the inventory's facts (TaskBarrierEdits.h):
// its barriers' (made task barriers) and its exits' (task_exit at each return of the body and at its end:
// two edits per return, one at the end).
std::vector<ptb::rewrite::TaskBarrierEdit> barrierEdits(const ptb::Kernel &k) {
  std::vector<ptb::rewrite::TaskBarrierEdit> out;
  for (const ptb::TaskBarrierSite &b : k.taskBarriers)
    for (const ptb::rewrite::TaskBarrierEdit &e : ptb::rewrite::taskBarrierEdits(b)) out.push_back(e);
  return out;
}
size_t exitEdits(const ptb::Kernel &k) {
  const clang::ASTUnit &ast = *inventoryTU()->ast;
  size_t n = 0;
  for (const ptb::TaskExit &x : k.taskExits)
    n += ptb::rewrite::taskExitEdits(x, ast.getSourceManager(), ast.getLangOpts()).size();
  return n;
}

const char *const kFile = "inventory.cu";

// Every kernel has a comment naming what it is for; the tests find positions by unique snippets.
const std::string kSource = R"cu(#include <cooperative_groups.h>
namespace cg = cooperative_groups;

#define BX blockIdx.x
#define GLOBAL_ID (blockIdx.x * blockDim.x + threadIdx.x)

__device__ int readBlock() { return blockIdx.x; }
__device__ int viaOne() { return readBlock() + 1; }
__device__ int tidOnly() { return threadIdx.x; }
template <typename T> __device__ T scaleByBlock(T v) { return v * T(gridDim.x); }
__device__ void syncHelper() { __syncthreads(); }
__device__ void syncDeeper() { syncHelper(); }

__host__ __device__ int hdIndex() {
#ifdef __CUDA_ARCH__
  return blockIdx.x;
#else
  return 0;
#endif
}
__global__ void hd_kernel(int *out) { out[threadIdx.x] = hdIndex(); }

__global__ void direct_use(int *out) { out[blockIdx.x] = gridDim.y; }
__global__ void macro_use(int *out) { out[BX] = GLOBAL_ID; }
__global__ void chain_one(int *out) { out[threadIdx.x] = readBlock(); }
__global__ void chain_two(int *out) { out[threadIdx.x] = viaOne(); }
template <typename T> __global__ void template_chain(T *out) { out[threadIdx.x] = scaleByBlock(out[threadIdx.x]); }
__global__ void thread_only(float *out) { out[threadIdx.x + blockDim.x * threadIdx.y] = tidOnly(); }

__global__ void barriers_all(int *p) {
  __syncthreads();
  int c = __syncthreads_count(p[threadIdx.x]);
  int a = __syncthreads_and(c);
  int o = __syncthreads_or(a);
  asm volatile("bar.sync 0;");
  cg::thread_block block = cg::this_thread_block();
  block.sync();
  cg::sync(block);
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  tile.sync();
  syncDeeper();
  p[threadIdx.x] = o;
}

__global__ void ret_uniform(int *p, int n) {
  if (blockIdx.x >= n) return;
  int base = blockIdx.x * blockDim.x;
  if (base > n) return;
  if (__syncthreads_or(p[threadIdx.x])) return;
  p[base + threadIdx.x] = 1;
}
__global__ void ret_thread(int *p) {
  if (threadIdx.x > 3) return;
  p[threadIdx.x] = 0;
}
__global__ void ret_local(int *p) {
  int tid2 = threadIdx.x * 2;
  if (tid2 > 8) return;
  p[tid2] = 0;
}
__global__ void ret_memory(int *p) {
  if (p[blockIdx.x]) return;
  p[blockIdx.x] = 1;
}
__global__ void ret_loop(int *p, int n) {
  for (int i = 0; i < n; ++i) {
    if (threadIdx.x == i) break;
    if (i == 5) return;
    p[i] = 0;
  }
}

__global__ void cg_misc(int *p) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  cg::sync(warp);
  p[block.group_index().x] = warp.thread_rank();
}
__global__ void grid_sync(int *p) { cg::this_grid().sync(); p[0] = 1; }
__global__ void reads_smid(unsigned *p) { unsigned s; asm volatile("mov.u32 %0, %%smid;" : "=r"(s)); p[blockIdx.x] = s; }
__global__ void __cluster_dims__(2, 1, 1) clustered(int *p) { p[blockIdx.x] = 1; }
__global__ void ret_then_barrier(int *p) {
  if (threadIdx.x > 3) return;
  __syncthreads();
  p[threadIdx.x] = 1;
}
__global__ void barrier_then_ret(int *p) {
  __syncthreads();
  if (threadIdx.x > 3) return;
  p[threadIdx.x] = 1;
}
__global__ void loop_barrier(int *p, int n) {
  for (int i = 0; i < n; ++i) {
    __syncthreads();
    if (threadIdx.x == i) return;
  }
}
__global__ void ret_then_call_barrier(int *p) {
  if (threadIdx.x > 3) return;
  syncDeeper();
}
__global__ void ret_switch(int *p) {
  switch (threadIdx.x) { case 0: return; default: break; }
  p[0] = 1;
}
__global__ void ptr_alias(int *p) {
  int v = 0;
  int *q = &v;
  *q = threadIdx.x;
  if (v > 3) return;
  __syncthreads();
}
__global__ void tern_local(int *p, int n) {
  int w = n > 0 ? threadIdx.x : 0;
  if (w) return;
  __syncthreads();
}
__global__ void lambda_sync(int *p) {
  auto sync = [] { __syncthreads(); };
  if (threadIdx.x > 3) return;
  sync();
}
#define RB_CALL readBlock()
__global__ void macro_call(int *p) { p[threadIdx.x] = RB_CALL; }
__global__ void lambda_nocap(int *p) {
  auto f = [](int *q) { q[blockIdx.x] = 1; };
  f(p);
}
__global__ void lambda_ref(int *p) {
  auto f = [&](int i) { p[blockIdx.x * 32 + i] = 1; };
  f(threadIdx.x);
}

__global__ void shared_static(float *p) {
  __shared__ float a[256];
  __shared__ double b[4][8];
  extern __shared__ unsigned char raw[];
  a[threadIdx.x] = raw[threadIdx.x] + b[0][threadIdx.x % 8];
  p[threadIdx.x] = a[threadIdx.x];
}
template <int N> __global__ void shared_tpl(float *p) {
  __shared__ float tile[N];
  __shared__ int counts[32];
  extern __shared__ float dyn[];
  tile[threadIdx.x] = dyn[threadIdx.x] + counts[0];
  p[threadIdx.x] = tile[threadIdx.x];
}

template <typename T, int N = 4>
__global__ void saxpy_t(int n, T a, const T *__restrict__ x, T *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + N;
}

namespace ns {
__global__ void nk(int *p) { p[blockIdx.x] = 0; }
template <typename T> __global__ void nt(T *p) { p[blockIdx.x] = T(); }
}

template <typename T>
__global__ void json_kernel(T *p, int n) {
  __shared__ int buf[32];
  if (blockIdx.x >= n) return;
  buf[threadIdx.x] = p[BX];
  __syncthreads();
  p[threadIdx.x] = buf[31 - threadIdx.x] + readBlock();
}

__global__ void declared_only(int *p);

#define RUN(x) do { x; } while (0)
#define LAUNCH_IN_BODY(p) direct_use<<<1, 1>>>(p)

void host(int *ip, float *fp, double *dp, cudaStream_t st) {
  saxpy_t<float><<<2, 256>>>(8, 2.0f, fp, fp);
  saxpy_t<<<dim3(2), dim3(256), 0, st>>>(8, 2.0, dp, dp);
  RUN((direct_use<<<1, 32>>>(ip)));
  LAUNCH_IN_BODY(ip);
  void *args[] = {&ip};
  cudaLaunchKernel((const void *)chain_one, dim3(1), dim3(32), args, 0, st);
  ns::nk<<<1, 1>>>(ip);
  ns::nt<float><<<1, 1>>>(fp);
  template_chain<float><<<1, 1>>>(fp);
  shared_tpl<64><<<1, 64, 256>>>(fp);
  json_kernel<int><<<4, 32>>>(ip, 4);
  declared_only<<<1, 1>>>(ip);
}
)cu";

std::vector<std::string> names(const std::vector<const clang::FunctionDecl *> &fns) {
  std::vector<std::string> out;
  for (auto *f : fns) out.push_back(f ? f->getNameAsString() : "<null>");
  return out;
}

using Chains = std::vector<std::vector<std::string>>;
using Strings = std::vector<std::string>;
using MacroSet = std::set<std::string>;

class KernelInventoryTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() { tu = inventoryTU(); }
  void SetUp() override {
    PTB_REQUIRE_CUDA();
    ASSERT_NE(tu, nullptr);
    ASSERT_TRUE(tu->ok) << "the shared source does not parse:\n" << tu->diags->all();
    // The shared source parses on the device side, as the tool parses such files.
    ASSERT_EQ(tu->side, ptb::ParseSide::Device) << join(tu->deviceDiags, "\n");
  }
  // The kernel, or a test failure.
  const ptb::Kernel &k(const std::string &name) {
    const ptb::Kernel *kernel = tu->kernel(name);
    if (!kernel) {
      ADD_FAILURE() << "no kernel " << name << " in the inventory";
      static ptb::Kernel none;
      return none;
    }
    return *kernel;
  }
  static const ptb::BuiltinUse &use(const ptb::Kernel &kernel, ptb::BuiltinVar v) {
    static const ptb::BuiltinUse none;
    auto it = kernel.uses.find(v);
    return it == kernel.uses.end() ? none : it->second;
  }
  static Pos at(const std::string &needle, unsigned skip = 0) { return posOf(kSource, needle, skip); }
  static const ParsedTU *tu;
};
const ParsedTU *KernelInventoryTest::tu = nullptr;

using BV = ptb::BuiltinVar;

// --- The translation unit as a whole ------------------------------------------------------------------

TEST_F(KernelInventoryTest, ListsEveryKernelOfTheMainFileInSourceOrder) {
  EXPECT_EQ(tu->inv.mainFile, kFile);
  Strings got;
  for (auto &kernel : tu->inv.kernels) got.push_back(kernel.qualifiedName);
  Strings want = {"hd_kernel",        "direct_use",    "macro_use",
                  "chain_one",        "chain_two",     "template_chain",
                  "thread_only",      "barriers_all",  "ret_uniform",
                  "ret_thread",       "ret_local",     "ret_memory",
                  "ret_loop",         "cg_misc",       "grid_sync",
                  "reads_smid",       "clustered",     "ret_then_barrier",
                  "barrier_then_ret", "loop_barrier",  "ret_then_call_barrier",
                  "ret_switch",       "ptr_alias",     "tern_local",
                  "lambda_sync",      "macro_call",    "lambda_nocap",
                  "lambda_ref",       "shared_static", "shared_tpl",
                  "saxpy_t",          "ns::nk",        "ns::nt",
                  "json_kernel"};
  // declared_only has no definition: it is not a kernel of this file.
  EXPECT_EQ(got, want);
}

TEST_F(KernelInventoryTest, KernelLocationIsTheNameToken) {
  EXPECT_TRUE(isAt(k("direct_use").loc, kFile, at("direct_use(int")));
  EXPECT_TRUE(isAt(k("saxpy_t").loc, kFile, at("saxpy_t(int n")));
  EXPECT_TRUE(isAt(k("ns::nk").loc, kFile, at("nk(int *p)")));
}

// --- Built-in variables ------------------------------------------------------------------------------

TEST_F(KernelInventoryTest, DirectUses) {
  const ptb::Kernel &kernel = k("direct_use");
  EXPECT_TRUE(use(kernel, BV::blockIdx).direct);
  EXPECT_TRUE(use(kernel, BV::blockIdx).macros.empty());
  EXPECT_TRUE(use(kernel, BV::blockIdx).callChains.empty());
  EXPECT_TRUE(use(kernel, BV::gridDim).direct);
  EXPECT_FALSE(use(kernel, BV::threadIdx).used());
  EXPECT_FALSE(use(kernel, BV::blockDim).used());
  EXPECT_TRUE(kernel.usesVirtualIndex());
  // Every built-in has an entry, used or not (the JSON writer relies on it).
  EXPECT_EQ(kernel.uses.size(), 4u);
}

TEST_F(KernelInventoryTest, UsesThroughMacrosRecordTheMacroName) {
  const ptb::Kernel &kernel = k("macro_use");
  EXPECT_FALSE(use(kernel, BV::blockIdx).direct);
  EXPECT_EQ(use(kernel, BV::blockIdx).macros, (MacroSet{"BX", "GLOBAL_ID"}));
  EXPECT_FALSE(use(kernel, BV::threadIdx).direct);
  EXPECT_EQ(use(kernel, BV::threadIdx).macros, (MacroSet{"GLOBAL_ID"}));
  EXPECT_EQ(use(kernel, BV::blockDim).macros, (MacroSet{"GLOBAL_ID"}));
  EXPECT_FALSE(use(kernel, BV::gridDim).used());
  EXPECT_TRUE(kernel.usesVirtualIndex());
}

TEST_F(KernelInventoryTest, UseThroughOneDeviceFunctionRecordsTheCallChain) {
  const ptb::Kernel &kernel = k("chain_one");
  EXPECT_FALSE(use(kernel, BV::blockIdx).direct);
  EXPECT_TRUE(use(kernel, BV::blockIdx).macros.empty());
  EXPECT_EQ(use(kernel, BV::blockIdx).callChains, (Chains{{"readBlock"}}));
  EXPECT_TRUE(use(kernel, BV::threadIdx).direct);
  EXPECT_TRUE(kernel.usesVirtualIndex());
  EXPECT_EQ(kernel.callees, (Strings{"readBlock"}));
}

TEST_F(KernelInventoryTest, UseThroughTwoDeviceFunctionsRecordsTheWholeChain) {
  const ptb::Kernel &kernel = k("chain_two");
  EXPECT_FALSE(use(kernel, BV::blockIdx).direct);
  EXPECT_EQ(use(kernel, BV::blockIdx).callChains, (Chains{{"viaOne", "readBlock"}}));
  EXPECT_EQ(kernel.callees, (Strings{"readBlock", "viaOne"}));
  EXPECT_TRUE(kernel.blockers.empty());
}

TEST_F(KernelInventoryTest, UseThroughTemplateDeviceFunctionWithDependentArguments) {
  const ptb::Kernel &kernel = k("template_chain");
  EXPECT_FALSE(use(kernel, BV::gridDim).direct);
  EXPECT_EQ(use(kernel, BV::gridDim).callChains, (Chains{{"scaleByBlock"}}));
  EXPECT_FALSE(use(kernel, BV::blockIdx).used());
  EXPECT_TRUE(use(kernel, BV::threadIdx).direct);
  EXPECT_TRUE(kernel.usesVirtualIndex());
  EXPECT_TRUE(kernel.blockers.empty());
}

TEST_F(KernelInventoryTest, UseInADeviceOnlyBranchOfAHostDeviceFunction) {
  // Only the device-side parse sees the #ifdef __CUDA_ARCH__ branch.
  const ptb::Kernel &kernel = k("hd_kernel");
  EXPECT_EQ(use(kernel, BV::blockIdx).callChains, (Chains{{"hdIndex"}}));
  EXPECT_EQ(names(kernel.virtualizedCallees), (Strings{"hdIndex"}));
  EXPECT_TRUE(kernel.blockers.empty());
}

TEST_F(KernelInventoryTest, ThreadIdxOnlyKernelHasNoVirtualIndex) {
  const ptb::Kernel &kernel = k("thread_only");
  EXPECT_FALSE(use(kernel, BV::blockIdx).used());
  EXPECT_FALSE(use(kernel, BV::gridDim).used());
  EXPECT_TRUE(use(kernel, BV::threadIdx).direct);
  EXPECT_EQ(use(kernel, BV::threadIdx).callChains, (Chains{{"tidOnly"}}));
  EXPECT_TRUE(use(kernel, BV::blockDim).direct);
  EXPECT_FALSE(kernel.usesVirtualIndex());
  EXPECT_TRUE(kernel.virtualizedCallees.empty());
  EXPECT_TRUE(kernel.virtualizedCalls.empty());
}

// --- Barriers ----------------------------------------------------------------------------------------

TEST_F(KernelInventoryTest, BarriersOfEveryKindInSourceOrder) {
  const ptb::Kernel &kernel = k("barriers_all");
  struct Want {
    std::string kind;
    bool blockWide;
    Pos pos;
    Strings via;
  };
  std::vector<Want> want = {
      {"__syncthreads", true, at("__syncthreads();\n  int c"), {}},
      {"__syncthreads_count", true, at("__syncthreads_count(p"), {}},
      {"__syncthreads_and", true, at("__syncthreads_and(c)"), {}},
      {"__syncthreads_or", true, at("__syncthreads_or(a)"), {}},
      {"bar.sync (inline asm)", true, at("asm volatile(\"bar.sync"), {}},
      {"cg::thread_block::sync", true, at("block.sync()"), {}},
      {"cg::thread_block::sync", true, at("cg::sync(block)"), {}},
      {"cg::thread_block_tile::sync", false, at("tile.sync()"), {}},
      // In a callee: located at the kernel's call, with the chain of callees.
      {"__syncthreads", true, at("syncDeeper();\n  p[threadIdx.x] = o;"), {"syncDeeper", "syncHelper"}},
  };
  ASSERT_EQ(kernel.barriers.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("barrier #" + std::to_string(i) + " " + want[i].kind);
    EXPECT_EQ(kernel.barriers[i].kind, want[i].kind);
    EXPECT_EQ(kernel.barriers[i].blockWide, want[i].blockWide);
    EXPECT_TRUE(isAt(kernel.barriers[i].loc, kFile, want[i].pos));
    EXPECT_EQ(kernel.barriers[i].via, want[i].via);
  }
  EXPECT_TRUE(kernel.blockers.empty());
  EXPECT_TRUE(kernel.returns.empty());
  EXPECT_EQ(kernel.callees, (Strings{"syncDeeper", "syncHelper"}));
}

// --- Returns -----------------------------------------------------------------------------------------

TEST_F(KernelInventoryTest, BlockUniformReturns) {
  const ptb::Kernel &kernel = k("ret_uniform");
  ASSERT_EQ(kernel.returns.size(), 3u);
  // On a parameter, on a local computed from blockIdx/blockDim, on the result of __syncthreads_or.
  EXPECT_TRUE(isAt(kernel.returns[0].loc, kFile, at("return;\n  int base")));
  EXPECT_TRUE(isAt(kernel.returns[1].loc, kFile, at("return;\n  if (__syncthreads_or")));
  EXPECT_TRUE(isAt(kernel.returns[2].loc, kFile, at("return;\n  p[base")));
  for (auto &r : kernel.returns) {
    SCOPED_TRACE(r.loc.str());
    EXPECT_TRUE(r.blockUniform) << r.reason;
    EXPECT_EQ(r.reason, "");
    EXPECT_NE(r.stmt, nullptr);
  }
  EXPECT_TRUE(kernel.blockers.empty());
}

TEST_F(KernelInventoryTest, ReturnOnThreadIdxIsThreadDependent) {
  const ptb::Kernel &kernel = k("ret_thread");
  ASSERT_EQ(kernel.returns.size(), 1u);
  EXPECT_FALSE(kernel.returns[0].blockUniform);
  EXPECT_EQ(kernel.returns[0].reason, "threadIdx");
  EXPECT_TRUE(isAt(kernel.returns[0].loc, kFile, at("return;\n  p[threadIdx.x] = 0;")));
  // No barrier follows: not a blocker.
  EXPECT_TRUE(kernel.blockers.empty());
}

TEST_F(KernelInventoryTest, ReturnOnLocalFromThreadIdxNamesTheLocal) {
  const ptb::Kernel &kernel = k("ret_local");
  ASSERT_EQ(kernel.returns.size(), 1u);
  EXPECT_FALSE(kernel.returns[0].blockUniform);
  EXPECT_NE(kernel.returns[0].reason.find("tid2"), std::string::npos) << kernel.returns[0].reason;
  EXPECT_TRUE(isAt(kernel.returns[0].loc, kFile, at("return;\n  p[tid2]")));
}

TEST_F(KernelInventoryTest, ReturnOnMemoryReadIsThreadDependentByTheConservativeRule) {
  const ptb::Kernel &kernel = k("ret_memory");
  ASSERT_EQ(kernel.returns.size(), 1u);
  EXPECT_FALSE(kernel.returns[0].blockUniform);
  EXPECT_NE(kernel.returns[0].reason.find("memory read"), std::string::npos) << kernel.returns[0].reason;
}

TEST_F(KernelInventoryTest, ReturnInLoopWithThreadDependentBreak) {
  const ptb::Kernel &kernel = k("ret_loop");
  ASSERT_EQ(kernel.returns.size(), 1u);
  EXPECT_FALSE(kernel.returns[0].blockUniform);
  const std::string &reason = kernel.returns[0].reason;
  EXPECT_NE(reason.find("break"), std::string::npos) << reason;
  EXPECT_NE(reason.find("threadIdx"), std::string::npos) << reason;
  EXPECT_TRUE(isAt(kernel.returns[0].loc, kFile, at("return;\n    p[i] = 0;")));
}

// --- Blockers ----------------------------------------------------------------------------------------

TEST_F(KernelInventoryTest, CooperativeGroupsTileSyncAndGroupIndex) {
  const ptb::Kernel &kernel = k("cg_misc");
  ASSERT_EQ(kernel.barriers.size(), 1u);
  EXPECT_EQ(kernel.barriers[0].kind, "cg::thread_block_tile::sync");
  EXPECT_FALSE(kernel.barriers[0].blockWide);
  EXPECT_TRUE(isAt(kernel.barriers[0].loc, kFile, at("cg::sync(warp)")));
  // thread_block::group_index() reads the hardware block index inside the library: not virtualizable.
  ASSERT_EQ(kernel.blockers.size(), 1u);
  EXPECT_EQ(kernel.blockers[0].construct, "block index through a library");
  EXPECT_TRUE(isAt(kernel.blockers[0].loc, kFile, at("block.group_index()")));
}

TEST_F(KernelInventoryTest, GridSyncBlocks) {
  const ptb::Kernel &kernel = k("grid_sync");
  ASSERT_EQ(kernel.blockers.size(), 1u);
  EXPECT_EQ(kernel.blockers[0].construct, "grid-wide sync");
  EXPECT_NE(kernel.blockers[0].detail.find("grid_group"), std::string::npos) << kernel.blockers[0].detail;
  EXPECT_TRUE(isAt(kernel.blockers[0].loc, kFile, at("cg::this_grid().sync()")));
  EXPECT_TRUE(kernel.blockers[0].sloc.isValid());
}

TEST_F(KernelInventoryTest, SmidInInlineAsmBlocks) {
  const ptb::Kernel &kernel = k("reads_smid");
  ASSERT_EQ(kernel.blockers.size(), 1u);
  EXPECT_EQ(kernel.blockers[0].construct, "%smid read");
  EXPECT_TRUE(isAt(kernel.blockers[0].loc, kFile, at("asm volatile(\"mov.u32")));
}

TEST_F(KernelInventoryTest, ClusterDimsBlocks) {
  // clang 19 does not know CUDA's cluster_dims attribute (host_defines.h expands __cluster_dims__(...) to
  // __attribute__((cluster_dims(...)))) and drops it, silently under -Wno-unknown-attributes: the inventory
  // must still refuse the kernel (docs/ptb-transform.md). Was a bug; fixed in a3ea3c8.
  const ptb::Kernel &kernel = k("clustered");
  ASSERT_EQ(kernel.blockers.size(), 1u);
  EXPECT_EQ(kernel.blockers[0].construct, "thread-block cluster");
  EXPECT_TRUE(isAt(kernel.blockers[0].loc, kFile, at("__cluster_dims__(2, 1, 1)")));
}

// A thread-dependent return that a barrier can follow: the twin parks the threads that return
// (docs/ptb-transform.md, "Parking"); the inventory names the return and the barrier, and the edit.
TEST_F(KernelInventoryTest, ThreadDependentReturnBeforeBarrierParksAndNamesBoth) {
  const ptb::Kernel &kernel = k("ret_then_barrier");
  ASSERT_EQ(kernel.returns.size(), 1u);
  EXPECT_FALSE(kernel.returns[0].blockUniform);
  EXPECT_TRUE(kernel.blockers.empty()) << kernel.blockers.front().detail;
  ASSERT_EQ(kernel.parkedReturns.size(), 1u);
  EXPECT_TRUE(kernel.parks());
  const ptb::Blocker &b = kernel.parkedReturns[0];
  EXPECT_EQ(b.construct, "thread-dependent return before a barrier");
  Pos ret = at("return;\n  __syncthreads();\n  p[threadIdx.x] = 1;");
  Pos bar = at("__syncthreads();\n  p[threadIdx.x] = 1;\n}\n__global__ void barrier_then_ret");
  EXPECT_TRUE(isAt(b.loc, kFile, ret));
  std::string retAt = std::string(kFile) + ":" + std::to_string(ret.line) + ":" + std::to_string(ret.column);
  std::string barAt = std::string(kFile) + ":" + std::to_string(bar.line) + ":" + std::to_string(bar.column);
  EXPECT_NE(b.detail.find(retAt), std::string::npos) << b.detail;
  EXPECT_NE(b.detail.find("__syncthreads at " + barAt), std::string::npos) << b.detail;
  EXPECT_NE(b.detail.find("threadIdx"), std::string::npos) << b.detail;
  // The barrier's name becomes the task barrier's; the return and the end of the body get the exits;
  // nothing else is edited.
  ASSERT_EQ(barrierEdits(kernel).size(), 1u);
  EXPECT_EQ(barrierEdits(kernel)[0].text, "::ptb::task_sync");
  EXPECT_EQ(barrierEdits(kernel)[0].length, strlen("__syncthreads"));
  EXPECT_EQ(exitEdits(kernel), 3u);
  EXPECT_TRUE(kernel.virtualizedCallees.empty());
}

TEST_F(KernelInventoryTest, BarrierBeforeThreadDependentReturnIsNotABlocker) {
  const ptb::Kernel &kernel = k("barrier_then_ret");
  ASSERT_EQ(kernel.returns.size(), 1u);
  EXPECT_FALSE(kernel.returns[0].blockUniform);
  ASSERT_EQ(kernel.barriers.size(), 1u);
  EXPECT_TRUE(kernel.blockers.empty()) << kernel.blockers.front().detail;
  // Nothing to park: the twin is as before, no edit.
  EXPECT_FALSE(kernel.parks());
  EXPECT_TRUE(kernel.taskBarriers.empty());
  EXPECT_TRUE(kernel.taskExits.empty());
}

TEST_F(KernelInventoryTest, BarrierEarlierInTheSameLoopCanFollowTheReturn) {
  const ptb::Kernel &kernel = k("loop_barrier");
  ASSERT_EQ(kernel.returns.size(), 1u);
  EXPECT_FALSE(kernel.returns[0].blockUniform);
  EXPECT_TRUE(kernel.blockers.empty());
  ASSERT_EQ(kernel.parkedReturns.size(), 1u);
  EXPECT_EQ(kernel.parkedReturns[0].construct, "thread-dependent return before a barrier");
  Pos bar = at("__syncthreads();\n    if (threadIdx.x == i) return;");
  EXPECT_NE(kernel.parkedReturns[0].detail.find("__syncthreads at " + std::string(kFile) + ":" +
                                                std::to_string(bar.line) + ":" + std::to_string(bar.column)),
            std::string::npos)
      << kernel.parkedReturns[0].detail;
  EXPECT_EQ(barrierEdits(kernel).size(), 1u);
  EXPECT_EQ(exitEdits(kernel), 3u);
}

// The callees that hold the barrier are cloned, as those that read blockIdx are, and their barriers are
// edited in the clones (callees first).
TEST_F(KernelInventoryTest, BarrierInACalleeAfterThreadDependentReturnParksThroughClones) {
  const ptb::Kernel &kernel = k("ret_then_call_barrier");
  ASSERT_EQ(kernel.barriers.size(), 1u);
  EXPECT_EQ(kernel.barriers[0].via, (Strings{"syncDeeper", "syncHelper"}));
  EXPECT_TRUE(kernel.blockers.empty()) << kernel.blockers.front().detail;
  ASSERT_EQ(kernel.parkedReturns.size(), 1u);
  EXPECT_NE(kernel.parkedReturns[0].detail.find("(in syncDeeper -> syncHelper)"), std::string::npos)
      << kernel.parkedReturns[0].detail;
  EXPECT_TRUE(isAt(kernel.parkedReturns[0].loc, kFile, at("return;\n  syncDeeper();")));
  EXPECT_EQ(names(kernel.virtualizedCallees), (Strings{"syncHelper", "syncDeeper"}));
  ASSERT_EQ(kernel.virtualizedCalls.size(), 2u);
  ASSERT_EQ(barrierEdits(kernel).size(), 1u); // in syncHelper
  EXPECT_EQ(barrierEdits(kernel)[0].text, "::ptb::task_sync");
  // The kernel that reaches the same callees with no thread-dependent return is not affected.
  EXPECT_TRUE(k("barriers_all").virtualizedCallees.empty());
}

TEST_F(KernelInventoryTest, ReturnInThreadDependentSwitch) {
  const ptb::Kernel &kernel = k("ret_switch");
  ASSERT_EQ(kernel.returns.size(), 1u);
  EXPECT_FALSE(kernel.returns[0].blockUniform);
  EXPECT_EQ(kernel.returns[0].reason, "threadIdx");
  EXPECT_TRUE(kernel.blockers.empty());
}

TEST_F(KernelInventoryTest, LocalsWrittenThroughPointersOrConditionalsAreThreadDependent) {
  for (const char *name : {"ptr_alias", "tern_local"}) {
    SCOPED_TRACE(name);
    const ptb::Kernel &kernel = k(name);
    ASSERT_EQ(kernel.returns.size(), 1u);
    EXPECT_FALSE(kernel.returns[0].blockUniform);
    EXPECT_NE(kernel.returns[0].reason.find(name == std::string("ptr_alias") ? "v" : "w"), std::string::npos)
        << kernel.returns[0].reason;
    EXPECT_TRUE(kernel.blockers.empty());
    ASSERT_EQ(kernel.parkedReturns.size(), 1u);
    EXPECT_EQ(kernel.parkedReturns[0].construct, "thread-dependent return before a barrier");
  }
}

TEST_F(KernelInventoryTest, BarrierInALambdaCalledAfterTheReturnParks) {
  // The lambda's text comes before the return, but its call (and so its barrier) comes after. Its barrier
  // is in the kernel's text: edited there, no clone.
  const ptb::Kernel &kernel = k("lambda_sync");
  ASSERT_EQ(kernel.returns.size(), 1u);
  EXPECT_FALSE(kernel.returns[0].blockUniform);
  EXPECT_TRUE(kernel.blockers.empty());
  ASSERT_EQ(kernel.parkedReturns.size(), 1u);
  EXPECT_NE(kernel.parkedReturns[0].detail.find("(in lambda)"), std::string::npos) << kernel.parkedReturns[0].detail;
  EXPECT_TRUE(isAt(kernel.parkedReturns[0].loc, kFile, at("return;\n  sync();")));
  ASSERT_EQ(barrierEdits(kernel).size(), 1u);
  EXPECT_TRUE(kernel.virtualizedCallees.empty());
}

TEST_F(KernelInventoryTest, CallWrittenInAMacroDefinitionCannotBeRedirected) {
  // The macro's text cannot be edited for the twin alone, so the call would read the real blockIdx.
  const ptb::Kernel &kernel = k("macro_call");
  EXPECT_EQ(use(kernel, BV::blockIdx).callChains, (Chains{{"readBlock"}}));
  ASSERT_EQ(kernel.blockers.size(), 1u);
  EXPECT_EQ(kernel.blockers[0].construct, "blockIdx/gridDim read through a call that cannot be redirected");
  EXPECT_NE(kernel.blockers[0].detail.find("readBlock"), std::string::npos) << kernel.blockers[0].detail;
  EXPECT_NE(kernel.blockers[0].detail.find("macro definition"), std::string::npos) << kernel.blockers[0].detail;
  EXPECT_TRUE(kernel.virtualizedCalls.empty());
}

TEST_F(KernelInventoryTest, LambdaWithoutCaptureDefaultReadingBlockIdxBlocks) {
  const ptb::Kernel &kernel = k("lambda_nocap");
  ASSERT_FALSE(kernel.blockers.empty());
  EXPECT_EQ(kernel.blockers[0].construct, "lambda without capture default");
  EXPECT_TRUE(isAt(kernel.blockers[0].loc, kFile, at("[](int *q)")));
  // A return inside the lambda is not a return of the kernel (none here anyway).
  EXPECT_TRUE(kernel.returns.empty());
}

TEST_F(KernelInventoryTest, LambdaCapturingByReferenceReadingBlockIdxIsEligible) {
  // Regression test (fixed bug): a lambda with [&] that reads blockIdx is refused with "blockIdx/gridDim read through a
  // call that cannot be redirected ... operator() ... is a member function": the call f(...) goes to the lambda's
  // operator(), whose body is part of the kernel's own text (copied into K__ptb_task, where [&] captures
  // the virtual blockIdx parameter), so nothing needs redirecting. The blocker for lambda_nocap even tells
  // the user to "give it [&] or [=]", which then is refused too.
  const ptb::Kernel &kernel = k("lambda_ref");
  EXPECT_TRUE(kernel.blockers.empty()) << kernel.blockers.front().construct << ": " << kernel.blockers.front().detail;
  EXPECT_TRUE(use(kernel, BV::blockIdx).direct);
}

// --- Shared memory -----------------------------------------------------------------------------------

TEST_F(KernelInventoryTest, StaticAndDynamicSharedMemory) {
  const ptb::Kernel &kernel = k("shared_static");
  ASSERT_EQ(kernel.shared.size(), 3u);
  const ptb::SharedVariable &a = kernel.shared[0], &b = kernel.shared[1], &raw = kernel.shared[2];
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.type, "float[256]");
  EXPECT_FALSE(a.dynamic);
  ASSERT_TRUE(a.bytes.has_value());
  EXPECT_EQ(*a.bytes, 1024u);
  EXPECT_EQ(a.function, "shared_static");
  EXPECT_TRUE(isAt(a.loc, kFile, at("a[256]")));
  EXPECT_EQ(b.name, "b");
  EXPECT_EQ(b.type, "double[4][8]");
  ASSERT_TRUE(b.bytes.has_value());
  EXPECT_EQ(*b.bytes, 256u);
  EXPECT_EQ(raw.name, "raw");
  EXPECT_TRUE(raw.dynamic);
  EXPECT_FALSE(raw.bytes.has_value());
  EXPECT_TRUE(isAt(raw.loc, kFile, at("raw[];")));
}

TEST_F(KernelInventoryTest, TemplateDependentSharedSizeIsUnknown) {
  const ptb::Kernel &kernel = k("shared_tpl");
  ASSERT_EQ(kernel.shared.size(), 3u);
  EXPECT_EQ(kernel.shared[0].name, "tile");
  EXPECT_FALSE(kernel.shared[0].dynamic);
  EXPECT_FALSE(kernel.shared[0].bytes.has_value());
  EXPECT_EQ(kernel.shared[1].name, "counts");
  ASSERT_TRUE(kernel.shared[1].bytes.has_value());
  EXPECT_EQ(*kernel.shared[1].bytes, 128u);
  EXPECT_EQ(kernel.shared[2].name, "dyn");
  EXPECT_TRUE(kernel.shared[2].dynamic);
  // Variables are listed once, from the pattern, not once per instantiation.
  EXPECT_EQ(kernel.instantiations, (Strings{"shared_tpl<64>"}));
}

// --- Templates and parameters ------------------------------------------------------------------------

TEST_F(KernelInventoryTest, TemplateParametersInstantiationsAndParameters) {
  const ptb::Kernel &kernel = k("saxpy_t");
  ASSERT_NE(kernel.templ, nullptr);
  EXPECT_EQ(kernel.decl, kernel.templ->getTemplatedDecl());
  EXPECT_EQ(kernel.templateParams, (Strings{"typename T", "int N = 4"}));
  EXPECT_EQ(kernel.instantiations, (Strings{"saxpy_t<double, 4>", "saxpy_t<float, 4>"}));
  ASSERT_EQ(kernel.params.size(), 4u);
  EXPECT_EQ(kernel.params[0].name, "n");
  EXPECT_EQ(kernel.params[0].type, "int");
  EXPECT_EQ(kernel.params[1].name, "a");
  EXPECT_EQ(kernel.params[1].type, "T");
  EXPECT_EQ(kernel.params[2].name, "x");
  EXPECT_EQ(kernel.params[2].type, "const T *__restrict");
  EXPECT_EQ(kernel.params[3].name, "y");
  EXPECT_EQ(kernel.params[3].type, "T *");
  for (auto &p : kernel.params) EXPECT_FALSE(p.pack) << p.name;
  // A plain kernel has none of it.
  const ptb::Kernel &plain = k("direct_use");
  EXPECT_EQ(plain.templ, nullptr);
  EXPECT_TRUE(plain.templateParams.empty());
  EXPECT_TRUE(plain.instantiations.empty());
}

TEST_F(KernelInventoryTest, KernelsInNamespacesHaveQualifiedNames) {
  const ptb::Kernel &nk = k("ns::nk");
  EXPECT_EQ(nk.name, "nk");
  EXPECT_EQ(nk.qualifiedName, "ns::nk");
  const ptb::Kernel &nt = k("ns::nt");
  EXPECT_EQ(nt.name, "nt");
  EXPECT_EQ(nt.instantiations, (Strings{"ns::nt<float>"}));
}

// --- Launch sites ------------------------------------------------------------------------------------

TEST_F(KernelInventoryTest, LaunchWithExplicitAndDeducedTemplateArguments) {
  const ptb::Kernel &kernel = k("saxpy_t");
  ASSERT_EQ(kernel.launches.size(), 2u);
  const ptb::LaunchSite &expl = kernel.launches[0], &deduced = kernel.launches[1];
  EXPECT_EQ(expl.form, ptb::LaunchSite::Form::TripleChevron);
  EXPECT_EQ(expl.formName, "<<<>>>");
  EXPECT_EQ(expl.templateArgs, "float");
  EXPECT_FALSE(expl.inMacro);
  EXPECT_EQ(expl.macro, "");
  EXPECT_FALSE(expl.inMacroBody);
  EXPECT_EQ(expl.enclosingFunction, "host");
  EXPECT_TRUE(isAt(expl.loc, kFile, at("saxpy_t<float><<<")));
  EXPECT_NE(expl.expr, nullptr);
  EXPECT_EQ(deduced.templateArgs, "");
  EXPECT_TRUE(isAt(deduced.loc, kFile, at("saxpy_t<<<dim3(2)")));
}

TEST_F(KernelInventoryTest, LaunchesInMacroArgumentAndInMacroDefinition) {
  const ptb::Kernel &kernel = k("direct_use");
  ASSERT_EQ(kernel.launches.size(), 2u);
  const ptb::LaunchSite &arg = kernel.launches[0], &body = kernel.launches[1];
  EXPECT_TRUE(arg.inMacro);
  EXPECT_EQ(arg.macro, "RUN");
  EXPECT_FALSE(arg.inMacroBody);
  // Located where it is written, inside the argument.
  EXPECT_TRUE(isAt(arg.loc, kFile, at("direct_use<<<1, 32>>>")));
  EXPECT_TRUE(body.inMacro);
  EXPECT_EQ(body.macro, "LAUNCH_IN_BODY");
  EXPECT_TRUE(body.inMacroBody);
  // Located at the macro's use in the function.
  EXPECT_TRUE(isAt(body.loc, kFile, at("LAUNCH_IN_BODY(ip)")));
  EXPECT_EQ(body.enclosingFunction, "host");
}

TEST_F(KernelInventoryTest, CudaLaunchKernelForm) {
  const ptb::Kernel &kernel = k("chain_one");
  ASSERT_EQ(kernel.launches.size(), 1u);
  EXPECT_EQ(kernel.launches[0].form, ptb::LaunchSite::Form::CudaLaunchKernel);
  EXPECT_EQ(kernel.launches[0].formName, "cudaLaunchKernel");
  EXPECT_FALSE(kernel.launches[0].inMacro);
  EXPECT_TRUE(isAt(kernel.launches[0].loc, kFile, at("cudaLaunchKernel((const void *)chain_one")));
}

TEST_F(KernelInventoryTest, NamespaceQualifiedLaunches) {
  const ptb::Kernel &nk = k("ns::nk");
  ASSERT_EQ(nk.launches.size(), 1u);
  EXPECT_EQ(nk.launches[0].templateArgs, "");
  EXPECT_TRUE(isAt(nk.launches[0].loc, kFile, at("ns::nk<<<")));
  const ptb::Kernel &nt = k("ns::nt");
  ASSERT_EQ(nt.launches.size(), 1u);
  EXPECT_EQ(nt.launches[0].templateArgs, "float");
  EXPECT_TRUE(isAt(nt.launches[0].loc, kFile, at("ns::nt<float><<<")));
}

TEST_F(KernelInventoryTest, LaunchOfKernelNotDefinedHereIsAnOtherLaunch) {
  ASSERT_EQ(tu->inv.otherLaunches.size(), 1u);
  EXPECT_TRUE(isAt(tu->inv.otherLaunches[0].loc, kFile, at("declared_only<<<")));
  EXPECT_EQ(tu->inv.otherLaunches[0].enclosingFunction, "host");
}

TEST_F(KernelInventoryTest, KernelsWithoutLaunchesHaveNone) {
  EXPECT_TRUE(k("macro_use").launches.empty());
  EXPECT_TRUE(k("chain_two").launches.empty());
}

// --- What the rewrite clones -------------------------------------------------------------------------

TEST_F(KernelInventoryTest, VirtualizedCalleesAndCallsTwoDeep) {
  const ptb::Kernel &kernel = k("chain_two");
  // Callees before callers.
  EXPECT_EQ(names(kernel.virtualizedCallees), (Strings{"readBlock", "viaOne"}));
  ASSERT_EQ(kernel.virtualizedCalls.size(), 2u);
  const ptb::VirtualizedCall *fromKernel = nullptr, *fromViaOne = nullptr;
  for (auto &c : kernel.virtualizedCalls) {
    ASSERT_NE(c.callee, nullptr);
    ASSERT_NE(c.caller, nullptr);
    if (c.caller == kernel.decl)
      fromKernel = &c;
    else if (c.caller->getNameAsString() == "viaOne")
      fromViaOne = &c;
  }
  ASSERT_NE(fromKernel, nullptr);
  ASSERT_NE(fromViaOne, nullptr);
  EXPECT_EQ(fromKernel->callee->getNameAsString(), "viaOne");
  EXPECT_EQ(fromKernel->site.form, ptb::CloneCallSite::Form::Named);
  EXPECT_FALSE(fromKernel->site.args);
  EXPECT_EQ(fromViaOne->callee->getNameAsString(), "readBlock");
  EXPECT_FALSE(fromViaOne->site.args);
  // The name token and the '(' of the call, as written.
  auto &sm = tu->ast->getSourceManager();
  Pos name = at("viaOne(); }");
  EXPECT_EQ(sm.getSpellingLineNumber(fromKernel->nameLoc), name.line);
  EXPECT_EQ(sm.getSpellingColumnNumber(fromKernel->nameLoc), name.column);
  EXPECT_EQ(sm.getSpellingColumnNumber(fromKernel->site.open), name.column + 6);
}

TEST_F(KernelInventoryTest, VirtualizedTemplateCalleeIsThePattern) {
  const ptb::Kernel &kernel = k("template_chain");
  ASSERT_EQ(kernel.virtualizedCallees.size(), 1u);
  const clang::FunctionDecl *callee = kernel.virtualizedCallees[0];
  EXPECT_EQ(callee->getNameAsString(), "scaleByBlock");
  // The pattern (what the source says), not the instantiation scaleByBlock<float>.
  EXPECT_NE(callee->getDescribedFunctionTemplate(), nullptr);
  ASSERT_EQ(kernel.virtualizedCalls.size(), 1u);
  EXPECT_TRUE(kernel.virtualizedCalls[0].site.args);
  EXPECT_EQ(kernel.virtualizedCalls[0].caller, kernel.decl);
}

TEST_F(KernelInventoryTest, NothingToCloneForThreadOnlyOrBarrierCallees) {
  EXPECT_TRUE(k("barriers_all").virtualizedCallees.empty());
  EXPECT_TRUE(k("macro_use").virtualizedCallees.empty());
  EXPECT_TRUE(k("direct_use").virtualizedCallees.empty());
  const ptb::Kernel &one = k("chain_one");
  EXPECT_EQ(names(one.virtualizedCallees), (Strings{"readBlock"}));
  ASSERT_EQ(one.virtualizedCalls.size(), 1u);
}

// --- Dynamic parallelism (a separate, small parse: a parse failure here must not hide the rest) ---------

TEST(KernelInventoryDynamicParallelism, BlocksTheParentOnly) {
  // Parsed as the tool parses it, without -rdc/-fgpu-rdc: the tool must still list both kernels and refuse
  // the parent, not fail the file (docs/ptb-transform.md: the run succeeds for the other kernels).
  PTB_REQUIRE_CUDA();
  const std::string src = "__global__ void dp_child(int *p) { p[threadIdx.x] = 0; }\n"
                          "__global__ void dp_parent(int *p) { dp_child<<<1, 32>>>(p); }\n"
                          "void host(int *p) { dp_child<<<2, 32>>>(p); }\n";
  auto tu = parseCuda(src, "dp.cu");
  ASSERT_TRUE(tu->ok) << tu->diags->all();
  // clang 19 cannot parse a device-side launch on the device side; the host side is the fallback.
  EXPECT_EQ(tu->side, ptb::ParseSide::Host);
  EXPECT_FALSE(tu->deviceDiags.empty());
  const ptb::Kernel *parent = tu->kernel("dp_parent");
  const ptb::Kernel *child = tu->kernel("dp_child");
  ASSERT_NE(parent, nullptr);
  ASSERT_NE(child, nullptr);
  ASSERT_EQ(parent->blockers.size(), 1u);
  EXPECT_EQ(parent->blockers[0].construct, "dynamic parallelism");
  EXPECT_TRUE(isAt(parent->blockers[0].loc, "dp.cu", posOf(src, "dp_child<<<1, 32>>>")));
  EXPECT_TRUE(child->blockers.empty());
  // The device-side launch is a launch of the child, made from the parent's device code.
  ASSERT_EQ(child->launches.size(), 2u);
  EXPECT_EQ(child->launches[0].enclosingFunction, "dp_parent");
  EXPECT_EQ(child->launches[0].formName, "<<<>>>");
  EXPECT_TRUE(child->launches[0].fromDevice);
  EXPECT_EQ(child->launches[1].enclosingFunction, "host");
  EXPECT_FALSE(child->launches[1].fromDevice);
  // --list-kernels says so.
  std::string text = ptb::formatInventoryText({tu->inv});
  EXPECT_NE(text.find("  launch: dp.cu:2:37 <<<>>> in dp_parent (device code)\n"), std::string::npos) << text;
}

// --- Locals written through an alias (a separate, small parse) -------------------------------------------

TEST(KernelInventoryAliases, ReturnOnLocalWrittenThroughAnAliasIsThreadDependent) {
  // Regression test (fixed bug): UniformityAnalysis misses writes to a local through a reference: `int &r = v; r =
  // threadIdx.x;` marks r varying but not v, and in a template kernel `setTid(v)` (a dependent call, no direct callee
  // in the pattern) is not seen as passing v by non-const reference. Both returns below are classified
  // block-uniform, so the return-before-barrier check does not fire and the rewrite emits twins that can
  // hang (returned threads wait at the worker's next-task barrier while the rest wait at __syncthreads).
  // (Writes through a pointer, `int *q = &v; *q = threadIdx.x;`, are handled.) Reproducer: the source below
  // with `ptb-transform --list-kernels`: "return at ...: block-uniform" and no "blocks PTB" line.
  PTB_REQUIRE_CUDA();
  auto tu = parseCuda("template <typename T> __device__ void setTid(T &x) { x = threadIdx.x; }\n"
                      "__global__ void alias_ref(int *p) {\n"
                      "  int v = 0;\n"
                      "  int &r = v;\n"
                      "  r = threadIdx.x;\n"
                      "  if (v > 3) return;\n"
                      "  __syncthreads();\n"
                      "  p[0] = v;\n"
                      "}\n"
                      "template <typename T> __global__ void dep_ref(T *p) {\n"
                      "  T v = 0;\n"
                      "  setTid(v);\n"
                      "  if (v > T(3)) return;\n"
                      "  __syncthreads();\n"
                      "  p[0] = v;\n"
                      "}\n"
                      "void h(float *f) { dep_ref<<<1, 1>>>(f); }\n",
                      "alias.cu");
  ASSERT_TRUE(tu->ok) << tu->diags->all();
  for (const char *name : {"alias_ref", "dep_ref"}) {
    SCOPED_TRACE(name);
    const ptb::Kernel *kernel = tu->kernel(name);
    ASSERT_NE(kernel, nullptr);
    ASSERT_EQ(kernel->returns.size(), 1u);
    EXPECT_FALSE(kernel->returns[0].blockUniform);
    EXPECT_TRUE(kernel->blockers.empty());
    ASSERT_EQ(kernel->parkedReturns.size(), 1u);
    EXPECT_EQ(kernel->parkedReturns[0].construct, "thread-dependent return before a barrier");
  }
}

// --- Launches in member functions (a separate, small parse) ----------------------------------------------

TEST(KernelInventoryMembers, LaunchInMemberFunctionsNamesTheFunctionAndKnowsDeviceCode) {
  // Regression test (fixed bug): LaunchFinder overrides only TraverseFunctionDecl, so a launch in a member function (a
  // CXXMethodDecl) gets no enclosing function ("function": "" in the JSON) and fromDevice stays false even
  // in a __device__ member function; the rewrite then turns that device-side launch into a call of the
  // host launcher (`__device__ void spawn() { k__ptb_launch(...); }`), which does not compile.
  // Reproducer: the source below with `ptb-transform --list-kernels` / `-o -`.
  PTB_REQUIRE_CUDA();
  auto tu = parseCuda("__global__ void k(int *p) { p[blockIdx.x] = 1; }\n"
                      "struct Runner {\n"
                      "  int *p;\n"
                      "  void run() { k<<<1, 1>>>(p); }\n"
                      "  __device__ void spawn() { k<<<1, 1>>>(p); }\n"
                      "};\n",
                      "members.cu");
  ASSERT_TRUE(tu->ok) << tu->diags->all();
  const ptb::Kernel *kernel = tu->kernel("k");
  ASSERT_NE(kernel, nullptr);
  ASSERT_EQ(kernel->launches.size(), 2u);
  EXPECT_EQ(kernel->launches[0].enclosingFunction, "Runner::run");
  EXPECT_FALSE(kernel->launches[0].fromDevice);
  EXPECT_EQ(kernel->launches[1].enclosingFunction, "Runner::spawn");
  EXPECT_TRUE(kernel->launches[1].fromDevice);
}

// --- Parking: what can be rewritten, what is refused (a separate, small parse) -----------------------------
// docs/ptb-transform.md, "Parking".

const char *const kParkFile = "park.cu";
const std::string kParkSource = R"cu(#include <cooperative_groups.h>
namespace cg = cooperative_groups;
#define SYNC __syncthreads()
#define SYNC_CALL() __syncthreads()
#define SYNC_NAME __syncthreads
#define SYNC_BODY do { __syncthreads(); } while (0)
__device__ void f_sync() { __syncthreads(); }
__device__ void g_twice() { f_sync(); }
struct Syncer { __device__ void sync() const { __syncthreads(); } };
__device__ void warp_helper(float *p) { p[threadIdx.x] = __shfl_down_sync(0xffffffffu, p[threadIdx.x], 1); }

__global__ void forms(float *p, int n) {
  if (threadIdx.x >= n) return;
  __syncthreads();
  int c = __syncthreads_count(p[threadIdx.x] > 0);
  c += __syncthreads_and(c) + __syncthreads_or(c);
  __barrier_sync(0);
  cg::thread_block b = cg::this_thread_block();
  b.sync();
  cg::this_thread_block().sync();
  cg::sync(b);
  SYNC;
  SYNC_CALL();
  SYNC_NAME();
  p[threadIdx.x] = c;
}
// g_twice is called before the return and after it: the second call must count.
__global__ void second_call(float *p, int n) {
  g_twice();
  if (threadIdx.x >= n) return;
  g_twice();
  p[threadIdx.x] = 1;
}
__global__ void in_macro_body(float *p, int n) {
  if (threadIdx.x >= n) return;
  SYNC_BODY;
}
__global__ void member_call(float *p, int n) {
  Syncer s;
  if (threadIdx.x >= n) return;
  s.sync();
}
__global__ void asm_barrier(float *p, int n) {
  if (threadIdx.x >= n) return;
  asm volatile("bar.sync 0;");
}
__global__ void named_barrier(float *p, int n) {
  if (threadIdx.x >= n) return;
  __barrier_sync(1);
}
__global__ void generic_group(float *p, int n) {
  cg::thread_group g = cg::this_thread_block();
  if (threadIdx.x >= n) return;
  g.sync();
}
__global__ void warp_op_after(float *p, int n) {
  if (threadIdx.x >= n) return;
  __syncthreads();
  warp_helper(p);
}
__global__ void syncwarp_after(float *p, int n) {
  if (threadIdx.x >= n) return;
  __syncthreads();
  __syncwarp();
}
// Warp-level operations before the return are fine; a barrier the tool cannot rewrite before it too.
__global__ void warp_op_before(float *p, int n) {
  warp_helper(p);
  asm volatile("bar.sync 0;");
  if (threadIdx.x >= n) return;
  __syncthreads();
}
)cu";

class KernelInventoryParking : public ::testing::Test {
protected:
  static void SetUpTestSuite() { tu = cudaSetup().ok ? parseCuda(kParkSource, kParkFile).release() : nullptr; }
  void SetUp() override {
    PTB_REQUIRE_CUDA();
    ASSERT_NE(tu, nullptr);
    ASSERT_TRUE(tu->ok) << tu->diags->all();
  }
  const ptb::Kernel &k(const std::string &name) {
    const ptb::Kernel *kernel = tu->kernel(name);
    if (!kernel) {
      ADD_FAILURE() << "no kernel " << name;
      static ptb::Kernel none;
      return none;
    }
    return *kernel;
  }
  // The kernel's text with its task-barrier edits applied (as the rewrite applies them to the copy).
  std::string edited(const ptb::Kernel &kernel) {
    const clang::SourceManager &sm = tu->ast->getSourceManager();
    unsigned b = sm.getFileOffset(sm.getExpansionLoc(kernel.decl->getBody()->getBeginLoc()));
    unsigned e = sm.getFileOffset(sm.getExpansionLoc(kernel.decl->getBody()->getEndLoc())) + 1;
    std::string text = kParkSource.substr(b, e - b);
    std::vector<ptb::rewrite::TaskBarrierEdit> edits = ptb::rewrite::taskEdits(kernel, sm, tu->ast->getLangOpts());
    std::stable_sort(edits.begin(), edits.end(), [&](auto &x, auto &y) {
      unsigned ox = sm.getFileOffset(x.at), oy = sm.getFileOffset(y.at);
      return ox != oy ? ox > oy : x.length > y.length;
    });
    for (auto &ed : edits) {
      unsigned o = sm.getFileOffset(ed.at);
      if (o >= b && o + ed.length <= e) text.replace(o - b, ed.length, ed.text);
    }
    return text;
  }
  std::string refusal(const ptb::Kernel &kernel) {
    EXPECT_FALSE(kernel.parks());
    if (kernel.blockers.empty()) {
      ADD_FAILURE() << kernel.name << " is not refused";
      return "";
    }
    EXPECT_EQ(kernel.blockers[0].construct, "thread-dependent return before a barrier");
    return kernel.blockers[0].detail;
  }
  static const ParsedTU *tu;
};
const ParsedTU *KernelInventoryParking::tu = nullptr;

TEST_F(KernelInventoryParking, EveryBlockBarrierFormBecomesATaskBarrier) {
  const ptb::Kernel &kernel = k("forms");
  EXPECT_TRUE(kernel.blockers.empty()) << kernel.blockers.front().detail;
  ASSERT_TRUE(kernel.parks());
  std::string text = edited(kernel);
  for (const char *want :
       {"  ::ptb::task_sync();\n", "int c = ::ptb::task_sync_count(p[threadIdx.x] > 0);",
        "c += ::ptb::task_sync_and(c) + ::ptb::task_sync_or(c);", "::ptb::task_barrier_sync(0);",
        "::ptb::task_group_sync(b);\n  ::ptb::task_group_sync(cg::this_thread_block());\n"
        "  ::ptb::task_group_sync(b);\n",
        "  ::ptb::task_sync();\n  ::ptb::task_sync();\n  ::ptb::task_sync();\n  p[threadIdx.x] = c;"})
    EXPECT_NE(text.find(want), std::string::npos) << "missing '" << want << "' in:\n" << text;
  EXPECT_EQ(text.find("__syncthreads"), std::string::npos) << text;
  EXPECT_EQ(text.find("__barrier_sync"), std::string::npos) << text;
  EXPECT_EQ(text.find(".sync()"), std::string::npos) << text;
}

TEST_F(KernelInventoryParking, ABarrierReachedThroughASecondCallOfTheSameFunctionCounts) {
  const ptb::Kernel &kernel = k("second_call");
  ASSERT_TRUE(kernel.parks()) << (kernel.blockers.empty() ? "" : kernel.blockers.front().detail);
  EXPECT_NE(kernel.parkedReturns[0].detail.find("(in g_twice -> f_sync)"), std::string::npos)
      << kernel.parkedReturns[0].detail;
  // Both calls go to the clone (the one before the return too: every barrier the tool can rewrite is).
  EXPECT_EQ(kernel.virtualizedCalls.size(), 3u); // g_twice twice, f_sync in g_twice's clone
}

TEST_F(KernelInventoryParking, BarriersThatCannotBeRewrittenAreRefusedWithTheReason) {
  struct Case {
    const char *kernel, *kind, *why;
  };
  for (const Case &c : {Case{"in_macro_body", "__syncthreads", "inside the definition of macro SYNC_BODY"},
                        Case{"member_call", "__syncthreads", "Syncer::sync cannot be sent to a clone"},
                        Case{"asm_barrier", "bar.sync (inline asm)", "it is inline asm"},
                        Case{"named_barrier", "__barrier_sync", "named barrier"},
                        Case{"generic_group", "cg::thread_group::sync", "a generic thread_group"}}) {
    SCOPED_TRACE(c.kernel);
    std::string why = refusal(k(c.kernel));
    EXPECT_NE(why.find(std::string("can be followed by ") + c.kind), std::string::npos) << why;
    EXPECT_NE(why.find(c.why), std::string::npos) << why;
    EXPECT_TRUE(k(c.kernel).taskBarriers.empty());
    EXPECT_TRUE(k(c.kernel).taskExits.empty());
  }
}

TEST_F(KernelInventoryParking, WarpLevelOperationsAfterTheReturnAreRefused) {
  std::string why = refusal(k("warp_op_after"));
  EXPECT_NE(why.find("can be followed by __shfl_down_sync"), std::string::npos) << why;
  EXPECT_NE(why.find("(in warp_helper)"), std::string::npos) << why;
  EXPECT_NE(why.find("warp-level operation"), std::string::npos) << why;
  why = refusal(k("syncwarp_after"));
  EXPECT_NE(why.find("can be followed by __syncwarp"), std::string::npos) << why;
}

TEST_F(KernelInventoryParking, WhatComesBeforeEveryReturnStaysAsItIs) {
  const ptb::Kernel &kernel = k("warp_op_before");
  EXPECT_TRUE(kernel.blockers.empty()) << kernel.blockers.front().detail;
  ASSERT_TRUE(kernel.parks());
  std::string text = edited(kernel);
  EXPECT_NE(text.find("warp_helper(p);\n  asm volatile(\"bar.sync 0;\");"), std::string::npos) << text;
  EXPECT_NE(text.find("{ ::ptb::task_exit(); return; }\n  ::ptb::task_sync();"), std::string::npos) << text;
  EXPECT_TRUE(kernel.virtualizedCallees.empty());
}

} // namespace

// Used by InventoryFormatTest.cpp too: one parse of the shared source for the whole binary.
namespace ptbtest {
const std::string &inventorySource() { return kSource; }
const char *inventoryFileName() { return kFile; }
const ParsedTU *inventoryTU() {
  // Parsed on first use and deliberately never freed: its AST must outlive every test, and tearing an
  // ASTUnit down during static destruction buys nothing.
  static const ParsedTU *tu = cudaSetup().ok ? parseCuda(kSource, kFile).release() : nullptr;
  return tu;
}
} // namespace ptbtest

// The CUDA front end (lib/Frontend/CudaFrontend.h): nvcc flag translation, finding CUDA, the parse
// arguments. None of these tests needs a CUDA installation: they use fake toolkit roots.
#include "CudaTestSupport.h"

#include "CudaFrontend.h"
#include "NvccOptions.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <set>

namespace {

using Strings = std::vector<std::string>;

// A temporary directory removed at the end of the test.
class TempDir {
public:
  TempDir() {
    llvm::SmallString<128> p;
    if (llvm::sys::fs::createUniqueDirectory("ptb-unit", p)) ADD_FAILURE() << "cannot create a temp dir";
    path = std::string(p);
  }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
  std::string file(const std::string &rel, const std::string &contents) const {
    llvm::SmallString<256> p(path);
    llvm::sys::path::append(p, rel);
    llvm::sys::fs::create_directories(llvm::sys::path::parent_path(p));
    std::error_code ec;
    llvm::raw_fd_ostream os(p, ec);
    if (ec) ADD_FAILURE() << "cannot write " << std::string(p);
    os << contents;
    return std::string(p);
  }
  std::string path;
};

// Sets an environment variable for the scope, restoring the old value.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const std::string &value) : name(name) {
    if (const char *old = std::getenv(name)) saved = old, had = true;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (had)
      setenv(name, saved.c_str(), 1);
    else
      unsetenv(name);
  }

private:
  const char *name;
  std::string saved;
  bool had = false;
};

// --- nvccOptions ---------------------------------------------------------------------------------------

// One row per spelling: a second row would never be found (findNvccOption answers the first).
TEST(NvccOptions, EachSpellingOnce) {
  std::set<std::string> seen;
  for (const ptb::NvccOption &o : ptb::nvccOptions())
    EXPECT_TRUE(seen.insert(o.spelling.str()).second) << o.spelling.str();
}

// Both readers of one row: ptb-nvcc reads the value, the front end drops both.
TEST(NvccOptions, OneRowServesBothReaders) {
  const ptb::NvccOption *odir = ptb::findNvccOption("-odir");
  ASSERT_NE(odir, nullptr);
  EXPECT_TRUE(odir->takesValue);
  EXPECT_EQ(odir->forClang, ptb::ForClang::DropWithValue);
  EXPECT_EQ(ptb::translateNvccArgs({"-odir", "out", "a.cu"}), (Strings{"a.cu"}));
  EXPECT_EQ(ptb::findNvccOption("a.cu"), nullptr);
}

// nvcc's own options that take a value (nvcc 13's --help), written with the value apart: ptb-nvcc reads the
// value as the option's, not as an input, and clang gets neither (each used to reach clang, which refused it).
TEST(NvccOptions, NvccOnlyValuesNeverReachClang) {
  for (const char *spelling :
       {"--Ofast-compile", "-Ofc", "--fatbin-options", "-jtd", "--jump-table-density", "-jump-table-density",
        "-frandom-seed", "--qpp-config", "-qpp-config", "-e", "--entries"}) {
    const ptb::NvccOption *o = ptb::findNvccOption(spelling);
    ASSERT_NE(o, nullptr) << spelling;
    EXPECT_TRUE(o->takesValue) << spelling;
    EXPECT_EQ(ptb::translateNvccArgs({spelling, "v", "a.cu"}), (Strings{"a.cu"})) << spelling;
  }
  EXPECT_EQ(ptb::translateNvccArgs({"-Ofc=max", "--fatbin-options=-compress-all", "-jtd=5", "a.cu"}),
            (Strings{"a.cu"}));
}

// --- translateNvccArgs ---------------------------------------------------------------------------------

TEST(TranslateNvccArgs, RealisticNvccCommandLine) {
  Strings nvcc = {"-gencode",
                  "arch=compute_90,code=sm_90",
                  "-rdc=true",
                  "-Xcompiler",
                  "-fPIC,-Wall",
                  "--expt-relaxed-constexpr",
                  "-forward-unknown-to-host-compiler",
                  "-O3",
                  "-I/opt/include",
                  "-I",
                  "/opt/other",
                  "-DFOO=1",
                  "-D",
                  "BAR",
                  "--std=c++17",
                  "-x",
                  "cu",
                  "-ccbin",
                  "g++",
                  "-lineinfo",
                  "-c",
                  "kernel.cu",
                  "-o",
                  "kernel.o"};
  Strings want = {"-fPIC", "-Wall",      "-O3", "-I/opt/include", "-I", "/opt/other", "-DFOO=1", "-D",
                  "BAR",   "-std=c++17", "-c",  "kernel.cu",      "-o", "kernel.o"};
  EXPECT_EQ(ptb::translateNvccArgs(nvcc), want);
}

TEST(TranslateNvccArgs, ArchitectureAndDeviceOnlyFlagsAreDropped) {
  Strings nvcc = {"-arch=sm_90",
                  "-arch",
                  "sm_80",
                  "--generate-code=arch=compute_80,code=sm_80",
                  "-code",
                  "sm_80",
                  "--gpu-architecture",
                  "sm_90",
                  "-Xptxas",
                  "-v",
                  "-maxrregcount",
                  "64",
                  "--use_fast_math",
                  "-G",
                  "--extended-lambda",
                  "--expt-extended-lambda",
                  "-dc",
                  "--keep",
                  "-res-usage",
                  "--default-stream",
                  "per-thread",
                  "-Wno-deprecated-gpu-targets",
                  "-cudart=shared",
                  "-t",
                  "4",
                  "a.cu"};
  EXPECT_EQ(ptb::translateNvccArgs(nvcc), (Strings{"a.cu"}));
}

TEST(TranslateNvccArgs, HostCompilerOptionListsAreUnpacked) {
  EXPECT_EQ(ptb::translateNvccArgs(
                {"-Xcompiler=-O2,-g", "--compiler-options", "-fno-strict-aliasing,-pthread", "-Xcompiler", "-fopenmp"}),
            (Strings{"-O2", "-g", "-fno-strict-aliasing", "-pthread", "-fopenmp"}));
  // A trailing -Xcompiler without a value is dropped, not crashed on.
  EXPECT_EQ(ptb::translateNvccArgs({"a.cu", "-Xcompiler"}), (Strings{"a.cu"}));
}

TEST(TranslateNvccArgs, LongSpellingsBecomeClangFlags) {
  EXPECT_EQ(ptb::translateNvccArgs({"--compile", "--output-file", "a.o", "--include-path", "/inc", "--define-macro",
                                    "X=1", "--std=c++20"}),
            (Strings{"-c", "-o", "a.o", "-I", "/inc", "-D", "X=1", "-std=c++20"}));
}

TEST(TranslateNvccArgs, ClangFlagsPassThrough) {
  Strings clang = {"-isystem", "/sys", "-include", "pre.h", "-UNDEBUG", "-std=c++17",     "-Wextra",
                   "-x",       "cuda", "-O2",      "-Os",   "-g",       "-fno-exceptions"};
  EXPECT_EQ(ptb::translateNvccArgs(clang), clang);
  EXPECT_EQ(ptb::translateNvccArgs({}), Strings{});
}

TEST(TranslateNvccArgs, OfastCompileIsDropped) {
  // Regression test (fixed bug): translateNvccArgs keeps nvcc's -Ofast-compile=<level> (its own comment says it is
  // dropped, but the test `a[2] != 'f'` that protects -Ofast lets it through). clang reads it as -Ofast, which defines
  // __FAST_MATH__ and changes the parse. Reproducer:
  //   translateNvccArgs({"-Ofast-compile=max", "-O2"}) == {"-Ofast-compile=max", "-O2"}, expected {"-O2"}.
  EXPECT_EQ(ptb::translateNvccArgs({"-Ofast-compile=max", "-O2"}), (Strings{"-O2"}));
  EXPECT_EQ(ptb::translateNvccArgs({"--Ofast-compile=max", "--cudart=static", "-arch=compute_90", "-O2"}),
            (Strings{"-O2"}));
}

TEST(TranslateNvccArgs, SeparateValuesOfNvccOnlyFlagsAreDropped) {
  // Regression test (issue 38): `-Werror all-warnings` kept -Werror (clang's, with no value) and left
  // "all-warnings" as an input file; --keep-device-functions and the value of `--keep-dir DIR` got to clang.
  EXPECT_EQ(ptb::translateNvccArgs({"-Werror",
                                    "all-warnings",
                                    "--Werror",
                                    "cross-execution-space-call,reorder",
                                    "-Werror=all-warnings",
                                    "--keep-device-functions",
                                    "-keep-device-functions",
                                    "--keep-dir",
                                    "tmp",
                                    "-keep-dir=tmp",
                                    "-odir",
                                    "out",
                                    "--ftz",
                                    "true",
                                    "-prec-div=false",
                                    "--diag-error",
                                    "20012",
                                    "-diag-warn=177",
                                    "--cudadevrt",
                                    "static",
                                    "--optimize",
                                    "3",
                                    "-Xarchive",
                                    "-x",
                                    "--options-file",
                                    "f.txt",
                                    "-M",
                                    "a.cu"}),
            (Strings{"a.cu"}));
  // GCC's -Werror alone (a host command line) and -Werror=<warning> stay clang's.
  EXPECT_EQ(ptb::translateNvccArgs({"-Werror", "a.cu", "-Werror=unused-variable"}),
            (Strings{"-Werror", "a.cu", "-Werror=unused-variable"}));
  // Long spellings with values become clang's flags.
  EXPECT_EQ(ptb::translateNvccArgs({"--system-include", "/s", "--pre-include=p.h", "--undefine-macro", "X",
                                    "--include-path=/a,/b", "-ftemplate-depth", "2000"}),
            (Strings{"-isystem", "/s", "-include", "p.h", "-U", "X", "-I", "/a", "-I", "/b", "-ftemplate-depth=2000"}));
}

TEST(TranslateNvccArgs, HostFlagsClangDoesNotKnowAreDropped) {
  // Regression test (issue 38): GCC-only flags given by -Xcompiler stopped the parse ("unknown argument").
  EXPECT_EQ(ptb::translateNvccArgs({"-Xcompiler", "-fno-gnu-unique,-fPIC", "-Xcompiler=-fconcepts-diagnostics-depth=3",
                                    "-Xcompiler", "-Wall", "a.cu"}),
            (Strings{"-fPIC", "-Wall", "a.cu"}));
}

TEST(TakeUserMacros, UnreservedMacrosMoveToAHeaderInOrder) {
  Strings args = {"-DN=4",
                  "-x",
                  "cuda",
                  "-D",
                  "M",
                  "-U",
                  "A",
                  "-D__CUDA_NO_HALF_OPERATORS__",
                  "-D_GNU_SOURCE",
                  "-DF(x)=((x)+1)",
                  "--define-macro=B=2",
                  "-UNDEBUG",
                  "-Dlower",
                  "a.cu"};
  std::string header = ptb::takeUserMacros(args);
  EXPECT_EQ(args, (Strings{"-x", "cuda", "-D__CUDA_NO_HALF_OPERATORS__", "-D_GNU_SOURCE", "a.cu"}));
  EXPECT_NE(header.find("#define N 4\n#define M 1\n#undef A\n#define F(x) ((x)+1)\n#define B 2\n#undef NDEBUG\n"
                        "#define lower 1\n"),
            std::string::npos)
      << header;
  Strings none = {"-I", "/x", "-D_X", "a.cu"};
  EXPECT_EQ(ptb::takeUserMacros(none), "");
  EXPECT_EQ(none, (Strings{"-I", "/x", "-D_X", "a.cu"}));
}

TEST(TranslateNvccArgs, StandardWithSeparateValue) {
  // Regression test (fixed bug): nvcc accepts `-std c++17` / `--std c++17` (value as the next word; checked: nvcc 13
  // takes it), but translateNvccArgs passes "-std", "c++17" through and clang fails: "unknown argument: '-std'", "no
  // such file or directory: 'c++17'". Reproducer: translateNvccArgs({"-std", "c++17"}) == {"-std", "c++17"}, expected
  // {"-std=c++17"}.
  EXPECT_EQ(ptb::translateNvccArgs({"-std", "c++17", "a.cu"}), (Strings{"-std=c++17", "a.cu"}));
  EXPECT_EQ(ptb::translateNvccArgs({"--std", "c++20", "a.cu"}), (Strings{"-std=c++20", "a.cu"}));
}

// --- findCuda ------------------------------------------------------------------------------------------

TEST(FindCuda, ExplicitPathThatDoesNotExistIsAnErrorNamingIt) {
  std::string why;
  auto c = ptb::findCuda("/nonexistent/ptb-unit/cuda-root", why);
  EXPECT_FALSE(c.has_value());
  EXPECT_NE(why.find("/nonexistent/ptb-unit/cuda-root"), std::string::npos) << why;
  EXPECT_NE(why.find("--cuda-path"), std::string::npos) << why;
}

TEST(FindCuda, ExplicitPathWithoutHeadersIsAnErrorEvenIfCudaIsElsewhere) {
  TempDir dir;
  dir.file("include/cuda.h", ""); // not cuda_runtime.h
  std::string why;
  auto c = ptb::findCuda(dir.path, why);
  EXPECT_FALSE(c.has_value());
  EXPECT_NE(why.find(dir.path), std::string::npos) << why;
}

TEST(FindCuda, FakeRootGivenExplicitly) {
  TempDir dir;
  dir.file("include/cuda_runtime.h", "// fake\n");
  dir.file("version.json", "{\n  \"cuda\" : {\n    \"name\" : \"CUDA SDK\",\n    \"version\" : \"13.0.2\"\n  },\n"
                           "  \"cuda_cudart\" : { \"version\" : \"13.0.96\" }\n}\n");
  std::string why;
  auto c = ptb::findCuda(dir.path, why);
  ASSERT_TRUE(c.has_value()) << why;
  EXPECT_EQ(c->root, dir.path);
  EXPECT_EQ(c->how, "--cuda-path");
  EXPECT_EQ(c->version, "13.0.2");
}

TEST(FindCuda, FakeRootWithoutVersionFileHasNoVersion) {
  TempDir dir;
  dir.file("include/cuda_runtime.h", "");
  std::string why;
  auto c = ptb::findCuda(dir.path, why);
  ASSERT_TRUE(c.has_value()) << why;
  EXPECT_EQ(c->version, "");
}

TEST(FindCuda, VersionFromCudaHeaderWithoutVersionFile) {
  // Regression test (fixed bug): CudaInstall::version is documented as "from version.json / cuda.h", but findCuda reads
  // only version.json; toolkits installed from NVIDIA's wheels (as /usr/local/cuda on the development machine:
  // dist-info/, no version.json) get version "". Reproducer: a root with include/cuda_runtime.h and
  // include/cuda.h holding `#define CUDA_VERSION 12040`, no version.json: version is "", expected "12.4".
  TempDir dir;
  dir.file("include/cuda_runtime.h", "");
  dir.file("include/cuda.h", "#pragma once\n#define CUDA_VERSION 12040\n");
  std::string why;
  auto c = ptb::findCuda(dir.path, why);
  ASSERT_TRUE(c.has_value()) << why;
  EXPECT_EQ(c->version, "12.4");
}

TEST(FindCuda, CudaPathEnvironmentVariable) {
  TempDir dir;
  dir.file("include/cuda_runtime.h", "");
  ScopedEnv env("CUDA_PATH", dir.path);
  std::string why;
  auto c = ptb::findCuda("", why);
  ASSERT_TRUE(c.has_value()) << why;
  EXPECT_EQ(c->root, dir.path);
  EXPECT_EQ(c->how, "CUDA_PATH");
  // An explicit path still wins over CUDA_PATH.
  TempDir other;
  other.file("include/cuda_runtime.h", "");
  auto d = ptb::findCuda(other.path, why);
  ASSERT_TRUE(d.has_value()) << why;
  EXPECT_EQ(d->root, other.path);
  EXPECT_EQ(d->how, "--cuda-path");
}

TEST(FindCuda, CudaPathWithoutHeadersFallsThrough) {
  TempDir dir; // empty: not a toolkit
  ScopedEnv env("CUDA_PATH", dir.path);
  std::string why;
  auto c = ptb::findCuda("", why);
  if (c) {
    EXPECT_NE(c->how, "CUDA_PATH");
    EXPECT_NE(c->root, dir.path);
    // Not silently (issue 38): the result says CUDA_PATH was passed over, and what is used instead.
    EXPECT_NE(c->warning.find("CUDA_PATH=" + dir.path + " is not a CUDA installation"), std::string::npos)
        << c->warning;
    EXPECT_NE(c->warning.find("using " + c->root), std::string::npos) << c->warning;
  } else {
    // Nothing else found here: the message lists what was tried, CUDA_PATH with its value first.
    EXPECT_NE(why.find("CUDA_PATH (" + dir.path), std::string::npos) << why;
    EXPECT_NE(why.find("/usr/local/cuda"), std::string::npos) << why;
    EXPECT_NE(why.find("--cuda-path"), std::string::npos) << why;
  }
}

// --- stubIncludeDir and the adjuster -------------------------------------------------------------------

TEST(FrontendFileSystem, ServesTheRemovedHeaderFromMemoryOnly) {
  llvm::SmallString<256> header(ptb::frontendIncludeDir());
  llvm::sys::path::append(header, "texture_fetch_functions.h");
  auto fs = ptb::frontendFileSystem();
  auto status = fs->status(header);
  ASSERT_TRUE(bool(status)) << header.str().str();
  auto dir = fs->status(ptb::frontendIncludeDir());
  ASSERT_TRUE(bool(dir));
  EXPECT_TRUE(dir->isDirectory());
  auto buffer = fs->getBufferForFile(header);
  ASSERT_TRUE(bool(buffer));
  EXPECT_NE((*buffer)->getBuffer().find("#pragma once"), llvm::StringRef::npos);
  // Nothing on disk: no shared directory is written, and none is trusted.
  EXPECT_FALSE(llvm::sys::fs::exists(header));
  EXPECT_FALSE(llvm::sys::fs::exists(ptb::frontendIncludeDir()));
  // The real files are still there underneath.
  EXPECT_TRUE(bool(fs->status("/")));
}

TEST(CudaArgumentsAdjuster, NvccCommandBecomesACudaParse) {
  ptb::CudaInstall cuda{"/fake/cuda", "13.0.2", "--cuda-path", ""};
  auto adjust = ptb::cudaArgumentsAdjuster(cuda, "/fake/stubs");
  Strings in = {"/usr/local/cuda/bin/nvcc",
                "-gencode",
                "arch=compute_90,code=sm_90",
                "-Xcompiler",
                "-fPIC",
                "-I/inc",
                "-c",
                "k.cu",
                "-o",
                "k.o"};
  Strings out = adjust(in, "k.cu");
  ASSERT_GE(out.size(), 3u);
  auto count = [&](const std::string &a) { return std::count(out.begin(), out.end(), a); };
  auto index = [&](const std::string &a) { return size_t(std::find(out.begin(), out.end(), a) - out.begin()); };
  auto hasPair = [&](const std::string &a, const std::string &b) {
    for (size_t i = 0; i + 1 < out.size(); ++i)
      if (out[i] == a && out[i + 1] == b) return true;
    return false;
  };
  // The compiler stays argv[0] (ToolRunner replaces it later); the file stays.
  EXPECT_EQ(out.front(), "/usr/local/cuda/bin/nvcc");
  EXPECT_EQ(out.back(), "k.cu");
  // docs/facts.md's parse: CUDA language, one side only, sm_90, no libdevice, the toolkit, the stub directory,
  // CCCL, C++17, syntax only.
  EXPECT_TRUE(hasPair("-x", "cuda"));
  EXPECT_EQ(count("--cuda-host-only") + count("--cuda-device-only"), 1);
  EXPECT_EQ(count("--cuda-gpu-arch=sm_90"), 1);
  EXPECT_EQ(count("-nocudalib"), 1);
  EXPECT_EQ(count("--cuda-path=/fake/cuda"), 1);
  EXPECT_TRUE(hasPair("-isystem", "/fake/stubs"));
  EXPECT_TRUE(hasPair("-isystem", "/fake/cuda/include/cccl"));
  EXPECT_EQ(count("-std=c++17"), 1);
  EXPECT_EQ(count("-fsyntax-only"), 1);
  EXPECT_EQ(count("-Wno-unknown-cuda-version"), 1);
  // The user's flags, translated, after ours (so that theirs win where order matters).
  EXPECT_EQ(count("-fPIC"), 1);
  EXPECT_EQ(count("-I/inc"), 1);
  EXPECT_LT(index("-x"), index("-fPIC"));
  EXPECT_LT(index("-fPIC"), index("-I/inc"));
  // nvcc-only flags, the output and compile-only switches are gone.
  for (const char *gone : {"-gencode", "arch=compute_90,code=sm_90", "-Xcompiler", "-c", "-o", "k.o"})
    EXPECT_EQ(count(gone), 0) << gone;
}

TEST(CudaArgumentsAdjuster, TheSides) {
  ptb::CudaInstall cuda{"/fake/cuda", "", "--cuda-path", ""};
  Strings in = {"clang++", "k.cu"};
  Strings device = ptb::cudaArgumentsAdjuster(cuda, "/stubs")(in, "k.cu");
  EXPECT_EQ(device, ptb::cudaArgumentsAdjuster(cuda, "/stubs", ptb::ParseSide::Device)(in, "k.cu"));
  EXPECT_EQ(std::count(device.begin(), device.end(), "--cuda-device-only"), 1);
  EXPECT_EQ(std::count(device.begin(), device.end(), "--cuda-host-only"), 0);
  // -nocudalib drops the SDK version a device-side <<<>>> needs (docs/facts.md).
  EXPECT_NE(std::find(device.begin(), device.end(), "-target-sdk-version=12.5"), device.end());
  Strings host = ptb::cudaArgumentsAdjuster(cuda, "/stubs", ptb::ParseSide::Host)(in, "k.cu");
  EXPECT_EQ(std::count(host.begin(), host.end(), "--cuda-host-only"), 1);
  EXPECT_EQ(std::count(host.begin(), host.end(), "--cuda-device-only"), 0);
  EXPECT_EQ(std::find(host.begin(), host.end(), "-target-sdk-version=12.5"), host.end());
}

TEST(CudaArgumentsAdjuster, KeepsTheCommandsStandard) {
  ptb::CudaInstall cuda{"/fake/cuda", "", "CUDA_PATH", ""};
  auto adjust = ptb::cudaArgumentsAdjuster(cuda, "/fake/stubs");
  Strings out = adjust({"nvcc", "--std=c++20", "k.cu"}, "k.cu");
  EXPECT_EQ(std::count(out.begin(), out.end(), "-std=c++20"), 1);
  EXPECT_EQ(std::count(out.begin(), out.end(), "-std=c++17"), 0);
  EXPECT_EQ(adjust({}, "k.cu"), Strings{});
}

// --- makeCompilationDatabase ---------------------------------------------------------------------------

TEST(MakeCompilationDatabase, ArgumentsAfterDashDash) {
  std::string err;
  auto db = ptb::makeCompilationDatabase("", {"-DX=1", "-I/inc"}, err);
  ASSERT_NE(db, nullptr) << err;
  auto cmds = db->getCompileCommands("/src/k.cu");
  ASSERT_EQ(cmds.size(), 1u);
  const Strings &cl = cmds[0].CommandLine;
  EXPECT_NE(std::find(cl.begin(), cl.end(), "-DX=1"), cl.end());
  EXPECT_NE(std::find(cl.begin(), cl.end(), "-I/inc"), cl.end());
  EXPECT_EQ(cl.back(), "/src/k.cu");
}

TEST(MakeCompilationDatabase, MissingBuildDirectoryIsAnError) {
  std::string err;
  auto db = ptb::makeCompilationDatabase("/nonexistent/ptb-unit-build", {}, err);
  EXPECT_EQ(db, nullptr);
  EXPECT_NE(err.find("/nonexistent/ptb-unit-build"), std::string::npos) << err;
}

TEST(MakeCompilationDatabase, NvccCompileCommandsJson) {
  TempDir dir;
  std::string src = dir.path + "/k.cu";
  dir.file("k.cu", "__global__ void k() {}\n");
  dir.file("compile_commands.json", "[{\"directory\": \"" + dir.path +
                                        "\", \"command\": \"/usr/local/cuda/bin/nvcc -rdc=true -DY=2 -c " + src +
                                        " -o k.o\", \"file\": \"" + src + "\"}]");
  std::string err;
  auto db = ptb::makeCompilationDatabase(dir.path, {}, err);
  ASSERT_NE(db, nullptr) << err;
  auto cmds = db->getCompileCommands(src);
  ASSERT_EQ(cmds.size(), 1u);
  ptb::CudaInstall cuda{"/fake/cuda", "", "--cuda-path", ""};
  Strings adjusted = ptb::cudaArgumentsAdjuster(cuda, "/stubs")(cmds[0].CommandLine, src);
  EXPECT_EQ(std::count(adjusted.begin(), adjusted.end(), "-rdc=true"), 0);
  EXPECT_EQ(std::count(adjusted.begin(), adjusted.end(), "-DY=2"), 1);
  EXPECT_EQ(std::count(adjusted.begin(), adjusted.end(), "-o"), 0);
  EXPECT_EQ(std::count(adjusted.begin(), adjusted.end(), "-c"), 0);
}

// --- The parse itself ----------------------------------------------------------------------------------

TEST(CudaParse, CleanSourceParsesAndBrokenSourceReportsErrors) {
  PTB_REQUIRE_CUDA();
  auto broken = ptbtest::parseCuda("__global__ void k(int *p) { p[blockIdx.x] = undeclared; }\n", "broken.cu");
  EXPECT_FALSE(broken->ok);
  EXPECT_NE(broken->diags->all().find("undeclared"), std::string::npos) << broken->diags->all();
  // nvcc-only flags in the command are translated away; C++17 and CCCL headers work (cub via CCCL).
  auto fine = ptbtest::parseCuda("#include <cuda/std/atomic>\n__global__ void k(int *p) { p[blockIdx.x] = 1; }\n",
                                 "fine.cu", {"-gencode", "arch=compute_90,code=sm_90", "--expt-relaxed-constexpr"});
  EXPECT_TRUE(fine->ok) << fine->diags->all();
  EXPECT_EQ(fine->inv.kernels.size(), 1u);
}

} // namespace

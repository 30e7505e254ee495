#include "CudaFrontend.h"
#include "NvccDialect.h"

#include "clang/Driver/Driver.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>
#include <cstdlib>

#ifndef PTB_CLANG_EXECUTABLE
#define PTB_CLANG_EXECUTABLE "clang++"
#endif

namespace ptb {

namespace {

bool hasCudaHeaders(const std::string &root) {
  llvm::SmallString<256> p(root);
  llvm::sys::path::append(p, "include", "cuda_runtime.h");
  return llvm::sys::fs::exists(p);
}

// "13.0" from include/cuda.h's CUDA_VERSION (13000).
std::string versionFromHeader(const std::string &root) {
  llvm::SmallString<256> p(root);
  llvm::sys::path::append(p, "include", "cuda.h");
  auto buf = llvm::MemoryBuffer::getFile(p);
  if (!buf) return "";
  llvm::StringRef text = (*buf)->getBuffer();
  size_t at = text.find("#define CUDA_VERSION ");
  if (at == llvm::StringRef::npos) return "";
  unsigned v = 0;
  if (text.substr(at + 21).ltrim().consumeInteger(10, v)) return "";
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

std::string readVersion(const std::string &root) {
  llvm::SmallString<256> p(root);
  llvm::sys::path::append(p, "version.json");
  auto buf = llvm::MemoryBuffer::getFile(p);
  if (!buf) return versionFromHeader(root);
  // {"cuda" : {"name" : "CUDA SDK", "version" : "13.0.2"}, ...}: the first "version" is the SDK's.
  llvm::StringRef text = (*buf)->getBuffer();
  size_t at = text.find("\"version\"");
  if (at == llvm::StringRef::npos) return "";
  size_t open = text.find('"', text.find(':', at));
  size_t close = text.find('"', open + 1);
  if (open == llvm::StringRef::npos || close == llvm::StringRef::npos) return "";
  return text.substr(open + 1, close - open - 1).str();
}

} // namespace

std::optional<CudaInstall> findCuda(const std::string &explicitPath, std::string &why) {
  std::vector<std::string> tried;
  auto accept = [&](const std::string &root, const char *how) -> std::optional<CudaInstall> {
    if (hasCudaHeaders(root)) return CudaInstall{root, readVersion(root), how};
    tried.push_back(std::string(how) + " (" + root + ": no include/cuda_runtime.h)");
    return std::nullopt;
  };
  if (!explicitPath.empty()) {
    // An explicit path that is wrong is an error, not a reason to look elsewhere.
    if (auto c = accept(explicitPath, "--cuda-path")) return c;
    why = "no CUDA installation at --cuda-path=" + explicitPath + " (no include/cuda_runtime.h)";
    return std::nullopt;
  }
  if (const char *env = std::getenv("CUDA_PATH"); env && *env) {
    if (auto c = accept(env, "CUDA_PATH")) return c;
  } else {
    tried.push_back("CUDA_PATH (unset)");
  }
  if (auto nvcc = llvm::sys::findProgramByName("nvcc")) {
    llvm::SmallString<256> real;
    if (llvm::sys::fs::real_path(*nvcc, real)) real = *nvcc;
    std::string root = llvm::sys::path::parent_path(llvm::sys::path::parent_path(real)).str();
    if (auto c = accept(root, "nvcc on PATH")) return c;
  } else {
    tried.push_back("nvcc on PATH (none)");
  }
  if (auto c = accept("/usr/local/cuda", "/usr/local/cuda")) return c;
  why = "no CUDA installation found; tried ";
  for (size_t i = 0; i < tried.size(); ++i) why += (i ? ", " : "") + tried[i];
  why += ". Install the CUDA toolkit or pass --cuda-path=<dir>";
  return std::nullopt;
}

std::vector<std::string> translateNvccArgs(const std::vector<std::string> &args) {
  // nvcc options that take a separate value, to be dropped with it.
  static const llvm::StringRef dropWithValue[] = {
      "-gencode", "--generate-code", "-arch", "--gpu-architecture", "-code", "--gpu-code", "-ccbin",
      "--compiler-bindir", "-maxrregcount", "--maxrregcount", "-Xptxas", "--ptxas-options", "-Xnvlink",
      "--nvlink-options", "-Xcudafe", "-t", "--threads", "-rdc", "--relocatable-device-code",
      "--default-stream", "-default-stream", "-lineinfo-level", "-diag-suppress", "--diag-suppress",
      "-Xfatbin", "--Werror", "-Werror=all-warnings", "--split-compile", "-split-compile"};
  // nvcc flags without a value that clang does not take.
  static const llvm::StringRef dropAlone[] = {
      "-lineinfo", "--generate-line-info", "--use_fast_math", "-use_fast_math", "-G", "--device-debug",
      "--extended-lambda", "--expt-extended-lambda", "--expt-relaxed-constexpr", "-expt-relaxed-constexpr",
      "-expt-extended-lambda", "--forward-unknown-to-host-compiler", "-forward-unknown-to-host-compiler",
      "--forward-unknown-opts", "-forward-unknown-opts", "-dc", "--device-c", "-dw", "--device-w",
      "-cudart", "--keep", "-keep", "-res-usage", "--resource-usage", "--display-error-number",
      "-Wno-deprecated-gpu-targets", "--Wno-deprecated-gpu-targets", "-src-in-ptx", "--source-in-ptx",
      "-static-global-template-stub=true", "-static-global-template-stub=false", "-cubin", "-ptx", "-fatbin"};
  // Value-carrying nvcc flags spelled with '=' (or glued), dropped whole.
  static const llvm::StringRef dropPrefixes[] = {
      "-gencode=", "--generate-code=", "-arch=", "--gpu-architecture=", "-code=", "--gpu-code=", "-ccbin=",
      "--compiler-bindir=", "-maxrregcount=", "--maxrregcount=", "-Xptxas=", "--ptxas-options=", "-rdc=",
      "--relocatable-device-code=", "--default-stream=", "-default-stream=", "-t=", "--threads=",
      "-cudart=", "--cudart=", "-diag-suppress=", "--diag-suppress=", "--split-compile=", "-arch=sm_",
      "-Xnvlink=", "--nvlink-options=", "--keep-dir", "-Xfatbin="};

  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    llvm::StringRef a = args[i];
    auto in = [&](llvm::ArrayRef<llvm::StringRef> list) {
      for (auto s : list) if (a == s) return true;
      return false;
    };
    if (in(dropWithValue)) { ++i; continue; }
    if (in(dropAlone)) continue;
    bool dropped = false;
    for (auto p : dropPrefixes)
      if (a.starts_with(p)) { dropped = true; break; }
    if (dropped) continue;
    if (a.starts_with("--std=")) { out.push_back("-std=" + a.drop_front(6).str()); continue; }
    if ((a == "-std" || a == "--std") && i + 1 < args.size()) { out.push_back("-std=" + args[++i]); continue; }
    if (a.starts_with("-Ofast-compile") || a.starts_with("--Ofast-compile")) continue;  // nvcc's, not -Ofast
    if (a == "-Xcompiler" || a == "--compiler-options") {
      // The next word is a comma-separated list of host-compiler flags: keep them.
      if (i + 1 < args.size()) {
        llvm::SmallVector<llvm::StringRef, 8> parts;
        llvm::StringRef(args[++i]).split(parts, ',', -1, false);
        for (auto p : parts) out.push_back(p.str());
      }
      continue;
    }
    if (a.starts_with("-Xcompiler=") || a.starts_with("--compiler-options=")) {
      llvm::SmallVector<llvm::StringRef, 8> parts;
      a.split('=').second.split(parts, ',', -1, false);
      for (auto p : parts) out.push_back(p.str());
      continue;
    }
    if (a == "-x" && i + 1 < args.size() && args[i + 1] == "cu") { ++i; continue; }
    if (a == "--compile") { out.push_back("-c"); continue; }
    if (a == "--output-file") { out.push_back("-o"); continue; }
    if (a == "--include-path") { out.push_back("-I"); continue; }
    if (a == "--define-macro") { out.push_back("-D"); continue; }
    if (a == "-O3" || a == "-O2" || a == "-O1" || a == "-O0") { out.push_back(a.str()); continue; }
    if (a.starts_with("-O") && a.size() > 2 && !std::isdigit(a[2]) && a[2] != 's' && a[2] != 'z' &&
        a[2] != 'f' && a[2] != 'g')
      continue; // e.g. nvcc's -Ofast-compile
    out.push_back(a.str());
  }
  return out;
}

namespace {
const char *kTextureStub = "// Stub for the header CUDA 13 removed; clang 19's CUDA wrapper still includes it.\n"
                           "#pragma once\n";
} // namespace

const char *frontendIncludeDir() { return "/ptb-transform-frontend/include"; }

// In memory, over the real file system: clang's header search sees the directory through the parse's
// file manager, and no file is ever written or read from a shared location.
llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> frontendFileSystem(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> base) {
  auto memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  auto add = [&](const char *name, const char *text) {
    llvm::SmallString<128> path(frontendIncludeDir());
    llvm::sys::path::append(path, name);
    memory->addFile(path, 0, llvm::MemoryBuffer::getMemBuffer(text, path));
  };
  add("texture_fetch_functions.h", kTextureStub);
  // What nvcc's headers supply and clang's do not (docs/ptb-transform.md), for the resource directory of
  // the clang the parse runs as.
  static const std::vector<FrontendHeader> compat =
      nvccCompatibilityHeaders(clang::driver::Driver::GetResourcesPath(PTB_CLANG_EXECUTABLE));
  for (const FrontendHeader &h : compat) add(h.name.c_str(), h.text.c_str());
  auto overlay = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(base);
  overlay->pushOverlay(memory);
  return overlay;
}

clang::tooling::ArgumentsAdjuster cudaArgumentsAdjuster(const CudaInstall &cuda, const std::string &stubDir,
                                                        ParseSide side) {
  std::string root = cuda.root;
  return [root, stubDir, side](const clang::tooling::CommandLineArguments &in, llvm::StringRef /*file*/) {
    if (in.empty()) return in;
    // in[0] is the compiler; the rest are flags, possibly nvcc's.
    std::vector<std::string> rest(in.begin() + 1, in.end());
    std::vector<std::string> flags = translateNvccArgs(rest);
    bool hasStd = false;
    for (auto &f : flags) if (llvm::StringRef(f).starts_with("-std=")) hasStd = true;
    clang::tooling::CommandLineArguments out{in[0]};
    // Our flags first, so a user's -x or include order after them still wins where it should.
    for (const char *f : {"-x", "cuda", "--cuda-gpu-arch=sm_90", "-nocudalib", "-Wno-unknown-cuda-version",
                          "-Wno-unknown-attributes", "-fsyntax-only"})
      out.push_back(f);
    if (side == ParseSide::Device) {
      // -nocudalib drops the SDK version that a device-side <<<>>> needs (docs/facts.md): give it back.
      for (const char *f : {"--cuda-device-only", "-Xclang", "-target-sdk-version=12.5"}) out.push_back(f);
    } else {
      out.push_back("--cuda-host-only");
    }
    out.push_back("--cuda-path=" + root);
    out.push_back("-isystem");
    out.push_back(stubDir);
    // After clang's CUDA wrapper, before the user's code: what nvcc's host headers bring.
    out.push_back("-include");
    out.push_back(stubDir + "/" + kNvccCompatHeader);
    out.push_back("-isystem");
    out.push_back(root + "/include/cccl");
    if (!hasStd) out.push_back("-std=c++17");
    for (auto &f : flags) {
      // Outputs and compile-only switches are meaningless for a syntax-only parse.
      if (f == "-c") continue;
      out.push_back(f);
    }
    // Drop "-o file" pairs.
    clang::tooling::CommandLineArguments cleaned;
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i] == "-o" && i + 1 < out.size()) { ++i; continue; }
      cleaned.push_back(out[i]);
    }
    return cleaned;
  };
}

std::unique_ptr<clang::tooling::CompilationDatabase>
makeCompilationDatabase(const std::string &buildDir, const std::vector<std::string> &argsAfterDashDash,
                        std::string &error) {
  if (!buildDir.empty()) {
    auto db = clang::tooling::CompilationDatabase::loadFromDirectory(buildDir, error);
    if (!db) error = "cannot load compile_commands.json from '" + buildDir + "': " + error;
    return db;
  }
  return std::make_unique<clang::tooling::FixedCompilationDatabase>(".", argsAfterDashDash);
}

} // namespace ptb

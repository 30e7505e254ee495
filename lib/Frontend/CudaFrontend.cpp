#include "CudaFrontend.h"
#include "NvccDialect.h"
#include "NvccOptions.h"

#include "clang/Driver/Driver.h"
#include "clang/Driver/Options.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Option/ArgList.h"
#include "llvm/Option/OptTable.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
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
    if (hasCudaHeaders(root)) return CudaInstall{root, readVersion(root), how, ""};
    tried.push_back(std::string(how) + " (" + root + ": no include/cuda_runtime.h)");
    return std::nullopt;
  };
  if (!explicitPath.empty()) {
    // An explicit path that is wrong is an error, not a reason to look elsewhere.
    if (auto c = accept(explicitPath, "--cuda-path")) return c;
    why = "no CUDA installation at --cuda-path=" + explicitPath + " (no include/cuda_runtime.h)";
    return std::nullopt;
  }
  std::string envWarning;
  if (const char *env = std::getenv("CUDA_PATH"); env && *env) {
    if (auto c = accept(env, "CUDA_PATH")) return c;
    envWarning = std::string("CUDA_PATH=") + env + " is not a CUDA installation (no include/cuda_runtime.h)";
  } else {
    tried.push_back("CUDA_PATH (unset)");
  }
  auto withWarning = [&](std::optional<CudaInstall> c) {
    if (!envWarning.empty()) c->warning = envWarning + "; using " + c->root + " (" + c->how + ")";
    return c;
  };
  if (auto nvcc = llvm::sys::findProgramByName("nvcc")) {
    llvm::SmallString<256> real;
    if (llvm::sys::fs::real_path(*nvcc, real)) real = *nvcc;
    std::string root = llvm::sys::path::parent_path(llvm::sys::path::parent_path(real)).str();
    if (auto c = accept(root, "nvcc on PATH")) return withWarning(c);
  } else {
    tried.push_back("nvcc on PATH (none)");
  }
  if (auto c = accept("/usr/local/cuda", "/usr/local/cuda")) return withWarning(c);
  why = "no CUDA installation found; tried ";
  for (size_t i = 0; i < tried.size(); ++i) why += (i ? ", " : "") + tried[i];
  why += ". Install the CUDA toolkit or pass --cuda-path=<dir>";
  return std::nullopt;
}

namespace {

// nvcc's -Werror takes a kind (or a comma-separated list of kinds); clang's -Werror takes none.
bool isNvccWerrorKinds(llvm::StringRef value) {
  static const llvm::StringRef kinds[] = {
      "all-warnings",           "cross-execution-space-call", "reorder",
      "default-stream-launch",  "missing-launch-bounds",      "ext-lambda-captures-this",
      "deprecated-declarations"};
  llvm::SmallVector<llvm::StringRef, 4> parts;
  value.split(parts, ',', -1, false);
  if (parts.empty()) return false;
  for (llvm::StringRef p : parts)
    if (!llvm::is_contained(kinds, p)) return false;
  return true;
}

// Whether clang's driver knows the host-compiler flag `flag` (not "unknown argument").
bool clangKnowsFlag(const std::string &flag) {
  const llvm::opt::OptTable &table = clang::driver::getDriverOptTable();
  const char *argv[] = {flag.c_str()};
  unsigned missingIndex = 0, missingCount = 0;
  llvm::opt::InputArgList args =
      table.ParseArgs(argv, missingIndex, missingCount, llvm::opt::Visibility(clang::driver::options::ClangOption));
  for (const llvm::opt::Arg *a : args)
    if (a->getOption().getKind() == llvm::opt::Option::UnknownClass) return false;
  return true;
}

// The host-compiler flags of one -Xcompiler list: those that clang's driver rejects as unknown (GCC's
// -fno-gnu-unique, -fconcepts-diagnostics-depth=3, ...) are dropped: they change nothing the tools read.
void addHostCompilerFlags(llvm::StringRef list, std::vector<std::string> &out) {
  llvm::SmallVector<llvm::StringRef, 8> parts;
  list.split(parts, ',', -1, false);
  for (auto p : parts) {
    std::string flag = p.str();
    if (!flag.empty() && flag[0] == '-' && !clangKnowsFlag(flag)) continue;
    out.push_back(flag);
  }
}

} // namespace

std::vector<std::string> translateNvccArgs(const std::vector<std::string> &args) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    llvm::StringRef a = args[i];
    if (const NvccOption *o = findNvccOption(a)) {
      if (o->forClang == ForClang::DropWithValue) {
        ++i;
        continue;
      }
      if (o->forClang == ForClang::Drop) continue;
    }
    if (llvm::any_of(nvccOptions(), [&](const NvccOption &o) {
          return o.forClang == ForClang::DropWithValue && a.starts_with(o.spelling) &&
                 a.substr(o.spelling.size()).starts_with("=");
        }))
      continue;
    if ((a == "-Werror" || a == "--Werror") && i + 1 < args.size() && isNvccWerrorKinds(args[i + 1])) {
      ++i;
      continue;
    }
    if ((a.starts_with("-Werror=") || a.starts_with("--Werror=")) && isNvccWerrorKinds(a.split('=').second)) continue;
    if (a.starts_with("--std=")) {
      out.push_back("-std=" + a.drop_front(6).str());
      continue;
    }
    if ((a == "-std" || a == "--std") && i + 1 < args.size()) {
      out.push_back("-std=" + args[++i]);
      continue;
    }
    if (a.starts_with("-Ofast-compile")) continue; // nvcc's single-dash spelling, not clang's -Ofast
    if (a == "-Xcompiler" || a == "--compiler-options") {
      // The next word is a comma-separated list of host-compiler flags: keep those clang knows.
      if (i + 1 < args.size()) addHostCompilerFlags(args[++i], out);
      continue;
    }
    if (a.starts_with("-Xcompiler=") || a.starts_with("--compiler-options=")) {
      addHostCompilerFlags(a.split('=').second, out);
      continue;
    }
    if ((a == "-x" || a == "--x") && i + 1 < args.size() && args[i + 1] == "cu") {
      ++i;
      continue;
    }
    if (a == "--x=cu") continue;
    // Long spellings of flags clang takes short; a separate value follows as it is.
    static const std::pair<llvm::StringRef, llvm::StringRef> renamed[] = {{"--compile", "-c"},
                                                                          {"--output-file", "-o"},
                                                                          {"--include-path", "-I"},
                                                                          {"--define-macro", "-D"},
                                                                          {"--undefine-macro", "-U"},
                                                                          {"--pre-include", "-include"},
                                                                          {"--system-include", "-isystem"},
                                                                          {"--debug", "-g"},
                                                                          {"--profile", "-pg"},
                                                                          {"--shared", "-shared"},
                                                                          {"--verbose", "-v"}};
    bool done = false;
    for (const auto &[from, to] : renamed) {
      if (a == from) {
        out.push_back(to.str());
        done = true;
        break;
      }
      if (a.starts_with(from) && a.substr(from.size()).starts_with("=") && to != "-c") {
        // --include-path=a,b: one flag per item.
        llvm::SmallVector<llvm::StringRef, 4> items;
        a.substr(from.size() + 1).split(items, ',', -1, false);
        for (auto item : items) {
          out.push_back(to.str());
          out.push_back(item.str());
        }
        done = true;
        break;
      }
    }
    if (done) continue;
    if ((a == "-ftemplate-depth" || a == "--ftemplate-depth" || a == "-ftemplate-backtrace-limit" ||
         a == "--ftemplate-backtrace-limit") &&
        i + 1 < args.size()) {
      out.push_back(a.ltrim('-').str().insert(0, "-") + "=" + args[++i]);
      continue;
    }
    if (a == "-m" && i + 1 < args.size() && args[i + 1] == "64") {
      ++i;
      out.push_back("-m64");
      continue;
    }
    if (a == "-O3" || a == "-O2" || a == "-O1" || a == "-O0") {
      out.push_back(a.str());
      continue;
    }
    if (a.starts_with("-O") && a.size() > 2 && !std::isdigit(a[2]) && a[2] != 's' && a[2] != 'z' && a[2] != 'f' &&
        a[2] != 'g')
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
llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem>
frontendFileSystem(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> base) {
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
    for (auto &f : flags)
      if (llvm::StringRef(f).starts_with("-std=")) hasStd = true;
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
      if (out[i] == "-o" && i + 1 < out.size()) {
        ++i;
        continue;
      }
      cleaned.push_back(out[i]);
    }
    return cleaned;
  };
}

namespace {
// `__x` and `_X`: reserved to the implementation (the toolkit's and the C library's own macros).
bool isReservedName(llvm::StringRef name) {
  return name.starts_with("__") ||
         (name.size() > 1 && name[0] == '_' && std::isupper(static_cast<unsigned char>(name[1])));
}
} // namespace

std::string takeUserMacros(std::vector<std::string> &args) {
  std::vector<std::string> kept;
  std::string header;
  for (size_t i = 0; i < args.size(); ++i) {
    llvm::StringRef a = args[i];
    bool define = a.starts_with("-D") || a.starts_with("--define-macro");
    bool undefine = a.starts_with("-U") || a.starts_with("--undefine-macro");
    llvm::StringRef flag = a.starts_with("--define-macro")     ? "--define-macro"
                           : a.starts_with("--undefine-macro") ? "--undefine-macro"
                                                               : a.take_front(2);
    if (!define && !undefine) {
      kept.push_back(args[i]);
      continue;
    }
    llvm::StringRef rest = a.substr(flag.size());
    if (flag.starts_with("--")) {
      if (!rest.empty() && !rest.consume_front("=")) { // --define-macroX: not this flag
        kept.push_back(args[i]);
        continue;
      }
    }
    bool separate = rest.empty();
    if (separate && i + 1 >= args.size()) {
      kept.push_back(args[i]);
      continue;
    }
    llvm::StringRef spec = separate ? llvm::StringRef(args[i + 1]) : rest;
    auto [nameAndParams, value] = spec.split('=');
    llvm::StringRef name = nameAndParams.take_until([](char c) { return c == '('; });
    if (name.empty() || isReservedName(name) || spec.contains('\n')) {
      kept.push_back(args[i]);
      if (separate) kept.push_back(args[++i]);
      continue;
    }
    if (separate) ++i;
    if (undefine)
      header += "#undef " + name.str() + "\n";
    else
      header += "#define " + nameAndParams.str() + " " + (spec.contains('=') ? value.str() : std::string("1")) + "\n";
  }
  args = std::move(kept);
  if (header.empty()) return "";
  return "// ptb-transform's parse only: the command line's macros, defined after clang's CUDA wrapper headers.\n" +
         header;
}

clang::tooling::ArgumentsAdjuster userMacrosAdjuster(llvm::IntrusiveRefCntPtr<llvm::vfs::InMemoryFileSystem> headers) {
  auto counter = std::make_shared<unsigned>(0);
  return [headers, counter](const clang::tooling::CommandLineArguments &in, llvm::StringRef) {
    if (in.empty()) return in;
    std::vector<std::string> rest(in.begin() + 1, in.end());
    std::string text = takeUserMacros(rest);
    if (text.empty()) return in;
    llvm::SmallString<128> path(frontendIncludeDir());
    llvm::sys::path::append(path, "ptb_user_macros_" + std::to_string((*counter)++) + ".h");
    headers->addFile(path, 0, llvm::MemoryBuffer::getMemBufferCopy(text, path));
    clang::tooling::CommandLineArguments out{in[0]};
    out.insert(out.end(), rest.begin(), rest.end());
    // Right after the front end's header (itself after the wrapper), before the command's -include files.
    std::string compat = std::string(frontendIncludeDir()) + "/" + kNvccCompatHeader;
    auto at = std::find(out.begin(), out.end(), compat);
    at = at == out.end() ? out.end() : at + 1;
    at = out.insert(at, "-include");
    out.insert(at + 1, std::string(path));
    return out;
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

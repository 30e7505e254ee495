// The one CUDA front end of the project: where CUDA lives, and how a .cu file is parsed by clang 19.
#pragma once

#include "clang/Tooling/ArgumentsAdjusters.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ptb {

// A CUDA toolkit found on disk.
struct CudaInstall {
  std::string root;    // e.g. /usr/local/cuda
  std::string version; // from version.json / cuda.h, "" if unknown
  std::string how;     // which rule found it: "--cuda-path", "CUDA_PATH", "nvcc on PATH", "/usr/local/cuda"
  std::string warning; // "" or why a rule before `how` was passed over (CUDA_PATH names no toolkit)
};

// Looks for CUDA in this order: `explicitPath` (--cuda-path), $CUDA_PATH, the directory above the `nvcc`
// on $PATH, /usr/local/cuda. A candidate counts when it has include/cuda_runtime.h. On failure returns
// nullopt and sets `why` to a sentence listing what was tried. A wrong --cuda-path is an error; a CUDA_PATH
// that names no toolkit is passed over (nvcc does not read it) with a `warning` in the result.
std::optional<CudaInstall> findCuda(const std::string &explicitPath, std::string &why);

// Rewrites an nvcc command line (from compile_commands.json or after `--`) into flags clang accepts:
// drops nvcc-only flags (-gencode, -arch, -code, -rdc, --expt-*, -Xcompiler's wrapper, -forward-unknown-*,
// -ccbin, --use_fast_math, ...), unpacks -Xcompiler lists, keeps -I/-D/-U/-isystem/-include/-std.
std::vector<std::string> translateNvccArgs(const std::vector<std::string> &args);

// The directory of the headers the front end supplies to the parse: a stub for CUDA 13's removed
// texture_fetch_functions.h (clang 19's CUDA wrapper still includes it). Nothing is on disk there: the
// files are served from memory by frontendFileSystem(), so no shared directory is written or trusted.
const char *frontendIncludeDir();

// The file system of every parse: `base` (the real one), with the front end's headers in memory on top.
llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem>
frontendFileSystem(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> base = llvm::vfs::getRealFileSystem());

// Which side of the CUDA compilation the parse takes. The device side is the default: kernels and the
// device functions they call are what the tools read, and only that side sees `#ifdef __CUDA_ARCH__`
// branches (host functions, and so launch sites, are parsed on both sides). Clang cannot parse some
// device code (dynamic parallelism), so the runner falls back to the host side when the device side fails.
enum class ParseSide { Device, Host };

// The adjuster every tool of the project applies: translate nvcc flags, then set up the CUDA parse
// (docs/facts.md): -x cuda, the side, --cuda-path, stub and CCCL include dirs, sm_90, C++17 unless the command
// sets a standard, unknown-version warning off.
clang::tooling::ArgumentsAdjuster cudaArgumentsAdjuster(const CudaInstall &cuda, const std::string &stubDir,
                                                        ParseSide side = ParseSide::Device);

// The user's macros after clang's CUDA wrapper. Clang's driver defines the command line's -D/-U macros
// before it force-includes its CUDA wrapper headers, which include the CUDA toolkit's headers (cuda.h among
// them, which nvcc does not include): a user's `-DN=4` then breaks a toolkit header that nvcc never reads.
// takeUserMacros removes from `args` every -D and -U of a name that is not reserved (`N`, `BLOCK`; not `__x`
// or `_X`, which may be meant for the toolkit's or the C library's headers) and returns the text of a header
// that defines and undefines them in command-line order, or "" when there are none.
std::string takeUserMacros(std::vector<std::string> &args);

// The adjuster that does so for every command of a parse: the header is added to `headers` (served from
// memory, in frontendIncludeDir()) and force-included right after the front end's own header, before the
// command's own -include files. To run after every other adjuster (--extra-arg adds -D too).
clang::tooling::ArgumentsAdjuster userMacrosAdjuster(llvm::IntrusiveRefCntPtr<llvm::vfs::InMemoryFileSystem> headers);

// The compilation database for the given sources: compile_commands.json from `buildDir` when given
// (-p), else the flags after `--` (possibly none). Returns null and sets `error` on failure.
std::unique_ptr<clang::tooling::CompilationDatabase>
makeCompilationDatabase(const std::string &buildDir, const std::vector<std::string> &argsAfterDashDash,
                        std::string &error);

} // namespace ptb

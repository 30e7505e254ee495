// ptb-nvcc <nvcc> <arguments...>: an nvcc launcher (CMAKE_CUDA_COMPILER_LAUNCHER, NVCC := ptb-nvcc nvcc)
// that compiles ptb-transform's output instead of the CUDA source (docs/ptb-nvcc.md).
#include "NvccCommandLine.h"
#include "TwinsPart.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Program.h>
#include <llvm/Support/raw_ostream.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <spawn.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace ptbnvcc;
using llvm::StringRef;

namespace {

bool envFlag(const char *name) {
  const char *v = std::getenv(name);
  return v && *v && StringRef(v) != "0";
}

std::string envString(const char *name) {
  const char *v = std::getenv(name);
  return v ? v : "";
}

void cleanupBeforeExit();

[[noreturn]] void fail(const llvm::Twine &message) {
  llvm::errs() << "ptb-nvcc: error: " << message << "\n";
  cleanupBeforeExit();
  std::exit(1);
}

std::string selfPath(const char *argv0) {
  static int anchor;
  return llvm::sys::fs::getMainExecutable(argv0, &anchor);
}

// A program named on the command line: as it is when it has a directory part, else found on PATH.
std::string findProgram(const std::string &name) {
  if (llvm::sys::path::has_parent_path(name)) return name;
  auto found = llvm::sys::findProgramByName(name);
  return found ? *found : "";
}

// Signals (SIGTERM from make or timeout, SIGINT, SIGHUP, SIGQUIT): the handler forwards the signal to the
// child that runs (nvcc, ptb-transform, ld) and records it; main waits for the child, removes what
// ptb-nvcc made (the temporary directory, the staged object), and ends by the same signal (the status a
// shell reports as 128 + signal), so that no process of the compile outlives it and no object without its
// twins is left.
const int kForwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};
volatile sig_atomic_t gSignal = 0;
volatile pid_t gChild = 0;

extern "C" void onSignal(int sig) {
  gSignal = sig;
  pid_t child = gChild;
  if (child > 0) kill(child, sig);
}

void installSignalHandlers() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  for (int sig : kForwarded) {
    struct sigaction old;
    // A signal the caller ignores (nohup, a background job's SIGINT) stays ignored, for ptb-nvcc and its children.
    if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    sigaction(sig, &sa, nullptr);
  }
}

// What main registers to be removed if the compile does not finish (signal or failure).
struct Cleanup {
  std::string dir;
  bool keep = false;
  std::vector<std::string> files; // staged outputs beside the real ones
  void run() {
    for (const std::string &f : files) (void)llvm::sys::fs::remove(f);
    files.clear();
    if (dir.empty()) return;
    if (keep)
      llvm::errs() << "ptb-nvcc: kept the transformed source in " << dir << "\n";
    else
      (void)llvm::sys::fs::remove_directories(dir, /*IgnoreErrors=*/true);
    dir.clear();
  }
};
Cleanup gCleanup;
void cleanupBeforeExit() { gCleanup.run(); }

[[noreturn]] void dieBySignal() {
  int sig = gSignal;
  gCleanup.run();
  signal(sig, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
  raise(sig);
  std::_Exit(128 + sig);
}

// Runs `program` with `args` (args[0] included), no shell, inheriting stdin/stdout/stderr (with
// `stderrFile`, the program's stderr goes there instead). Exits with a message when it cannot be started
// or dies by a signal of its own; when ptb-nvcc was signalled, ends the same way (dieBySignal).
int run(const std::string &program, const std::vector<std::string> &args, const std::string &stderrFile = "") {
  if (gSignal) dieBySignal();
  std::vector<char *> argv;
  for (const std::string &a : args) argv.push_back(const_cast<char *>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!stderrFile.empty())
    posix_spawn_file_actions_addopen(&actions, 2, stderrFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  // The forwarded signals are blocked from before the child exists until its id is recorded; the child
  // starts with the mask ptb-nvcc was given.
  sigset_t block, old;
  sigemptyset(&block);
  for (int sig : kForwarded) sigaddset(&block, sig);
  sigprocmask(SIG_BLOCK, &block, &old);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setsigmask(&attr, &old);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int sig : kForwarded) {
    struct sigaction current;
    if (sigaction(sig, nullptr, &current) == 0 && current.sa_handler != SIG_IGN) sigaddset(&defaults, sig);
  }
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  int err = posix_spawn(&pid, program.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  if (err == 0) gChild = pid;
  sigprocmask(SIG_SETMASK, &old, nullptr);
  if (err != 0) fail("cannot run '" + program + "': " + std::strerror(err));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) fail("cannot wait for '" + program + "': " + std::strerror(errno));
  }
  gChild = 0;
  if (gSignal) dieBySignal();
  if (WIFSIGNALED(status))
    fail("'" + program + "' was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
         strsignal(WTERMSIG(status)) + ")");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

// PTB_NVCC_VERBOSE: a command line, each word quoted.
void sayCommand(const std::vector<std::string> &args) {
  llvm::errs() << "ptb-nvcc:";
  for (auto &a : args) llvm::errs() << " '" << a << "'";
  llvm::errs() << "\n";
}

// ptb-transform: beside this executable, else $PTB_TRANSFORM, else on PATH.
std::string findTransform(const std::string &self) {
  llvm::SmallString<256> beside(llvm::sys::path::parent_path(self));
  llvm::sys::path::append(beside, "ptb-transform");
  if (llvm::sys::fs::can_execute(beside)) return std::string(beside);
  std::string env = envString("PTB_TRANSFORM");
  if (!env.empty()) {
    if (!llvm::sys::fs::can_execute(env)) fail("PTB_TRANSFORM='" + env + "' is not an executable file");
    return env;
  }
  if (auto found = llvm::sys::findProgramByName("ptb-transform")) return *found;
  fail("ptb-transform not found (not beside " + self + ", PTB_TRANSFORM not set, not on PATH)");
}

// The runtime headers: $PTB_RUNTIME_INCLUDE, else <prefix>/include beside <prefix>/bin/ptb-nvcc, else the
// source tree's runtime/include this executable was built from.
std::string findRuntimeInclude(const std::string &self) {
  auto has = [](StringRef dir) {
    llvm::SmallString<256> p(dir);
    llvm::sys::path::append(p, "ptb", "ptb.cuh");
    return llvm::sys::fs::exists(p);
  };
  std::string env = envString("PTB_RUNTIME_INCLUDE");
  if (!env.empty()) {
    if (!has(env)) fail("PTB_RUNTIME_INCLUDE='" + env + "' holds no ptb/ptb.cuh");
    return env;
  }
  llvm::SmallString<256> installed(llvm::sys::path::parent_path(llvm::sys::path::parent_path(self)));
  llvm::sys::path::append(installed, "include");
  if (has(installed)) return std::string(installed);
  if (has(PTB_SOURCE_RUNTIME_INCLUDE)) return PTB_SOURCE_RUNTIME_INCLUDE;
  fail("the PTB runtime headers (ptb/ptb.cuh) were found neither in " + installed + " nor in " +
       PTB_SOURCE_RUNTIME_INCLUDE + "; set PTB_RUNTIME_INCLUDE");
}

// The CUDA installation of the compiler (<root>/bin/nvcc), so that ptb-transform parses with the same
// headers nvcc compiles with; "" when the compiler is not nvcc in a CUDA tree (ptb-transform looks itself).
std::string cudaRootOf(const std::string &compilerPath) {
  if (compilerPath.empty() || llvm::sys::path::stem(compilerPath) != "nvcc") return "";
  llvm::SmallString<256> abs(compilerPath);
  (void)llvm::sys::fs::make_absolute(abs);
  llvm::SmallString<256> root(llvm::sys::path::parent_path(llvm::sys::path::parent_path(abs)));
  llvm::SmallString<256> header(root);
  llvm::sys::path::append(header, "include", "cuda_runtime.h");
  if (!llvm::sys::fs::exists(header)) {
    llvm::SmallString<256> real;
    if (llvm::sys::fs::real_path(abs, real)) return "";
    root = llvm::sys::path::parent_path(llvm::sys::path::parent_path(real));
    header = root;
    llvm::sys::path::append(header, "include", "cuda_runtime.h");
    if (!llvm::sys::fs::exists(header)) return "";
  }
  return std::string(root);
}

std::string absolute(StringRef path) {
  llvm::SmallString<256> p(path);
  (void)llvm::sys::fs::make_absolute(p);
  llvm::sys::path::remove_dots(p, /*remove_dot_dot=*/true);
  return std::string(p);
}

// A new file named `<path>.ptb-nvcc-XXXXXX<suffix>` beside `path` (made here, so the name is ours),
// removed if the compile does not finish.
std::string uniqueFileBeside(const std::string &path, const std::string &suffix) {
  llvm::SmallString<256> made;
  int fd = -1;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(path + ".ptb-nvcc-%%%%%%" + suffix, fd, made))
    fail("cannot create a file beside '" + path + "': " + ec.message());
  close(fd);
  gCleanup.files.push_back(std::string(made));
  return std::string(made);
}

} // namespace

int compileMain(int argc, char **argv) {
  if (argc >= 2 && (StringRef(argv[1]) == "--help" || StringRef(argv[1]) == "-h")) {
    llvm::outs() << "Usage: ptb-nvcc <nvcc> <nvcc arguments...>\n"
                    "Compiles ptb-transform's output of the one CUDA source of an nvcc compile command, with the\n"
                    "command's own flags; passes every other command to the compiler unchanged (docs/ptb-nvcc.md).\n"
                    "Environment: PTB_DISABLE=1 (pass everything through), PTB_NVCC_KEEP=1 (keep the transformed\n"
                    "source), PTB_NVCC_VERBOSE=1 (say what is done), PTB_TRANSFORM, PTB_RUNTIME_INCLUDE.\n";
    return 0;
  }
  if (argc >= 2 && StringRef(argv[1]) == "--version") {
    llvm::outs() << "ptb-nvcc " << PTB_VERSION << "\n";
    return 0;
  }
  if (argc < 2) fail("usage: ptb-nvcc <nvcc> <nvcc arguments...> (see --help)");

  const std::string compiler = argv[1];
  const std::string compilerPath = findProgram(compiler);
  if (compilerPath.empty()) fail("compiler '" + compiler + "' not found on PATH");
  std::vector<std::string> original(argv + 1, argv + argc); // compiler first
  std::vector<std::string> args(argv + 2, argv + argc);
  const bool verbose = envFlag("PTB_NVCC_VERBOSE");

  if (envFlag("PTB_DISABLE")) {
    if (verbose) llvm::errs() << "ptb-nvcc: PTB_DISABLE is set: running the command unchanged\n";
    return run(compilerPath, original);
  }

  std::vector<std::string> expanded;
  bool hadOptionsFiles = false;
  std::string error;
  if (!expandOptionsFiles(args, expanded, hadOptionsFiles, error)) fail(error);
  Classification c = classify(expanded);
  if (c.action == Action::PassThrough) {
    if (c.warnUntransformed)
      llvm::errs() << "ptb-nvcc: warning: " << c.reason << ": compiled as written, not transformed\n";
    else if (verbose)
      llvm::errs() << "ptb-nvcc: passed through (" << c.reason << ")\n";
    return run(compilerPath, original);
  }

  const std::string self = selfPath(argv[0]);
  const std::string transform = findTransform(self);
  const std::string runtimeInclude = findRuntimeInclude(self);
  const Input &input = *c.cudaInput;
  if (!llvm::sys::fs::exists(input.path)) fail("input '" + input.path + "' does not exist");

  // A private directory (mode 0700) for ptb-transform's output and its copies of headers.
  llvm::SmallString<256> tempDir;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("ptb-nvcc", tempDir))
    fail("cannot create a temporary directory: " + ec.message());
  const std::string tempDirAbs = absolute(tempDir);
  gCleanup.dir = tempDirAbs;
  gCleanup.keep = envFlag("PTB_NVCC_KEEP");

  llvm::SmallString<256> tempOutput(tempDirAbs);
  llvm::sys::path::append(tempOutput, llvm::sys::path::stem(input.path).str() + ".ptb" +
                                          llvm::sys::path::extension(input.path).str());

  // Twins apart (docs/ptb-nvcc.md): an object compile gets the twins in a module of their own, merged
  // into the object by `ld -r`, unless PTB_NVCC_TWINS_TOGETHER=1 or no `ld` is found.
  std::string linker;
  if (compilesOwnModule(expanded, c) && !envFlag("PTB_NVCC_TWINS_TOGETHER")) {
    linker = findProgram(envString("PTB_LD").empty() ? "ld" : envString("PTB_LD"));
    if (linker.empty() && verbose) llvm::errs() << "ptb-nvcc: no 'ld' on PATH: the twins stay in the module\n";
  }
  const std::string twinsSource = ptb::twinsPartPath(tempOutput);
  llvm::SmallString<256> twinsObject(tempDirAbs);
  llvm::sys::path::append(twinsObject, "twins.o");

  // 1. ptb-transform, with the flags that matter to its parse.
  std::vector<std::string> t{transform};
  std::string cudaRoot = cudaRootOf(compilerPath);
  if (!cudaRoot.empty()) t.push_back("--cuda-path=" + cudaRoot);
  if (!linker.empty()) t.push_back("--twins-apart");
  t.push_back("-o");
  t.push_back(std::string(tempOutput));
  t.push_back(input.path);
  t.push_back("--");
  for (std::string &f : parseFlags(expanded)) t.push_back(std::move(f));
  if (verbose) sayCommand(t);
  // Its stderr is shown whole when it fails or with PTB_NVCC_VERBOSE; otherwise without its one-line
  // summaries per file ("ptb-transform: a.cu -> ...: 1 kernel made PTB, ...") and its remarks (with their
  // "In file included from" lines and source excerpt: "the twins stay in the program's module", printed
  // for every source whose kernels sit in headers), which would make every compile of a build talk.
  // Warnings and notes (kernels left as they are) are always shown.
  llvm::SmallString<256> transformErr(tempDirAbs);
  llvm::sys::path::append(transformErr, "ptb-transform.stderr");
  int rc = run(transform, t, std::string(transformErr));
  if (auto err = llvm::MemoryBuffer::getFile(transformErr)) {
    llvm::SmallVector<StringRef, 16> lines;
    (*err)->getBuffer().split(lines, '\n');
    const bool quiet = rc == 0 && !verbose;
    std::vector<StringRef> includedFrom; // held until the diagnostic they lead to is known
    bool inRemark = false;
    for (size_t i = 0; i < lines.size(); ++i) {
      StringRef line = lines[i];
      if (i + 1 == lines.size() && line.empty()) break;
      if (quiet) {
        if (inRemark && line.starts_with(" ")) continue; // the remark's source excerpt
        inRemark = false;
        if (line.starts_with("In file included from ") ||
            (!includedFrom.empty() && line.starts_with("                 from "))) {
          includedFrom.push_back(line);
          continue;
        }
        if (line.contains(": remark: ")) {
          includedFrom.clear();
          inRemark = true;
          continue;
        }
        for (StringRef held : includedFrom) llvm::errs() << held << "\n";
        includedFrom.clear();
      }
      // The tool's own lines start with its name: the summaries ("ptb-transform: a.cu -> a.ptb.cu: ...", "...: 9
      // MiB to parse; ...") and, when it fails (then nothing is hidden), "nothing written". Its diagnostics
      // never do: `file:line:col: warning: ...` or `error: ...` (lib/Frontend/Diagnostics.cpp).
      if (quiet && line.starts_with("ptb-transform: ")) continue;
      llvm::errs() << line << "\n";
    }
    for (StringRef held : includedFrom) llvm::errs() << held << "\n";
  }
  if (rc != 0) {
    llvm::errs() << "ptb-nvcc: error: ptb-transform failed on " << input.path << " (exit " << rc
                 << "); nothing compiled (PTB_DISABLE=1 compiles the original)\n";
    return rc;
  }

  // 2. nvcc on the output: the same arguments, the input replaced, the runtime headers added, and the
  //    outputs nvcc would name after the input named explicitly after the original.
  std::string outputFile = c.outputFile.empty() ? defaultOutputName(c) : c.outputFile;
  std::string depFile = c.depWithCompile ? dependencyFileName(c, outputFile) : "";
  // Twins apart: nvcc writes the object under a unique name beside it, the twins' object is merged into
  // that, and the result is renamed onto the object (one rename: compiles to one -o at the same time each
  // put a whole object there, and a compile killed half-way leaves no object without its twins).
  const bool staged = !linker.empty() && !outputFile.empty();
  std::string objectStage, depSource = depFile;
  std::vector<std::string> n{compiler};
  if (staged) {
    objectStage = uniqueFileBeside(outputFile, ".o");
    for (std::string &a : replaceInput(expanded, input.index, std::string(tempOutput),
                                       {"-o", "--output-file", "-MF", "--dependency-output"}))
      n.push_back(std::move(a));
    n.push_back("-o");
    n.push_back(objectStage);
    if (c.depWithCompile) {
      llvm::SmallString<256> deps(tempDirAbs);
      llvm::sys::path::append(deps, "deps.d");
      depSource = std::string(deps);
      n.push_back("-MF");
      n.push_back(depSource);
      if (c.depTarget.empty()) { // nvcc's target without -MT: the -o as written
        n.push_back("-MT");
        n.push_back(outputFile);
      }
    }
  } else {
    for (size_t i = 0; i < expanded.size(); ++i) n.push_back(i == input.index ? std::string(tempOutput) : expanded[i]);
    if (c.outputFile.empty() && !outputFile.empty()) {
      n.push_back("-o");
      n.push_back(outputFile);
    }
    if (c.depWithCompile) {
      if (c.depFile.empty() && c.outputFile.empty() && !depFile.empty()) {
        n.push_back("-MF");
        n.push_back(depFile);
      }
      // With -odir nvcc names the target <-odir>/<-o> (or <-odir>/<-MT>), even where -o has a directory:
      // for the -o added above, the name alone gives the target it names without -o.
      if (c.outputFile.empty() && !c.outputDir.empty() && c.depTarget.empty() && !outputFile.empty()) {
        n.push_back("-MT");
        n.push_back(llvm::sys::path::filename(outputFile).str());
      }
    }
  }
  n.push_back("-I");
  n.push_back(runtimeInclude);
  if (verbose) sayCommand(n);
  rc = run(compilerPath, n);
  if (rc != 0) return rc;

  // 2b. The twins part, when it has twins: compiled with the same flags and merged into the object. A
  //     part without twins (no kernel, or the kernels in headers: ptb-transform says why) is not compiled.
  std::string finalStage = objectStage;
  if (staged) {
    auto twins = llvm::MemoryBuffer::getFile(twinsSource);
    if (!twins) fail("ptb-transform wrote no twins part '" + twinsSource + "'");
    if ((*twins)->getBuffer().contains(ptb::kTwinsPartDefine)) {
      std::vector<std::string> tn{compiler};
      for (std::string &a : twinsPartArguments(expanded, input.index, twinsSource, std::string(twinsObject)))
        tn.push_back(std::move(a));
      tn.push_back("-I");
      tn.push_back(runtimeInclude);
      if (verbose) sayCommand(tn);
      rc = run(compilerPath, tn);
      if (rc != 0) return rc;
      std::string merged = uniqueFileBeside(outputFile, ".merged.o");
      std::vector<std::string> ld{linker, "-r", "-o", merged, objectStage, std::string(twinsObject)};
      if (verbose) sayCommand(ld);
      rc = run(linker, ld);
      if (rc != 0) {
        llvm::errs() << "ptb-nvcc: error: '" << linker << " -r' could not merge the twins' object into " << outputFile
                     << " (PTB_NVCC_TWINS_TOGETHER=1 keeps the twins in the program's module)\n";
        return rc;
      }
      finalStage = merged;
    } else if (verbose) {
      llvm::errs() << "ptb-nvcc: the twins part has no twins: not compiled\n";
    }
  }

  // 3. The dependency file names the original, not the temporary files (before they are removed); written
  //    under a unique name beside it and renamed onto it.
  if (!depFile.empty()) {
    auto buf = llvm::MemoryBuffer::getFile(depSource);
    if (!buf) {
      llvm::errs() << "ptb-nvcc: error: cannot read the dependency file '" << depSource
                   << "': " << buf.getError().message() << "\n";
      return 1;
    }
    std::string inputDir = llvm::sys::path::parent_path(absolute(input.path)).str();
    std::string text =
        rewriteDependencies((*buf)->getBuffer().str(), tempDirAbs, std::string(tempOutput), input.path, inputDir);
    buf->reset();
    std::string depStage = uniqueFileBeside(depFile, ".d");
    std::error_code ec;
    {
      llvm::raw_fd_ostream os(depStage, ec, llvm::sys::fs::OF_None);
      if (!ec) {
        os << text;
        os.close();
        if (os.has_error()) ec = os.error();
        os.clear_error();
      }
    }
    if (!ec) ec = llvm::sys::fs::rename(depStage, depFile);
    if (ec) {
      llvm::errs() << "ptb-nvcc: error: cannot write the dependency file '" << depFile << "': " << ec.message() << "\n";
      return 1;
    }
  }
  if (staged) {
    if (gSignal) dieBySignal();
    if (std::error_code ec = llvm::sys::fs::rename(finalStage, outputFile))
      fail("cannot write '" + outputFile + "': " + ec.message());
  }
  return 0;
}

int main(int argc, char **argv) {
  installSignalHandlers();
  int rc = compileMain(argc, argv);
  if (gSignal) dieBySignal();
  gCleanup.run();
  return rc;
}

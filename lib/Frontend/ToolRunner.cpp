#include "ToolRunner.h"
#include "CudaFrontend.h"
#include "Diagnostics.h"
#include "NvccDialect.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PTB_CLANG_EXECUTABLE
#define PTB_CLANG_EXECUTABLE "clang++"
#endif

namespace ptb {

namespace {

class CallbackConsumer : public clang::ASTConsumer {
public:
  CallbackConsumer(clang::CompilerInstance &ci,
                   llvm::function_ref<void(clang::CompilerInstance &, clang::ASTContext &)> cb)
      : ci(ci), cb(cb) {}
  void HandleTranslationUnit(clang::ASTContext &ctx) override {
    // Analyse only what parsed cleanly: a broken AST gives wrong answers.
    if (ci.getDiagnostics().hasErrorOccurred()) return;
    cb(ci, ctx);
  }

private:
  clang::CompilerInstance &ci;
  llvm::function_ref<void(clang::CompilerInstance &, clang::ASTContext &)> cb;
};

class CallbackAction : public clang::ASTFrontendAction {
public:
  explicit CallbackAction(llvm::function_ref<void(clang::CompilerInstance &, clang::ASTContext &)> cb) : cb(cb) {}
  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance &ci, llvm::StringRef) override {
    return std::make_unique<CallbackConsumer>(ci, cb);
  }
  bool BeginInvocation(clang::CompilerInstance &ci) override {
    // The runner prints the diagnostics it keeps; no "N errors generated" line from a discarded attempt.
    ci.getDiagnosticOpts().ShowCarets = false;
    return true;
  }

private:
  llvm::function_ref<void(clang::CompilerInstance &, clang::ASTContext &)> cb;
};

class CallbackFactory : public clang::tooling::FrontendActionFactory {
public:
  explicit CallbackFactory(llvm::function_ref<void(clang::CompilerInstance &, clang::ASTContext &)> cb) : cb(cb) {}
  std::unique_ptr<clang::FrontendAction> create() override { return std::make_unique<CallbackAction>(cb); }

private:
  llvm::function_ref<void(clang::CompilerInstance &, clang::ASTContext &)> cb;
};

bool runOne(const ParseRequest &request, clang::tooling::CompilationDatabase &db, const std::string &file,
            const CudaInstall &cuda, const std::string &stubDir, const FileSelection &selection, ParseSide side,
            clang::DiagnosticConsumer *diags,
            llvm::function_ref<void(clang::CompilerInstance &, clang::ASTContext &)> onTranslationUnit) {
  // The main file and the selected included files are read with nvcc's spaced launch chevrons normalized
  // (same length: offsets stay valid); the front end's headers come from memory.
  std::string mainPath = absolutePath(file);
  // Inputs read from pipes come from memory: a pipe cannot be read a second time.
  llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> base = llvm::vfs::getRealFileSystem();
  if (!request.inputTexts.empty()) {
    auto memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
    for (const auto &[path, text] : request.inputTexts)
      memory->addFile(path, 0, llvm::MemoryBuffer::getMemBufferCopy(text, path));
    auto overlay = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(base);
    overlay->pushOverlay(memory);
    base = overlay;
  }
  auto normalized = chevronNormalizingFileSystem(base, [mainPath, &selection](llvm::StringRef p) {
    return absolutePath(p) == mainPath || selection.selectsPath(p);
  });
  // The user's macros, defined after clang's CUDA wrapper (userMacrosAdjuster), come from memory too.
  auto userMacros = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  auto parseFs = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(frontendFileSystem(normalized));
  parseFs->pushOverlay(userMacros);
  clang::tooling::ClangTool tool(db, {file}, std::make_shared<clang::PCHContainerOperations>(), parseFs);
  tool.setDiagnosticConsumer(diags);
  tool.setPrintErrorMessage(false);
  tool.clearArgumentsAdjusters();
  tool.appendArgumentsAdjuster(clang::tooling::getClangStripOutputAdjuster());
  tool.appendArgumentsAdjuster(cudaArgumentsAdjuster(cuda, stubDir, side));
  // Parse as Debian's clang++ 19 whatever compiler the database names (nvcc, g++, ...): the driver finds
  // its resource directory and the GCC installation from this path.
  tool.appendArgumentsAdjuster([](const clang::tooling::CommandLineArguments &in, llvm::StringRef) {
    auto out = in;
    if (!out.empty()) out[0] = PTB_CLANG_EXECUTABLE;
    return out;
  });
  for (auto it = request.extraArgsBefore.rbegin(); it != request.extraArgsBefore.rend(); ++it)
    tool.appendArgumentsAdjuster(
        clang::tooling::getInsertArgumentAdjuster(it->c_str(), clang::tooling::ArgumentInsertPosition::BEGIN));
  for (const std::string &a : request.extraArgs)
    tool.appendArgumentsAdjuster(
        clang::tooling::getInsertArgumentAdjuster(a.c_str(), clang::tooling::ArgumentInsertPosition::END));
  tool.appendArgumentsAdjuster(userMacrosAdjuster(userMacros));
  CallbackFactory factory(onTranslationUnit);
  return tool.run(&factory) == 0;
}

// Reads a pipe to its end, at most kMaxPipedInputBytes. False with `why` set on failure.
bool readPipe(const std::string &file, std::string &text, std::string &why) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC); // a FIFO: waits for a writer
  if (fd < 0) {
    why = std::string("cannot read the input: ") + std::strerror(errno);
    return false;
  }
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      why = std::string("cannot read the input: ") + std::strerror(errno);
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    if (text.size() + size_t(n) > kMaxPipedInputBytes) {
      why = "the input is a pipe that holds more than " + std::to_string(kMaxPipedInputBytes >> 20) +
            " MiB; write it to a file and give the file";
      ::close(fd);
      return false;
    }
    text.append(buf, size_t(n));
  }
  ::close(fd);
  return true;
}

} // namespace

bool readInputs(ParseRequest &request) {
  bool ok = true;
  for (const std::string &file : request.files) {
    auto fail = [&](const std::string &why) {
      print(llvm::errs(), {clang::DiagnosticsEngine::Error, file, 0, 0, why});
      ok = false;
    };
    std::string abs = absolutePath(file);
    if (request.inputTexts.count(abs)) continue; // the same pipe given twice: read once
    struct stat st;
    if (::stat(file.c_str(), &st) != 0) {
      fail(std::string("cannot read the input: ") + std::strerror(errno));
      continue;
    }
    if (S_ISREG(st.st_mode)) {
      if (::access(file.c_str(), R_OK) != 0) fail(std::string("cannot read the input: ") + std::strerror(errno));
      continue;
    }
    if (S_ISFIFO(st.st_mode)) {
      std::string text, why;
      if (readPipe(file, text, why))
        request.inputTexts[abs] = std::move(text);
      else
        fail(why);
      continue;
    }
    const char *what = S_ISDIR(st.st_mode)    ? "a directory"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "not a regular file";
    fail(std::string("the input is ") + what + ", not a source file (inputs are regular files, or pipes read once)");
  }
  return ok;
}

std::optional<std::string> inputText(const ParseRequest &request, const std::string &file) {
  auto it = request.inputTexts.find(absolutePath(file));
  if (it != request.inputTexts.end()) return it->second;
  auto buf = llvm::MemoryBuffer::getFile(file);
  if (!buf) return std::nullopt;
  return (*buf)->getBuffer().str();
}

bool forEachTranslationUnit(
    const ParseRequest &request,
    llvm::function_ref<void(clang::CompilerInstance &, clang::ASTContext &)> onTranslationUnit) {
  ParseRequest mainOnly = request;
  mainOnly.headerFilter = "";
  return forEachTranslationUnit(mainOnly, [&](clang::CompilerInstance &ci, clang::ASTContext &ctx,
                                              const FileSelection &) { onTranslationUnit(ci, ctx); });
}

bool forEachTranslationUnit(
    const ParseRequest &request,
    llvm::function_ref<void(clang::CompilerInstance &, clang::ASTContext &, const FileSelection &)> onFile) {
  std::string why;
  auto cuda = findCuda(request.cudaPath, why);
  if (!cuda) {
    llvm::errs() << "error: " << why << "\n";
    return false;
  }
  if (!cuda->warning.empty()) llvm::errs() << "warning: " << cuda->warning << "\n";
  std::string dbError;
  auto db = makeCompilationDatabase(request.buildDir, request.argsAfterDashDash, dbError);
  if (!db) {
    llvm::errs() << "error: " << dbError << "\n";
    return false;
  }
  std::string stubDir = frontendIncludeDir();
  std::vector<FileSelection> selections;
  for (const std::string &file : request.files) {
    std::string error;
    auto selection = FileSelection::make(file, request.headerFilter, {cuda->root}, error);
    if (!selection) {
      llvm::errs() << "error: " << error << "\n";
      return false;
    }
    selections.push_back(std::move(*selection));
  }
  bool allOk = true;
  for (size_t fileIndex = 0; fileIndex < request.files.size(); ++fileIndex) {
    const std::string &file = request.files[fileIndex];
    const FileSelection &selection = selections[fileIndex];
    auto onTranslationUnit = [&](clang::CompilerInstance &ci, clang::ASTContext &ctx) { onFile(ci, ctx, selection); };
    // First the device side, its diagnostics held back; if it fails before the analysis ran (clang cannot
    // parse dynamic parallelism on the device side, for one), the host side, which does not see
    // `#ifdef __CUDA_ARCH__` branches, with a note that says so.
    std::string held;
    llvm::raw_string_ostream heldStream(held);
    clang::DiagnosticOptions *heldOpts = new clang::DiagnosticOptions();
    clang::TextDiagnosticPrinter heldPrinter(heldStream, heldOpts);
    bool analysed = false;
    auto counted = [&](clang::CompilerInstance &ci, clang::ASTContext &ctx) {
      analysed = true;
      onTranslationUnit(ci, ctx);
    };
    bool ok = runOne(request, *db, file, *cuda, stubDir, selection, ParseSide::Device, &heldPrinter, counted);
    heldStream.flush();
    if (ok || analysed) {
      llvm::errs() << held;
      allOk &= ok;
      continue;
    }
    std::string hostHeld;
    llvm::raw_string_ostream hostStream(hostHeld);
    clang::TextDiagnosticPrinter hostPrinter(hostStream, new clang::DiagnosticOptions());
    ok = runOne(request, *db, file, *cuda, stubDir, selection, ParseSide::Host, &hostPrinter, onTranslationUnit);
    hostStream.flush();
    if (ok) {
      llvm::StringRef first = llvm::StringRef(held).split('\n').first;
      llvm::errs() << file << ": note: the device-side parse failed, so the host-side parse was used (it does "
                   << "not see `#ifdef __CUDA_ARCH__` branches); the device side said: " << first << "\n";
    }
    llvm::errs() << hostHeld;
    allOk &= ok;
  }
  return allOk;
}

} // namespace ptb

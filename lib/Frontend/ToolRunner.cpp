#include "ToolRunner.h"
#include "CudaFrontend.h"
#include "NvccDialect.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/Support/raw_ostream.h"

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
  auto normalized = chevronNormalizingFileSystem(llvm::vfs::getRealFileSystem(), [mainPath, &selection](llvm::StringRef p) {
    return absolutePath(p) == mainPath || selection.selectsPath(p);
  });
  clang::tooling::ClangTool tool(db, {file}, std::make_shared<clang::PCHContainerOperations>(),
                                 frontendFileSystem(normalized));
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
  CallbackFactory factory(onTranslationUnit);
  return tool.run(&factory) == 0;
}

} // namespace

bool forEachTranslationUnit(const ParseRequest &request,
                            llvm::function_ref<void(clang::CompilerInstance &, clang::ASTContext &)> onTranslationUnit) {
  ParseRequest mainOnly = request;
  mainOnly.headerFilter = "";
  return forEachTranslationUnit(mainOnly, [&](clang::CompilerInstance &ci, clang::ASTContext &ctx, const FileSelection &) {
    onTranslationUnit(ci, ctx);
  });
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

#include "CudaTestSupport.h"

#include "CudaFrontend.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/Basic/FileManager.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/VirtualFileSystem.h"

#ifndef PTB_TEST_CLANG_EXECUTABLE
#define PTB_TEST_CLANG_EXECUTABLE "/usr/lib/llvm-19/bin/clang++"
#endif

namespace ptbtest {

const CudaSetup &cudaSetup() {
  static const CudaSetup setup = [] {
    CudaSetup s;
    if (std::getenv("PTB_UNIT_PRETEND_NO_CUDA")) { // to check the skip path on a machine that has CUDA
      s.why = "PTB_UNIT_PRETEND_NO_CUDA is set";
      return s;
    }
    std::string why;
    auto cuda = ptb::findCuda("", why);
    if (!cuda) {
      s.why = why;
      return s;
    }
    s.cuda = *cuda;
    s.stubDir = ptb::frontendIncludeDir();
    s.ok = true;
    return s;
  }();
  return setup;
}

std::vector<std::string> cudaParseArgs(const std::string &file, const std::vector<std::string> &extra,
                                       ptb::ParseSide side) {
  const CudaSetup &s = cudaSetup();
  clang::tooling::CommandLineArguments in{"clang++"};
  in.insert(in.end(), extra.begin(), extra.end());
  in.push_back(file);
  clang::tooling::CommandLineArguments out = ptb::cudaArgumentsAdjuster(s.cuda, s.stubDir, side)(in, file);
  // Drop argv[0] and the file: the tooling entry points add their own.
  std::vector<std::string> args;
  for (size_t i = 1; i < out.size(); ++i)
    if (out[i] != file) args.push_back(out[i]);
  return args;
}

void DiagCapture::HandleDiagnostic(clang::DiagnosticsEngine::Level level, const clang::Diagnostic &info) {
  clang::DiagnosticConsumer::HandleDiagnostic(level, info);
  llvm::SmallString<256> text;
  info.FormatDiagnostic(text);
  std::string where;
  if (info.getLocation().isValid() && info.hasSourceManager()) {
    const clang::SourceManager &sm = info.getSourceManager();
    clang::PresumedLoc p = sm.getPresumedLoc(sm.getFileLoc(info.getLocation()));
    if (p.isValid()) where = std::to_string(p.getLine()) + ":" + std::to_string(p.getColumn()) + ": ";
  }
  const char *lv = level == clang::DiagnosticsEngine::Error || level == clang::DiagnosticsEngine::Fatal ? "error"
                   : level == clang::DiagnosticsEngine::Warning                                         ? "warning"
                   : level == clang::DiagnosticsEngine::Note                                            ? "note"
                                                                                                        : "remark";
  if (level >= clang::DiagnosticsEngine::Error)
    ++errors;
  else if (level == clang::DiagnosticsEngine::Warning)
    ++warnings;
  messages.push_back(where + lv + ": " + std::string(text));
}

std::string DiagCapture::all() const { return join(messages, "\n"); }

const ptb::Kernel *ParsedTU::kernel(const std::string &name) const {
  for (const ptb::Kernel &k : inv.kernels)
    if (k.name == name || k.qualifiedName == name) return &k;
  return nullptr;
}

namespace {

// As clang::tooling::buildASTFromCodeWithArgs, with the file system of the parse given (the front end's).
class ASTBuilder : public clang::tooling::ToolAction {
public:
  bool runInvocation(std::shared_ptr<clang::CompilerInvocation> invocation, clang::FileManager *files,
                     std::shared_ptr<clang::PCHContainerOperations> pch, clang::DiagnosticConsumer *diags) override {
    ast = clang::ASTUnit::LoadFromCompilerInvocation(
        invocation, std::move(pch),
        clang::CompilerInstance::createDiagnostics(&invocation->getDiagnosticOpts(), diags, /*ShouldOwnClient=*/false),
        files);
    return ast && !ast->getDiagnostics().getClient()->getNumErrors();
  }
  std::unique_ptr<clang::ASTUnit> ast;
};

// As the tool: the front end's file system (its headers in memory), with `code` as the file `file`.
llvm::IntrusiveRefCntPtr<clang::FileManager> filesWithCode(const std::string &code, const std::string &file) {
  auto overlay = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(ptb::frontendFileSystem());
  auto memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  overlay->pushOverlay(memory);
  memory->addFile(file, 0, llvm::MemoryBuffer::getMemBufferCopy(code, file));
  return llvm::makeIntrusiveRefCnt<clang::FileManager>(clang::FileSystemOptions(), overlay);
}

// The clang command line that parses `file` for one side, as the tool does.
std::vector<std::string> parseCommand(const std::string &file, const std::vector<std::string> &extraArgs,
                                      ptb::ParseSide side) {
  std::vector<std::string> command{PTB_TEST_CLANG_EXECUTABLE};
  for (auto &a : cudaParseArgs(file, extraArgs, side)) command.push_back(a);
  command.push_back(file);
  return command;
}

std::unique_ptr<ParsedTU> parseOneSide(const std::string &code, const std::string &file,
                                       const std::vector<std::string> &extraArgs, ptb::ParseSide side) {
  auto tu = std::make_unique<ParsedTU>();
  tu->side = side;
  tu->diags = std::make_unique<DiagCapture>();
  auto files = filesWithCode(code, file);
  std::vector<std::string> command = parseCommand(file, extraArgs, side);
  ASTBuilder builder;
  clang::tooling::ToolInvocation invocation(command, &builder, files.get(),
                                            std::make_shared<clang::PCHContainerOperations>());
  invocation.setDiagnosticConsumer(tu->diags.get());
  invocation.run();
  tu->ast = std::move(builder.ast);
  tu->ok = tu->ast && tu->diags->errors == 0 && !tu->ast->getDiagnostics().hasErrorOccurred();
  return tu;
}

} // namespace

std::unique_ptr<ParsedTU> parseCuda(const std::string &code, const std::string &file,
                                    const std::vector<std::string> &extraArgs) {
  auto tu = parseOneSide(code, file, extraArgs, ptb::ParseSide::Device);
  if (!tu->ok) {
    std::vector<std::string> deviceSaid = tu->diags->messages;
    tu = parseOneSide(code, file, extraArgs, ptb::ParseSide::Host);
    tu->deviceDiags = std::move(deviceSaid);
  }
  if (tu->ok) tu->inv = ptb::analyzeTranslationUnit(tu->ast->getASTContext());
  return tu;
}

namespace {

class RewriteConsumer : public clang::ASTConsumer {
public:
  RewriteConsumer(clang::CompilerInstance &ci, const ptb::RewriteOptions &opts, RewriteRun &run)
      : ci(ci), opts(opts), run(run) {}
  void HandleTranslationUnit(clang::ASTContext &ctx) override {
    if (ci.getDiagnostics().hasErrorOccurred()) return; // as ToolRunner: only clean ASTs
    run.parsed = true;
    ptb::Inventory inv = ptb::analyzeTranslationUnit(ctx);
    run.rewriteOk = ptb::rewriteTranslationUnit(ci, ctx, inv, opts, run.result);
  }

private:
  clang::CompilerInstance &ci;
  const ptb::RewriteOptions &opts;
  RewriteRun &run;
};

class RewriteAction : public clang::ASTFrontendAction {
public:
  RewriteAction(const ptb::RewriteOptions &opts, RewriteRun &run) : opts(opts), run(run) {}
  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance &ci, llvm::StringRef) override {
    return std::make_unique<RewriteConsumer>(ci, opts, run);
  }

private:
  const ptb::RewriteOptions &opts;
  RewriteRun &run;
};

} // namespace

namespace {

RewriteRun rewriteOneSide(const std::string &code, const ptb::RewriteOptions &options, const std::string &file,
                          ptb::ParseSide side) {
  RewriteRun run;
  run.side = side;
  auto files = filesWithCode(code, file);
  std::vector<std::string> command = parseCommand(file, {}, side);
  DiagCapture capture;
  clang::tooling::ToolInvocation invocation(command, std::make_unique<RewriteAction>(options, run), files.get());
  invocation.setDiagnosticConsumer(&capture);
  invocation.run();
  run.diags = capture.messages;
  run.errors = capture.errors;
  run.warnings = capture.warnings;
  return run;
}

} // namespace

RewriteRun rewriteCuda(const std::string &code, const ptb::RewriteOptions &options, const std::string &file) {
  // As ToolRunner: the device side; the host side when the device side failed before the analysis ran.
  RewriteRun run = rewriteOneSide(code, options, file, ptb::ParseSide::Device);
  if (!run.parsed) run = rewriteOneSide(code, options, file, ptb::ParseSide::Host);
  return run;
}

std::string RewriteRun::allDiags() const { return join(diags, "\n"); }

std::string join(const std::vector<std::string> &v, const std::string &sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

unsigned countOf(const std::string &haystack, const std::string &needle) {
  if (needle.empty()) return 0;
  unsigned n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + needle.size())) ++n;
  return n;
}

unsigned lineOf(const std::string &code, const std::string &needle) {
  size_t at = code.find(needle);
  if (at == std::string::npos) return 0;
  unsigned line = 1;
  for (size_t i = 0; i < at; ++i)
    if (code[i] == '\n') ++line;
  return line;
}

Pos posOf(const std::string &code, const std::string &needle, unsigned skip) {
  Pos p;
  size_t at = code.find(needle);
  if (at == std::string::npos) return p;
  at += skip;
  p.line = 1;
  size_t lineStart = 0;
  for (size_t i = 0; i < at; ++i)
    if (code[i] == '\n') {
      ++p.line;
      lineStart = i + 1;
    }
  p.column = unsigned(at - lineStart) + 1;
  return p;
}

::testing::AssertionResult isAt(const ptb::Location &loc, const std::string &file, Pos pos) {
  if (pos.line == 0)
    return ::testing::AssertionFailure() << "test error: the expected position was not found in the source";
  if (loc.file == file && loc.line == pos.line && loc.column == pos.column) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "location is " << loc.str() << ", expected " << file << ":" << pos.line << ":"
                                       << pos.column;
}

} // namespace ptbtest

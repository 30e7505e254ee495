// Runs a per-translation-unit callback over source files with the project's CUDA parse set up: the
// common driver behind every tool of the project.
#pragma once

#include "FileSelection.h"

#include "clang/AST/ASTContext.h"
#include "clang/Frontend/CompilerInstance.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ptb {

struct ParseRequest {
  std::vector<std::string> files;
  std::string buildDir;                       // -p: directory with compile_commands.json
  std::vector<std::string> argsAfterDashDash; // compiler arguments after `--`
  std::vector<std::string> extraArgs;         // --extra-arg (appended)
  std::vector<std::string> extraArgsBefore;   // --extra-arg-before (prepended)
  std::string cudaPath;                       // --cuda-path
  // --header-filter: which included files are the user's, to be read and rewritten with the main file
  // (FileSelection::make). Only the tools that pass the selection on use it.
  std::optional<std::string> headerFilter;
  // Inputs that are not regular files but pipes (`<(cat a.cu)`, a FIFO), read once by readInputs: their
  // absolute path -> their text, which every parse of them reads instead of the pipe.
  std::map<std::string, std::string> inputTexts;
};

// The most an input read from a pipe may hold (bytes).
constexpr size_t kMaxPipedInputBytes = size_t(64) << 20;

// Checks every input of `request` before anything reads it (docs/ptb-transform.md, "Inputs"): a regular
// file is left to the parse; a pipe or FIFO is read once, here, up to kMaxPipedInputBytes, into
// `request.inputTexts` (a FIFO without a writer waits for one, as `cat` does); a missing file, a
// directory, a device node or a socket is an error (`file: error: ...`). Returns false when there was one.
bool readInputs(ParseRequest &request);

// The text of the input `file`: from `request.inputTexts` when it was read from a pipe, else from disk.
// nullopt when it cannot be read.
std::optional<std::string> inputText(const ParseRequest &request, const std::string &file);

// Parses every file and calls `onTranslationUnit` on each AST that parsed without errors. Diagnostics go
// to stderr in clang's `file:line:col: error:` form; the callback reports its own through the
// CompilerInstance's DiagnosticsEngine. Returns true when every file parsed and no error was reported.
bool forEachTranslationUnit(const ParseRequest &request,
                            llvm::function_ref<void(clang::CompilerInstance &, clang::ASTContext &)> onTranslationUnit);

// The same, with the included files `request.headerFilter` selects for each file (the CUDA installation's
// files are never selected). An invalid filter is an error before any parse.
bool forEachTranslationUnit(
    const ParseRequest &request,
    llvm::function_ref<void(clang::CompilerInstance &, clang::ASTContext &, const FileSelection &)> onTranslationUnit);

} // namespace ptb

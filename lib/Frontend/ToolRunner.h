// Runs a per-translation-unit callback over source files with the project's CUDA parse set up: the
// common driver behind every tool of the project.
#pragma once

#include "FileSelection.h"

#include "clang/AST/ASTContext.h"
#include "clang/Frontend/CompilerInstance.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>
#include <string>
#include <vector>

namespace ptb {

struct ParseRequest {
  std::vector<std::string> files;
  std::string buildDir;                        // -p: directory with compile_commands.json
  std::vector<std::string> argsAfterDashDash;  // compiler arguments after `--`
  std::vector<std::string> extraArgs;          // --extra-arg (appended)
  std::vector<std::string> extraArgsBefore;    // --extra-arg-before (prepended)
  std::string cudaPath;                        // --cuda-path
  // --header-filter: which included files are the user's, to be read and rewritten with the main file
  // (FileSelection::make). Only the tools that pass the selection on use it.
  std::optional<std::string> headerFilter;
};

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

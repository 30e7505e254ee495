// What the parts of the PTB rewrite share (PtbRewrite.cpp runs them in order): the translation unit, the
// options, the edits made so far (each part adds its own), the per-file counts the outputs report, and the
// helpers on files and declarations more than one part needs. Internal to lib/Rewrite.
#pragma once

#include "FileSelection.h"
#include "KernelInventory.h"
#include "PtbRewrite.h"
#include "SourceText.h"

#include "clang/AST/ASTContext.h"
#include "clang/Basic/Diagnostic.h"
#include "clang/Frontend/CompilerInstance.h"

#include <map>
#include <string>
#include <vector>

namespace ptb::rewrite {

using namespace clang;

struct Edit {
  FileID file;
  unsigned offset, length;
  std::string text;
  unsigned order; // insertion order, to keep edits at one offset stable
};

class EditContext : public SourceText {
public:
  EditContext(CompilerInstance &ci, ASTContext &ctx, const Inventory &inv, const RewriteOptions &opts,
              const FileSelection &selection)
      : SourceText(ctx.getSourceManager(), ctx.getLangOpts(), inv.mainFile), astContext(ctx),
        diags(ci.getDiagnostics()), inv(inv), opts(opts), selected(sm, selection) {}

  // `first`: before every other edit at the same offset (a guard that closes what ends there).
  void addEdit(FileID f, unsigned offset, unsigned length, std::string text, bool first = false);

  // One FileID per file: a file entered twice (no include guard) has one FileID per entry, with the same
  // offsets; edits are kept on the first.
  FileID canon(FileID f) const;

  std::string nameOf(FileID f) const;

  std::string destinationOf(FileID f) const;

  // Inserts `declaration` on its own line after the `;` that ends `first` (a declaration before the
  // definition), with #line resuming the original numbering.
  void declareAfterFirstDeclaration(const FunctionDecl *first, const std::string &declaration);

  // An out-of-line definition of a namespace member (`__global__ void ns::k(...) {...}` outside `ns`):
  // the text that reopens its namespaces around what is generated after it, so that the generated names
  // (twin, launcher, clone) are declared where the original is and its body's names resolve as they do
  // in the original. `ok` is false where they cannot be reopened (an anonymous namespace).
  struct NamespaceWrap {
    std::string open, close;
    bool ok = true;
  };

  static NamespaceWrap namespaceWrap(const FunctionDecl *fd);

  // The text before the function's name without the qualifier of an out-of-line definition.
  std::string headBeforeUnqualifiedName(const FunctionDecl *fd) const;

  ASTContext &astContext;
  DiagnosticsEngine &diags;
  const Inventory &inv;
  const RewriteOptions &opts;
  SelectedFiles selected;
  std::vector<Edit> edits;
  unsigned editCount = 0;
  // What each file's output reports (FileOutput).
  struct FileStats {
    std::vector<std::string> transformed, skipped;
    unsigned launches = 0, clones = 0, includes = 0, localIncludes = 0;
  };
  std::map<FileID, FileStats> stats;
};

} // namespace ptb::rewrite

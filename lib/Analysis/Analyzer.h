// The analysis of one translation unit: the source helpers its scans share, and the facts of each
// function body, scanned once when first asked (FunctionFacts.cpp) and kept. Internal to lib/Analysis.
#pragma once

#include "FileSelection.h"
#include "FunctionFacts.h"

#include "clang/AST/ASTContext.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"

#include <map>
#include <set>
#include <string>

namespace ptb::analysis {

using namespace clang;

class Analyzer {
public:
  Analyzer(ASTContext &ctx, const FileSelection &selection)
      : ctx(ctx), sm(ctx.getSourceManager()), selection(selection), selected(sm, this->selection) {}

  Location locate(SourceLocation loc) const {
    Location l;
    if (loc.isInvalid()) return l;
    PresumedLoc p = sm.getPresumedLoc(sm.getFileLoc(loc));
    if (p.isInvalid()) return l;
    l.file = p.getFilename();
    l.line = p.getLine();
    l.column = p.getColumn();
    return l;
  }

  // The '(' that follows `end` (skipping nothing but whitespace/comments).
  SourceLocation lparenAfter(SourceLocation end) const {
    if (end.isInvalid() || end.isMacroID()) return {};
    auto next = Lexer::findNextToken(end, sm, ctx.getLangOpts());
    if (next && next->is(tok::l_paren)) return next->getLocation();
    return {};
  }

  const FunctionFacts &factsOf(const FunctionDecl *fd) {
    auto it = memo.find(fd);
    if (it != memo.end()) return it->second;
    FunctionFacts &f = memo[fd];
    if (const Stmt *body = fd->getBody()) collect(fd, body, f);
    return f;
  }

  std::string macroNameAt(SourceLocation loc) const {
    // The outermost macro expanded in the body that produced `loc`.
    SourceLocation l = loc;
    std::string nameOut;
    while (l.isMacroID()) {
      if (sm.isMacroArgExpansion(l)) {
        l = sm.getImmediateSpellingLoc(l);
        continue;
      }
      nameOut = Lexer::getImmediateMacroName(l, sm, ctx.getLangOpts()).str();
      l = sm.getImmediateExpansionRange(l).getBegin();
    }
    return nameOut;
  }

  // Whether `loc` was written inside a macro definition (as opposed to a macro argument or plain text).
  bool spelledInMacroBody(SourceLocation loc) const {
    while (loc.isMacroID()) {
      if (!sm.isMacroArgExpansion(loc)) return true;
      loc = sm.getImmediateSpellingLoc(loc);
    }
    return false;
  }

  // Where a token of a call is written, for an edit: the location itself or, in a macro argument, where the
  // argument is written; invalid inside a macro definition.
  SourceLocation editableLoc(SourceLocation l) const {
    if (l.isInvalid() || l.isFileID()) return l;
    return spelledInMacroBody(l) ? SourceLocation() : sm.getSpellingLoc(l);
  }

  // The same for the first (start) or last token of an operand: an operand that is a whole macro expansion
  // (`M(a) + b`) is bounded by the macro's name and its closing parenthesis.
  SourceLocation boundaryLoc(SourceLocation l, bool start) const {
    for (int depth = 0; l.isValid() && l.isMacroID() && depth < 16; ++depth) {
      if (!spelledInMacroBody(l)) return sm.getSpellingLoc(l);
      SourceLocation x;
      if (start ? !Lexer::isAtStartOfMacroExpansion(l, sm, ctx.getLangOpts(), &x)
                : !Lexer::isAtEndOfMacroExpansion(l, sm, ctx.getLangOpts(), &x))
        return {};
      l = x;
    }
    return l.isValid() && l.isFileID() ? l : SourceLocation();
  }

  SourceLocation afterTokenAt(SourceLocation l) const {
    return l.isValid() ? Lexer::getLocForEndOfToken(l, 0, sm, ctx.getLangOpts()) : l;
  }

  // The length of an expression's text (0 when it cannot be measured): orders the edits of nested calls.
  unsigned extentOf(const Expr *e) const {
    SourceLocation b = boundaryLoc(e->getBeginLoc(), true), x = boundaryLoc(e->getEndLoc(), false);
    if (b.isInvalid() || x.isInvalid() || sm.getFileID(b) != sm.getFileID(x)) return 0;
    unsigned bo = sm.getFileOffset(b), eo = sm.getFileOffset(x);
    return eo >= bo ? eo - bo + 1 : 0;
  }

  void collect(const FunctionDecl *fd, const Stmt *body, FunctionFacts &f);

  // See ptb::slotDependent (SlotFacts.h).
  bool slotDependent(const FunctionDecl *fd);

  ASTContext &ctx;
  SourceManager &sm;
  FileSelection selection; // a copy: the analyzer outlives the call that made it (Inventory::analysis)
  SelectedFiles selected;  // the main file and the selected included files
  std::map<const FunctionDecl *, FunctionFacts> memo;

private:
  bool slotDependent(const FunctionDecl *fd, std::set<const FunctionDecl *> &stack);
  std::map<const FunctionDecl *, bool> slotDependence; // slotDependent's answers
};

// The text of a token range as written.
std::string textOf(SourceRange r, const SourceManager &sm, const LangOptions &lo);

} // namespace ptb::analysis

// Facts of one function body, gathered once per function and shared by every kernel that reaches it: the
// built-in variables it reads, its barriers, warp-level operations, calls (with the edits that would send
// each to a PTB clone), shared variables, returns and blockers. Internal to lib/Analysis.
#pragma once

#include "FileSelection.h"
#include "KernelInventory.h"
#include "SlotFacts.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace ptb::analysis {

using namespace clang;

// The definition to read for a called function: the instantiation when it has a body, else the pattern.
const FunctionDecl *definitionOf(const FunctionDecl *fd);

// The pattern (what is written in the source) of a function, for cloning.
const FunctionDecl *patternOf(const FunctionDecl *fd);

// One reach of a barrier/blocker/builtin found in a function body.
struct BarrierHit {
  std::string kind;
  bool blockWide;
  SourceLocation loc;
  // A block barrier in a parking task body (docs/ptb-transform.md, "Parking"): the edits that make it a
  // task barrier, or why it cannot be one.
  std::vector<TaskBarrierEdit> edits;
  std::string unrewritable;
};
// A warp-level collective (shuffle, vote, __syncwarp, a tile's operation, WMMA, warp-collective asm): it
// waits for every non-exited thread its mask names, so a parked thread must never be among them.
struct WarpHit { std::string kind; SourceLocation loc; };
struct CallHit {
  CallHit(const FunctionDecl *callee, SourceLocation nameLoc, SourceLocation lparenLoc, SourceLocation callLoc,
          bool hasArgs, bool viaOperatorOrImplicit, bool system = false)
      : callee(callee), nameLoc(nameLoc), lparenLoc(lparenLoc), callLoc(callLoc), hasArgs(hasArgs),
        viaOperatorOrImplicit(viaOperatorOrImplicit), system(system) {}
  const FunctionDecl *callee;  // declaration with a body, as called (instantiation or plain)
  SourceLocation nameLoc, lparenLoc, callLoc;  // nameLoc: the name token, or what identifies an unnamed call
  bool hasArgs;
  bool viaOperatorOrImplicit;  // cannot be sent to a clone by a text edit (`why` says why)
  bool system = false;         // defined in a system header (cub, thrust, ...): followed for barriers only
  std::string why;
  std::vector<CallEdit> edits; // what sends the call to the callee's clone (empty when it cannot be)
};

struct FunctionFacts {
  bool direct[4] = {false, false, false, false};
  std::set<std::string> macros[4];
  std::vector<SourceLocation> indexLocs;  // locations of blockIdx/gridDim reads
  std::vector<BarrierHit> barriers;
  std::vector<WarpHit> warpOps;
  std::vector<Blocker> blockers;
  std::vector<CallHit> calls;
  std::vector<SharedVariable> shared;
  std::vector<const ReturnStmt *> returns;
  std::vector<const LambdaExpr *> lambdasWithoutDefaultCapture;
  std::string coupling;  // the first construct that couples the threads of a block (see Kernel::tasksIndependent)
  SlotFacts slot;        // for the fuser; from the body's own text (not from default arguments it evaluates)
};

// Records a body's SlotFacts as the scan meets its nodes (SlotFacts.cpp).
class SlotFactsRecorder {
public:
  SlotFactsRecorder(ASTContext &ctx, SlotFacts &out) : ctx(ctx), out(out) {}
  void call(const CallExpr *c);
  void memberCall(const CXXMemberCallExpr *c);
  void var(const VarDecl *v);
  void declStmt(const DeclStmt *d);
  // After the scan walked lambda `l` (whose body read a built-in variable), `at` problems before it.
  void lambdaReadsBuiltins(const LambdaExpr *l, size_t at);
  void declRef(const DeclRefExpr *e);
  void inlineAsm(const GCCAsmStmt *s, llvm::StringRef text);

private:
  ASTContext &ctx;
  SlotFacts &out;
};

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
  FileSelection selection;  // a copy: the analyzer outlives the call that made it (Inventory::analysis)
  SelectedFiles selected;   // the main file and the selected included files
  std::map<const FunctionDecl *, FunctionFacts> memo;

private:
  bool slotDependent(const FunctionDecl *fd, std::set<const FunctionDecl *> &stack);
  std::map<const FunctionDecl *, bool> slotDependence;  // slotDependent's answers
};

// The text of a token range as written.
std::string textOf(SourceRange r, const SourceManager &sm, const LangOptions &lo);

} // namespace ptb::analysis

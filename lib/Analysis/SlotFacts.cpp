#include "SlotFacts.h"
#include "Analyzer.h"
#include "BuiltinVars.h"
#include "SlotFactsRecorder.h"

#include "clang/AST/Attr.h"

#include <algorithm>
#include <cassert>

namespace ptb {

bool isSharedVar(const clang::VarDecl *v) { return v && v->hasAttr<clang::CUDASharedAttr>(); }
bool isDynamicShared(const clang::VarDecl *v) {
  return isSharedVar(v) && (v->hasExternalStorage() || v->getType()->isIncompleteArrayType());
}

bool isBlockBarrier(llvm::StringRef name) {
  return name == "__syncthreads" || name == "__syncthreads_count" || name == "__syncthreads_and" ||
         name == "__syncthreads_or";
}

const SlotFacts &slotFactsOf(const Inventory &inv, const clang::FunctionDecl *fd) {
  assert(inv.analysis && "an inventory made by analyzeTranslationUnit");
  return inv.analysis->factsOf(fd).slot;
}

bool slotDependent(const Inventory &inv, const clang::FunctionDecl *fd) {
  assert(inv.analysis && "an inventory made by analyzeTranslationUnit");
  return inv.analysis->slotDependent(fd);
}

namespace analysis {

bool Analyzer::slotDependent(const FunctionDecl *fd) {
  std::set<const FunctionDecl *> stack;
  return slotDependent(fd, stack);
}

bool Analyzer::slotDependent(const FunctionDecl *fd, std::set<const FunctionDecl *> &stack) {
  auto it = slotDependence.find(fd);
  if (it != slotDependence.end()) return it->second;
  if (!stack.insert(fd).second) return false; // recursion: the fuser refuses to copy it
  const SlotFacts &s = factsOf(fd).slot;
  bool r = s.readsBuiltins || !s.blockBarriers.empty() || s.usesCooperativeGroups || s.declaresShared ||
           !s.fileShared.empty() || !s.problems.empty();
  for (const CallExpr *c : s.userCalls) r = slotDependent(definitionOf(c->getDirectCallee()), stack) || r;
  stack.erase(fd);
  slotDependence[fd] = r;
  return r;
}

namespace {

// cooperative_groups::thread_block (what this_thread_block() returns), through references and const.
bool isCgThreadBlock(QualType t) {
  t = t.getNonReferenceType().getCanonicalType().getUnqualifiedType();
  const CXXRecordDecl *r = t->getAsCXXRecordDecl();
  return r && r->getName() == "thread_block" && r->getQualifiedNameAsString().rfind("cooperative_groups::", 0) == 0;
}

// The thread_block members that a slot's group (ptb::SlotBlock) offers.
const std::set<std::string> kSlotBlockMembers = {"sync",        "thread_rank",  "size",        "num_threads",
                                                 "group_index", "thread_index", "dim_threads", "group_dim"};

} // namespace

void SlotFactsRecorder::call(const CallExpr *c) {
  const FunctionDecl *fd = c->getDirectCallee();
  if (!fd) return;
  std::string n = fd->getNameAsString();
  std::string q = fd->getQualifiedNameAsString();
  bool cg = q.rfind("cooperative_groups::", 0) == 0;
  if (isBlockBarrier(n))
    out.blockBarriers.push_back(c);
  else if (n == "__barrier_sync" || n == "__barrier_sync_count")
    out.problems.push_back({c->getBeginLoc(), "calls " + n + " (a raw barrier id cannot be moved to a slot)"});
  else if (cg && n == "this_thread_block" && c->getNumArgs() == 0)
    out.blockGroupCalls.push_back(c);
  const FunctionDecl *def = nullptr;
  // (A lambda's body is part of the body it is written in, and is scanned and edited with it.)
  auto *method = dyn_cast<CXXMethodDecl>(fd);
  if (!cg && fd->hasBody(def) && def && !ctx.getSourceManager().isInSystemHeader(def->getLocation()) &&
      !fd->getBuiltinID() && !(method && method->getParent()->isLambda()))
    out.userCalls.push_back(c);
  if (!cg && !isa<CXXMemberCallExpr>(c))
    for (const Expr *a : c->arguments())
      if (isCgThreadBlock(a->getType()))
        out.problems.push_back({a->getBeginLoc(), "passes its cooperative_groups::thread_block to '" + q +
                                                      "' (a slot's group cannot be passed to other functions yet)"});
}

void SlotFactsRecorder::memberCall(const CXXMemberCallExpr *c) {
  const Expr *obj = c->getImplicitObjectArgument();
  if (!obj || !isCgThreadBlock(obj->getType())) return;
  out.usesCooperativeGroups = true;
  const CXXMethodDecl *m = c->getMethodDecl();
  if (!m || !kSlotBlockMembers.count(m->getNameAsString()))
    out.problems.push_back({c->getExprLoc(), "calls thread_block::" + (m ? m->getNameAsString() : std::string("?")) +
                                                 ", which a slot's group does not offer"});
}

void SlotFactsRecorder::var(const VarDecl *v) {
  if (isSharedVar(v)) {
    out.declaresShared = true;
    if (!isDynamicShared(v) && !v->getType()->isDependentType())
      out.staticSharedBytes += ctx.getTypeSizeInChars(v->getType()).getQuantity();
  }
  if (!isCgThreadBlock(v->getType())) return;
  if (isa<ParmVarDecl>(v) || !v->hasInit())
    out.problems.push_back({v->getLocation(), "declares cooperative_groups::thread_block '" + v->getNameAsString() +
                                                  "' without this_thread_block() as its initializer"});
  else
    out.blockGroupVars.push_back(v);
}

void SlotFactsRecorder::declStmt(const DeclStmt *d) {
  for (const Decl *x : d->decls())
    if (auto *v = dyn_cast<VarDecl>(x); v && isDynamicShared(v)) {
      if (!d->isSingleDecl())
        out.problems.push_back({v->getLocation(), "declares extern __shared__ '" + v->getNameAsString() +
                                                      "' together with other variables (declare it alone)"});
      else
        out.externShared.push_back(d);
    }
}

void SlotFactsRecorder::lambdaReadsBuiltins(const LambdaExpr *l, size_t at) {
  if (l->getCaptureDefault() != LCD_None) return;
  // In a slot the built-in variables are the slot function's parameters, which only a capture can reach.
  // `at`: the problems met before the lambda (the ones inside it were recorded while the scan walked it).
  out.problems.insert(out.problems.begin() + static_cast<std::ptrdiff_t>(std::min(at, out.problems.size())),
                      {l->getBeginLoc(), "has a lambda without a capture default that reads a built-in index "
                                         "variable (give it [&] or [=]: in a slot they are the slot's variables)"});
}

void SlotFactsRecorder::declRef(const DeclRefExpr *e) {
  const ValueDecl *d = e->getDecl();
  if (builtinVarOf(e)) out.readsBuiltins = true;
  if (auto *v = dyn_cast<VarDecl>(d); v && isSharedVar(v) && v->isFileVarDecl()) {
    const VarDecl *c = v->getCanonicalDecl();
    if (std::find(out.fileShared.begin(), out.fileShared.end(), c) == out.fileShared.end()) out.fileShared.push_back(c);
    out.fileSharedUses.push_back(e);
  }
  std::string q = d->getQualifiedNameAsString();
  if (q.rfind("cooperative_groups::", 0) != 0) return;
  out.usesCooperativeGroups = true;
  if (d->getName() != "this_thread_block" && d->getName() != "sync")
    out.problems.push_back({e->getBeginLoc(), "uses cooperative groups ('" + q +
                                                  "'); in a slot only this_thread_block() and its sync, thread_rank, "
                                                  "size, group_index, thread_index and dim_threads work"});
}

void SlotFactsRecorder::inlineAsm(const GCCAsmStmt *s, llvm::StringRef text) {
  for (const char *w : {"%tid", "%ntid", "%ctaid", "%nctaid", "bar.", "barrier."})
    if (text.contains(w)) {
      out.problems.push_back(
          {s->getAsmLoc(), std::string("inline asm uses '") + w + "', which is the hardware block's, not the slot's"});
      return;
    }
}

} // namespace analysis
} // namespace ptb

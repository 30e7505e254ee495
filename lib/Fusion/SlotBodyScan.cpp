#include "SlotBodyScan.h"
#include "KernelInventory.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"

#include <algorithm>
#include <set>

using namespace clang;

namespace ptb {

const std::map<std::string, std::string> kSlotBarrierForms = {
    {"__syncthreads", "::ptb::bar_sync<PtbBar, PtbThreads>"},
    {"__syncthreads_count", "::ptb::bar_red_popc<PtbBar, PtbThreads>"},
    {"__syncthreads_and", "::ptb::bar_red_and<PtbBar, PtbThreads>"},
    {"__syncthreads_or", "::ptb::bar_red_or<PtbBar, PtbThreads>"},
};

bool isSharedVar(const VarDecl *v) { return v && v->hasAttr<CUDASharedAttr>(); }
bool isDynamicShared(const VarDecl *v) {
  return isSharedVar(v) && (v->hasExternalStorage() || v->getType()->isIncompleteArrayType());
}

namespace {

// cooperative_groups::thread_block (what this_thread_block() returns), through references and const.
bool isCgThreadBlock(QualType t) {
  t = t.getNonReferenceType().getCanonicalType().getUnqualifiedType();
  const CXXRecordDecl *r = t->getAsCXXRecordDecl();
  return r && r->getName() == "thread_block" &&
         r->getQualifiedNameAsString().rfind("cooperative_groups::", 0) == 0;
}

// thread_block members a slot block (ptb::SlotBlock) offers.
const std::set<std::string> kSlotBlockMembers = {"sync",        "thread_rank",   "size",       "num_threads",
                                                 "group_index", "thread_index", "dim_threads", "group_dim"};

class SlotBodyScanner : public RecursiveASTVisitor<SlotBodyScanner> {
public:
  SlotBodyScanner(const SourceManager &sm, BodyScan &out) : sm(sm), out(out) {}
  bool shouldVisitTemplateInstantiations() const { return false; }
  bool shouldVisitLambdaBodies() const { return true; }

  bool VisitCallExpr(CallExpr *c) {
    if (auto *fd = c->getDirectCallee()) {
      std::string n = fd->getNameAsString();
      std::string q = fd->getQualifiedNameAsString();
      bool cg = q.rfind("cooperative_groups::", 0) == 0;
      if (kSlotBarrierForms.count(n)) out.barriers.push_back(c);
      else if (n == "__barrier_sync" || n == "__barrier_sync_count")
        out.problems.push_back({c->getBeginLoc(), "calls " + n + " (a raw barrier id cannot be moved to a slot)"});
      else if (cg && n == "this_thread_block" && c->getNumArgs() == 0) out.blockGroups.push_back(c);
      const FunctionDecl *def = nullptr;
      // (A lambda's body is part of the body it is written in, and is scanned and edited with it.)
      auto *method = dyn_cast<CXXMethodDecl>(fd);
      if (!cg && fd->hasBody(def) && def && !sm.isInSystemHeader(def->getLocation()) && !fd->getBuiltinID() &&
          !(method && method->getParent()->isLambda()))
        out.userCalls.push_back(c);
      if (!cg && !isa<CXXMemberCallExpr>(c))
        for (const Expr *a : c->arguments())
          if (isCgThreadBlock(a->getType()))
            out.problems.push_back({a->getBeginLoc(), "passes its cooperative_groups::thread_block to '" + q +
                                                          "' (a slot's group cannot be passed to other functions yet)"});
    }
    return true;
  }
  bool VisitCXXMemberCallExpr(CXXMemberCallExpr *c) {
    const Expr *obj = c->getImplicitObjectArgument();
    if (obj && isCgThreadBlock(obj->getType())) {
      out.usesCg = true;
      const CXXMethodDecl *m = c->getMethodDecl();
      if (!m || !kSlotBlockMembers.count(m->getNameAsString()))
        out.problems.push_back({c->getExprLoc(), "calls thread_block::" + (m ? m->getNameAsString() : std::string("?")) +
                                                     ", which a slot's group does not offer"});
    }
    return true;
  }
  bool VisitVarDecl(VarDecl *v) {
    if (isSharedVar(v)) out.declaresShared = true;
    if (!isCgThreadBlock(v->getType())) return true;
    if (isa<ParmVarDecl>(v) || !v->hasInit())
      out.problems.push_back({v->getLocation(), "declares cooperative_groups::thread_block '" + v->getNameAsString() +
                                                    "' without this_thread_block() as its initializer"});
    else
      out.blockGroupVars.push_back(v);
    return true;
  }
  bool VisitDeclStmt(DeclStmt *d) {
    for (Decl *x : d->decls())
      if (auto *v = dyn_cast<VarDecl>(x); v && isDynamicShared(v)) {
        if (!d->isSingleDecl())
          out.problems.push_back({v->getLocation(), "declares extern __shared__ '" + v->getNameAsString() +
                                                        "' together with other variables (declare it alone)"});
        else
          out.localDynamic.push_back(d);
      }
    return true;
  }
  bool VisitLambdaExpr(LambdaExpr *l) {
    if (l->getCaptureDefault() != LCD_None) return true;
    struct Reads : RecursiveASTVisitor<Reads> {
      bool found = false;
      bool VisitDeclRefExpr(DeclRefExpr *e) {
        found |= builtinVarOf(e).has_value();
        return true;
      }
    } reads;
    reads.TraverseStmt(l->getBody());
    if (reads.found)
      out.problems.push_back({l->getBeginLoc(), "has a lambda without a capture default that reads a built-in index "
                                                "variable (give it [&] or [=]: in a slot they are the slot's variables)"});
    return true;
  }
  bool VisitDeclRefExpr(DeclRefExpr *e) {
    const ValueDecl *d = e->getDecl();
    if (builtinVarOf(e)) out.readsBuiltins = true;
    if (auto *v = dyn_cast<VarDecl>(d); v && isSharedVar(v) && v->isFileVarDecl()) {
      const VarDecl *c = v->getCanonicalDecl();
      if (std::find(out.globalShared.begin(), out.globalShared.end(), c) == out.globalShared.end())
        out.globalShared.push_back(c);
      out.globalSharedRefs.push_back(e);
    }
    std::string q = d->getQualifiedNameAsString();
    if (q.rfind("cooperative_groups::", 0) == 0) out.usesCg = true;
    if (q.rfind("cooperative_groups::", 0) == 0 && d->getName() != "this_thread_block" && d->getName() != "sync")
      out.problems.push_back({e->getBeginLoc(), "uses cooperative groups ('" + q +
                                                    "'); in a slot only this_thread_block() and its sync, thread_rank, "
                                                    "size, group_index, thread_index and dim_threads work"});
    return true;
  }
  bool VisitGCCAsmStmt(GCCAsmStmt *s) {
    std::string text = s->getAsmString()->getString().str();
    for (const char *w : {"%tid", "%ntid", "%ctaid", "%nctaid", "bar.", "barrier."})
      if (text.find(w) != std::string::npos) {
        out.problems.push_back({s->getAsmLoc(), std::string("inline asm uses '") + w +
                                                    "', which is the hardware block's, not the slot's"});
        break;
      }
    return true;
  }

private:
  const SourceManager &sm;
  BodyScan &out;
};

} // namespace

BodyScan scanSlotBody(Stmt *body, const SourceManager &sm) {
  BodyScan scan;
  SlotBodyScanner(sm, scan).TraverseStmt(body);
  return scan;
}

} // namespace ptb

#include "Uniformity.h"
#include "BuiltinVars.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"

using namespace clang;

namespace ptb {

namespace {

bool isPureMathName(llvm::StringRef n) {
  static const char *names[] = {"min",    "max",   "umin",  "umax",    "llmin",    "llmax",   "ullmin",
                                "ullmax", "abs",   "labs",  "llabs",   "fminf",    "fmaxf",   "fmin",
                                "fmax",   "fabsf", "fabs",  "__mul24", "__umul24", "__mulhi", "__umulhi",
                                "__popc", "__clz", "__ffs", "__brev"};
  for (const char *m : names)
    if (n == m) return true;
  return false;
}

// Collects jumps (break/continue) that leave `loop` and returns inside it.
class LoopExits : public RecursiveASTVisitor<LoopExits> {
public:
  explicit LoopExits(const Stmt *loop) : loop(loop) {}
  bool TraverseLambdaExpr(LambdaExpr *) { return true; }
  bool TraverseStmt(Stmt *s) {
    if (!s) return true;
    bool isLoop = isa<ForStmt>(s) || isa<WhileStmt>(s) || isa<DoStmt>(s) || isa<CXXForRangeStmt>(s);
    bool isSwitch = isa<SwitchStmt>(s);
    if (s != loop && (isLoop || isSwitch)) {
      ++nestedBreakScopes;
      if (isLoop) ++nestedLoops;
      bool r = RecursiveASTVisitor::TraverseStmt(s);
      --nestedBreakScopes;
      if (isLoop) --nestedLoops;
      return r;
    }
    return RecursiveASTVisitor::TraverseStmt(s);
  }
  bool VisitBreakStmt(BreakStmt *b) {
    if (nestedBreakScopes == 0) exits.push_back(b);
    return true;
  }
  bool VisitContinueStmt(ContinueStmt *c) {
    if (nestedLoops == 0) exits.push_back(c);
    return true;
  }
  bool VisitReturnStmt(ReturnStmt *r) {
    exits.push_back(r);
    return true;
  }
  const Stmt *loop;
  int nestedBreakScopes = 0, nestedLoops = 0;
  std::vector<const Stmt *> exits;
};

} // namespace

UniformityAnalysis::UniformityAnalysis(const FunctionDecl *fn) : fn(fn), parents(fn->getBody()) {
  computeVaryingVariables();
}

bool UniformityAnalysis::isUniform(const Expr *e, std::string &reason) const {
  if (!e) return true;
  e = e->IgnoreParens();
  if (auto *ice = dyn_cast<ImplicitCastExpr>(e)) return isUniform(ice->getSubExpr(), reason);
  if (auto *ce = dyn_cast<ExplicitCastExpr>(e)) return isUniform(ce->getSubExpr(), reason);
  if (isa<IntegerLiteral, FloatingLiteral, CharacterLiteral, CXXBoolLiteralExpr, CXXNullPtrLiteralExpr, StringLiteral,
          UnaryExprOrTypeTraitExpr, SizeOfPackExpr, CXXDefaultArgExpr, CXXScalarValueInitExpr, ImplicitValueInitExpr,
          GNUNullExpr, DependentScopeDeclRefExpr, SubstNonTypeTemplateParmExpr>(e))
    return true;
  if (auto *ref = dyn_cast<DeclRefExpr>(e)) {
    if (auto v = builtinVarOf(ref)) {
      if (*v == BuiltinVar::threadIdx) {
        reason = "threadIdx";
        return false;
      }
      return true;
    }
    const ValueDecl *d = ref->getDecl();
    if (isa<EnumConstantDecl, NonTypeTemplateParmDecl, FunctionDecl>(d)) return true;
    if (auto *v = dyn_cast<VarDecl>(d)) {
      if (varying.count(v)) {
        reason = v->getNameAsString() + " (assigned a thread-dependent value)";
        return false;
      }
      if (v->isLocalVarDeclOrParm()) return true;
      if (v->getType().isConstQualified() || v->isConstexpr() || v->hasAttr<CUDAConstantAttr>()) return true;
      reason = "global variable " + v->getNameAsString() + " (a memory read)";
      return false;
    }
    if (isa<BindingDecl>(d)) {
      reason = "structured binding";
      return false;
    }
    return true;
  }
  if (auto *pse = dyn_cast<PseudoObjectExpr>(e)) {
    const Expr *syn = pse->getSyntacticForm()->IgnoreParens();
    if (auto *prop = dyn_cast<MSPropertyRefExpr>(syn)) return isUniform(prop->getBaseExpr(), reason);
    return isUniform(syn, reason);
  }
  if (auto *ove = dyn_cast<OpaqueValueExpr>(e)) return isUniform(ove->getSourceExpr(), reason);
  if (auto *prop = dyn_cast<MSPropertyRefExpr>(e)) return isUniform(prop->getBaseExpr(), reason);
  if (auto *me = dyn_cast<MemberExpr>(e)) {
    if (me->isArrow()) {
      reason = "a read through a pointer (" + me->getMemberDecl()->getNameAsString() + ")";
      return false;
    }
    if (isa<FunctionDecl>(me->getMemberDecl())) return isUniform(me->getBase(), reason);
    return isUniform(me->getBase(), reason);
  }
  if (auto *dme = dyn_cast<CXXDependentScopeMemberExpr>(e)) {
    if (dme->isArrow()) {
      reason = "a read through a pointer";
      return false;
    }
    return dme->isImplicitAccess() || isUniform(dme->getBase(), reason);
  }
  if (isa<ArraySubscriptExpr>(e)) {
    reason = "a memory read (array subscript)";
    return false;
  }
  if (auto *uo = dyn_cast<UnaryOperator>(e)) {
    if (uo->getOpcode() == UO_Deref) {
      reason = "a memory read (dereference)";
      return false;
    }
    return isUniform(uo->getSubExpr(), reason);
  }
  if (auto *bo = dyn_cast<BinaryOperator>(e)) return isUniform(bo->getLHS(), reason) && isUniform(bo->getRHS(), reason);
  if (auto *co = dyn_cast<AbstractConditionalOperator>(e))
    return isUniform(co->getCond(), reason) && isUniform(co->getTrueExpr(), reason) &&
           isUniform(co->getFalseExpr(), reason);
  if (auto *call = dyn_cast<CallExpr>(e)) {
    const FunctionDecl *f = call->getDirectCallee();
    llvm::StringRef n = f && f->getIdentifier() ? f->getName() : "";
    if (n == "__syncthreads_or" || n == "__syncthreads_and" || n == "__syncthreads_count") return true;
    if (n == "__fetch_builtin_x" || n == "__fetch_builtin_y" || n == "__fetch_builtin_z")
      return isUniform(call->getCallee(), reason);
    bool pure = f && (isPureMathName(n) || f->isConstexpr());
    if (!pure) {
      reason = "the result of a call" + (n.empty() ? std::string() : " to " + n.str());
      return false;
    }
    for (const Expr *arg : call->arguments())
      if (!isUniform(arg, reason)) return false;
    return true;
  }
  if (auto *ctor = dyn_cast<CXXConstructExpr>(e)) {
    for (const Expr *arg : ctor->arguments())
      if (!isUniform(arg, reason)) return false;
    return true;
  }
  if (auto *il = dyn_cast<InitListExpr>(e)) {
    for (const Expr *i : il->inits())
      if (!isUniform(i, reason)) return false;
    return true;
  }
  if (auto *ewc = dyn_cast<ExprWithCleanups>(e)) return isUniform(ewc->getSubExpr(), reason);
  if (auto *mte = dyn_cast<MaterializeTemporaryExpr>(e)) return isUniform(mte->getSubExpr(), reason);
  if (auto *pe = dyn_cast<ParenListExpr>(e)) {
    for (const Expr *i : const_cast<ParenListExpr *>(pe)->exprs())
      if (!isUniform(i, reason)) return false;
    return true;
  }
  if (auto *ue = dyn_cast<CXXUnresolvedConstructExpr>(e)) {
    for (const Expr *i : ue->arguments())
      if (!isUniform(i, reason)) return false;
    return true;
  }
  if (auto *ule = dyn_cast<UnresolvedLookupExpr>(e)) {
    (void)ule;
    return true;
  }
  reason = std::string("an expression the analysis does not know (") + e->getStmtClassName() + ")";
  return false;
}

bool UniformityAnalysis::controlledUniformly(const Stmt *s, std::string &reason, bool checkLoopExits) {
  const Stmt *body = fn->getBody();
  const Stmt *child = s;
  for (const Stmt *p = parentOf(s); p && child != body; child = p, p = parentOf(p)) {
    if (isa<LambdaExpr>(p)) return true;
    auto loopExits = [&](const Stmt *loop) {
      if (!checkLoopExits) return true;
      LoopExits le(loop);
      le.TraverseStmt(const_cast<Stmt *>(loop));
      for (const Stmt *x : le.exits) {
        if (x == s) continue;
        std::string why;
        if (!controlledUniformly(x, why, false)) {
          reason = "a thread-dependent " +
                   std::string(isa<ReturnStmt>(x)  ? "return"
                               : isa<BreakStmt>(x) ? "break"
                                                   : "continue") +
                   " in an enclosing loop (" + why + ")";
          return false;
        }
      }
      return true;
    };
    if (auto *i = dyn_cast<IfStmt>(p)) {
      if (child == i->getCond() || child == i->getInit()) continue;
      if (auto *cv = i->getConditionVariable(); cv && !isUniform(cv->getInit(), reason)) return false;
      if (!isUniform(i->getCond(), reason)) return false;
    } else if (auto *f = dyn_cast<ForStmt>(p)) {
      if (child == f->getInit()) continue;
      if (!isUniform(f->getCond(), reason)) return false;
      if (!loopExits(f)) return false;
    } else if (auto *w = dyn_cast<WhileStmt>(p)) {
      if (child == w->getCond()) continue;
      if (!isUniform(w->getCond(), reason)) return false;
      if (!loopExits(w)) return false;
    } else if (auto *d = dyn_cast<DoStmt>(p)) {
      if (!isUniform(d->getCond(), reason)) return false;
      if (!loopExits(d)) return false;
    } else if (auto *r = dyn_cast<CXXForRangeStmt>(p)) {
      if (child == r->getRangeInit() || child == r->getInit()) continue;
      if (!isUniform(r->getRangeInit(), reason)) return false;
      if (!loopExits(r)) return false;
    } else if (auto *sw = dyn_cast<SwitchStmt>(p)) {
      if (child == sw->getCond()) continue;
      if (!isUniform(sw->getCond(), reason)) return false;
    } else if (auto *co = dyn_cast<AbstractConditionalOperator>(p)) {
      if (child == co->getCond()) continue;
      if (!isUniform(co->getCond(), reason)) return false;
    } else if (auto *bo = dyn_cast<BinaryOperator>(p); bo && bo->isLogicalOp()) {
      if (child == bo->getRHS() && !isUniform(bo->getLHS(), reason)) return false;
    }
  }
  return true;
}

bool UniformityAnalysis::isReachedUniformly(const Stmt *s, std::string &reason) {
  return controlledUniformly(s, reason, true);
}

void UniformityAnalysis::computeVaryingVariables() {
  struct Assign {
    const ValueDecl *var;
    const Expr *value;
    const Stmt *at;
    bool escapes;
  };
  struct Collector : RecursiveASTVisitor<Collector> {
    std::vector<Assign> assigns;
    bool VisitDeclStmt(DeclStmt *ds) {
      for (Decl *d : ds->decls())
        if (auto *v = dyn_cast<VarDecl>(d); v && v->hasInit()) {
          assigns.push_back({v, v->getInit(), ds, false});
          // `T &r = x;` makes x writable through r: x escapes (and so does r).
          if (v->getType()->isReferenceType()) {
            if (auto *x = target(v->getInit())) assigns.push_back({x, nullptr, ds, true});
            assigns.push_back({v, nullptr, ds, true});
          }
        }
      return true;
    }
    static const ValueDecl *target(const Expr *e) {
      e = e->IgnoreParenImpCasts();
      while (auto *m = dyn_cast<MemberExpr>(e)) {
        if (m->isArrow()) return nullptr;
        e = m->getBase()->IgnoreParenImpCasts();
      }
      while (auto *a = dyn_cast<ArraySubscriptExpr>(e)) {
        const Expr *base = a->getBase()->IgnoreParenImpCasts();
        if (base->getType()->isPointerType()) return nullptr;
        e = base;
      }
      if (auto *r = dyn_cast<DeclRefExpr>(e)) return r->getDecl();
      return nullptr;
    }
    bool VisitBinaryOperator(BinaryOperator *b) {
      if (b->isAssignmentOp())
        if (auto *v = target(b->getLHS())) assigns.push_back({v, b, b, false});
      return true;
    }
    bool VisitUnaryOperator(UnaryOperator *u) {
      if (u->isIncrementDecrementOp())
        if (auto *v = target(u->getSubExpr())) assigns.push_back({v, u, u, false});
      if (u->getOpcode() == UO_AddrOf)
        if (auto *v = target(u->getSubExpr())) assigns.push_back({v, nullptr, u, true});
      return true;
    }
    bool VisitCXXMemberCallExpr(CXXMemberCallExpr *c) {
      // A non-const member function may change the object it is called on.
      if (auto *m = c->getMethodDecl(); m && !m->isConst())
        if (auto *v = target(c->getImplicitObjectArgument())) assigns.push_back({v, nullptr, c, true});
      return true;
    }
    bool VisitCXXOperatorCallExpr(CXXOperatorCallExpr *c) {
      if (c->isAssignmentOp() && c->getNumArgs() >= 1)
        if (auto *v = target(c->getArg(0))) assigns.push_back({v, c, c, false});
      return true;
    }
    bool VisitCallExpr(CallExpr *c) {
      // Passing a local by non-const reference lets the callee write it.
      const FunctionDecl *f = c->getDirectCallee();
      if (!f) {
        // A call not resolved yet (dependent, in a template) may take any argument by reference.
        for (const Expr *arg : c->arguments())
          if (auto *v = target(arg)) assigns.push_back({v, nullptr, c, true});
        return true;
      }
      for (unsigned i = 0; i < c->getNumArgs() && i < f->getNumParams(); ++i) {
        QualType t = f->getParamDecl(i)->getType();
        if (t->isReferenceType() && !t->getPointeeType().isConstQualified())
          if (auto *v = target(c->getArg(i))) assigns.push_back({v, nullptr, c, true});
      }
      return true;
    }
  } collector;
  collector.TraverseStmt(fn->getBody());
  bool changed = true;
  for (int round = 0; changed && round < 64; ++round) {
    changed = false;
    for (const Assign &a : collector.assigns) {
      if (varying.count(a.var)) continue;
      std::string why;
      bool v = a.escapes;
      if (!v) {
        const Expr *value = a.value;
        if (auto *b = dyn_cast_or_null<BinaryOperator>(value)) value = b; // x = y / x += y: both sides
        v = value && !isUniform(value, why);
      }
      if (!v && a.at) v = !controlledUniformly(a.at, why, false);
      if (v) {
        varying.insert(a.var);
        changed = true;
      }
    }
  }
}

} // namespace ptb

#include "FunctionFacts.h"
#include "Analyzer.h"
#include "BuiltinVars.h"
#include "SlotFactsRecorder.h"
#include "Uniformity.h"

#include "clang/AST/DeclTemplate.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"

#include <cstring>

namespace ptb::analysis {

const FunctionDecl *definitionOf(const FunctionDecl *fd) {
  if (!fd) return nullptr;
  const FunctionDecl *def = nullptr;
  if (fd->hasBody(def)) return def;
  if (auto *p = fd->getTemplateInstantiationPattern())
    if (p->hasBody(def)) return def;
  return nullptr;
}

const FunctionDecl *patternOf(const FunctionDecl *fd) {
  if (!fd) return nullptr;
  if (auto *p = fd->getTemplateInstantiationPattern()) fd = p;
  const FunctionDecl *def = nullptr;
  return fd->hasBody(def) ? def : nullptr;
}

namespace {

std::string withoutInlineNamespace(std::string s) {
  for (const char *ns : {"__v1::", "__4::", "__cxx11::", "_V2::"}) {
    for (size_t at; (at = s.find(ns)) != std::string::npos;) s.erase(at, strlen(ns));
  }
  return s;
}

// Whether a cooperative-groups function is a barrier, a grid construct, or a block-index read.
struct CgClass {
  std::string kind;
  enum { None, BlockSync, WarpSync, Grid, Cluster, BlockIndex } what;
};

CgClass classifyCg(const FunctionDecl *fd, const CallExpr *call) {
  std::string q = withoutInlineNamespace(fd->getQualifiedNameAsString());
  if (q.rfind("cooperative_groups::", 0) != 0) return {"", CgClass::None};
  StringRef n = fd->getName();
  std::string cls;
  if (auto *m = dyn_cast<CXXMethodDecl>(fd)) cls = m->getParent()->getName().str();
  if (q.find("grid_group") != std::string::npos || n == "this_grid" || n == "this_multi_grid" ||
      q.find("multi_grid_group") != std::string::npos)
    return {q, CgClass::Grid};
  if (q.find("cluster_group") != std::string::npos || n == "this_cluster") return {q, CgClass::Cluster};
  if (cls == "thread_block" && (n == "group_index" || n == "block_index" || n == "block_rank"))
    return {q, CgClass::BlockIndex};
  if (n == "sync" || n == "barrier_wait" || n == "barrier_arrive") {
    std::string on = cls;
    if (on.empty() && call && call->getNumArgs() == 1)
      on = withoutInlineNamespace(
          call->getArg(0)->IgnoreParenImpCasts()->getType().getCanonicalType().getUnqualifiedType().getAsString());
    if (on.find("grid_group") != std::string::npos) return {q, CgClass::Grid};
    if (on.find("cluster") != std::string::npos) return {q, CgClass::Cluster};
    if (on.find("thread_block_tile") != std::string::npos || on.find("coalesced") != std::string::npos ||
        on.find("tiled_partition") != std::string::npos)
      return {
          "cg::" + std::string(on.find("coalesced") != std::string::npos ? "coalesced_group" : "thread_block_tile") +
              "::sync",
          CgClass::WarpSync};
    if (on.find("thread_block") != std::string::npos) return {"cg::thread_block::sync", CgClass::BlockSync};
    // A generic group: it may be the whole block, so it counts as a block-wide barrier.
    if (on.find("thread_group") != std::string::npos) return {"cg::thread_group::sync", CgClass::BlockSync};
  }
  return {"", CgClass::None};
}

class BodyVisitor : public RecursiveASTVisitor<BodyVisitor> {
public:
  BodyVisitor(Analyzer &a, FunctionFacts &f) : a(a), f(f), slot(a.ctx, f.slot) {}
  bool shouldVisitTemplateInstantiations() const { return false; }
  bool shouldVisitImplicitCode() const { return false; }

  bool TraverseLambdaExpr(LambdaExpr *e) {
    ++lambdaDepth;
    size_t before = f.indexLocs.size();
    lambdas.push_back({e, f.slot.problems.size()});
    bool r = RecursiveASTVisitor::TraverseLambdaExpr(e);
    const OpenLambda l = lambdas.back();
    lambdas.pop_back();
    if (f.indexLocs.size() > before && e->getCaptureDefault() == LCD_None) f.lambdasWithoutDefaultCapture.push_back(e);
    if (l.bodyReadsBuiltins) slot.lambdaReadsBuiltins(e, l.problemsBefore);
    --lambdaDepth;
    return r;
  }
  // Whether the walk is in a lambda's body (its captures and parameters are not): SlotFacts asks about
  // built-in variables read in the body. (No queue parameter: then the visitor walks a compound
  // statement's children before this returns, rather than queueing them for later.)
  bool TraverseCompoundStmt(CompoundStmt *s) {
    const size_t at = lambdas.size();
    const bool body = at > 0 && lambdas.back().lambda->getBody() == s;
    if (body) lambdas[at - 1].inBody = true;
    bool r = RecursiveASTVisitor::TraverseCompoundStmt(s);
    if (body) lambdas[at - 1].inBody = false; // by index: a nested lambda may have grown the vector
    return r;
  }

  bool VisitDeclRefExpr(DeclRefExpr *e) {
    slot.declRef(e);
    if (auto v = builtinVarOf(e)) {
      for (OpenLambda &l : lambdas) l.bodyReadsBuiltins |= l.inBody;
      int i = int(*v);
      SourceLocation loc = e->getLocation();
      if (loc.isMacroID() && a.spelledInMacroBody(loc)) {
        std::string m = a.macroNameAt(loc);
        f.macros[i].insert(m.empty() ? "?" : m);
      } else {
        f.direct[i] = true;
      }
      if (*v == BuiltinVar::blockIdx || *v == BuiltinVar::gridDim) f.indexLocs.push_back(loc);
    }
    return true;
  }

  // A function defined inside the body (a member of a local class): its returns are its own.
  bool TraverseDecl(Decl *d) {
    const bool fn = d && isa<FunctionDecl>(d);
    nestedFunctionDepth += fn;
    bool r = RecursiveASTVisitor::TraverseDecl(d);
    nestedFunctionDepth -= fn;
    return r;
  }

  bool VisitReturnStmt(ReturnStmt *r) {
    if (lambdaDepth == 0 && nestedFunctionDepth == 0) f.returns.push_back(r);
    return true;
  }

  void couple(const std::string &what) {
    if (f.coupling.empty()) f.coupling = what;
  }

  bool VisitVarDecl(VarDecl *v) {
    slot.var(v);
    if (!isSharedVar(v)) {
      if (v->isLocalVarDecl() && !v->isStaticLocal()) {
        destroys(v->getType(), v->getLocation());
        // `W w;`: a construction with nothing written after the name (CloneCallSite::Form::DefaultConstruct).
        if (auto *ce = dyn_cast_or_null<CXXConstructExpr>(v->getInit() ? v->getInit()->IgnoreImplicit() : nullptr);
            ce && ce->getNumArgs() == 0 && ce->getParenOrBraceRange().isInvalid() && !v->getType()->isArrayType() &&
            !isa<DecompositionDecl>(v))
          defaultInits[ce] = v->getLocation();
      }
      return true;
    }
    couple("__shared__ " + v->getNameAsString());
    SharedVariable s;
    s.name = v->getNameAsString();
    s.type = v->getType().getAsString(a.ctx.getPrintingPolicy());
    s.dynamic = isDynamicShared(v);
    s.loc = a.locate(v->getLocation());
    QualType t = v->getType();
    if (!s.dynamic && !t->isDependentType() && !t->isIncompleteType())
      s.bytes = a.ctx.getTypeSizeInChars(t).getQuantity();
    f.shared.push_back(s);
    return true;
  }

  bool VisitGCCAsmStmt(GCCAsmStmt *s) {
    std::string text = s->getAsmString()->getString().str();
    slot.inlineAsm(s, text);
    couple("inline asm");
    auto has = [&](const char *w) { return text.find(w) != std::string::npos; };
    if (has("%smid") || has("%nsmid"))
      f.blockers.push_back({"%smid read", "inline asm reads %smid/%nsmid; the PTB runtime owns SM gating",
                            a.locate(s->getAsmLoc()), s->getAsmLoc()});
    if (has("%ctaid") || has("%nctaid"))
      f.blockers.push_back({"%ctaid read", "inline asm reads %ctaid/%nctaid, which PTB cannot virtualize",
                            a.locate(s->getAsmLoc()), s->getAsmLoc()});
    if (has("%clusterid") || has("%cluster_") || has("barrier.cluster"))
      f.blockers.push_back({"thread-block cluster", "inline asm uses cluster registers or barriers",
                            a.locate(s->getAsmLoc()), s->getAsmLoc()});
    if (has("bar.sync") || has("barrier.sync") || has("bar.red") || has("barrier.red") || has("bar.arrive") ||
        has("barrier.cta"))
      f.barriers.push_back({"bar.sync (inline asm)", true, s->getAsmLoc(), {}, "it is inline asm"});
    if (has("shfl") || has("vote") || has("bar.warp") || has("match.") || has("redux") || has("mma") ||
        has("ldmatrix") || has("stmatrix") || has("elect.sync"))
      f.warpOps.push_back({"warp-collective inline asm", s->getAsmLoc()});
    return true;
  }

  bool VisitCUDAKernelCallExpr(CUDAKernelCallExpr *e) {
    f.blockers.push_back(
        {"dynamic parallelism", "launches a kernel from device code", a.locate(e->getBeginLoc()), e->getBeginLoc()});
    return true;
  }

  // What only the fuser reads (SlotFacts), met in the same walk.
  bool VisitCXXMemberCallExpr(CXXMemberCallExpr *c) {
    slot.memberCall(c);
    return true;
  }
  bool VisitDeclStmt(DeclStmt *d) {
    slot.declStmt(d);
    return true;
  }

  bool VisitCallExpr(CallExpr *call) {
    slot.call(call);
    if (isa<CUDAKernelCallExpr>(call)) return true;
    const FunctionDecl *callee = call->getDirectCallee();
    if (!callee) {
      // A dependent call in a template pattern: take a user-defined candidate of the lookup. (A dependent
      // operator is left to the instantiations, which are read too: the pattern does not say which
      // operator it calls, or whether it is a built-in one.)
      auto *ule = dyn_cast<UnresolvedLookupExpr>(call->getCallee()->IgnoreParenImpCasts());
      if (ule && !isa<CXXOperatorCallExpr>(call)) {
        for (NamedDecl *d : ule->decls()) {
          const FunctionDecl *cand = nullptr;
          if (auto *ft = dyn_cast<FunctionTemplateDecl>(d->getUnderlyingDecl()))
            cand = ft->getTemplatedDecl();
          else
            cand = dyn_cast<FunctionDecl>(d->getUnderlyingDecl());
          if (cand && definitionOf(cand) && !a.sm.isInSystemHeader(cand->getLocation())) {
            CallHit h{definitionOf(cand),  ule->getNameLoc(),      a.lparenAfter(ule->getEndLoc()),
                      call->getBeginLoc(), call->getNumArgs() > 0, false};
            if (h.nameLoc.isFileID() && h.lparenLoc.isValid() && ule->getName().isIdentifier())
              named(h, Lexer::MeasureTokenLength(h.nameLoc, a.sm, a.ctx.getLangOpts()), a.extentOf(call));
            f.calls.push_back(h);
            break;
          }
        }
      }
      return true;
    }
    // A lambda's body is part of the kernel's text (and is walked with it): calling it needs no redirect,
    // but the call is where its barriers happen, so it is followed for barriers like a library call.
    if (auto *m = dyn_cast<CXXMethodDecl>(callee); m && m->getParent()->isLambda()) {
      if (const FunctionDecl *def = definitionOf(m))
        f.calls.push_back({def, {}, {}, call->getBeginLoc(), call->getNumArgs() > 0, true, true});
      return true;
    }
    StringRef n = callee->getIdentifier() ? callee->getName() : StringRef();
    SourceLocation loc = call->getBeginLoc();
    {
      std::string q = withoutInlineNamespace(callee->getQualifiedNameAsString());
      static const char *warpOps[] = {"__shfl",        "__ballot",   "__any",
                                      "__all",         "__match",    "__reduce_",
                                      "__activemask",  "__syncwarp", "__threadfence_block",
                                      "__syncthreads", "__barrier"};
      for (const char *w : warpOps)
        if (n.starts_with(w)) couple(n.str());
      if (q.rfind("cooperative_groups::", 0) == 0 || q.rfind("nvcuda::wmma::", 0) == 0) couple(q);
      static const char *collectives[] = {"__shfl",     "__ballot_sync", "__any_sync", "__all_sync",
                                          "__uni_sync", "__match",       "__reduce_",  "__syncwarp"};
      for (const char *w : collectives)
        if (n.starts_with(w)) f.warpOps.push_back({n.str(), loc});
      if (q.rfind("nvcuda::wmma::", 0) == 0) f.warpOps.push_back({q, loc});
    }
    if (isBlockBarrier(n) || n == "__barrier_sync") {
      BarrierHit h{n.str(), true, loc, std::nullopt, ""};
      if (n == "__barrier_sync") {
        Expr::EvalResult id;
        const Expr *arg = call->getNumArgs() == 1 ? call->getArg(0) : nullptr;
        if (!arg || arg->isValueDependent() || !arg->EvaluateAsInt(id, a.ctx) || id.Val.getInt() != 0)
          h.unrewritable = "it is a named barrier (an id other than 0, or one not known at compile time)";
      }
      if (h.unrewritable.empty()) calleeName(call, h);
      f.barriers.push_back(h);
      return true;
    }
    if (n == "__syncwarp") {
      f.barriers.push_back({"__syncwarp", false, loc, {}, ""});
      return true;
    }
    if (n == "cudaLaunchKernel" || n == "cudaLaunchDevice" || n == "cudaGetParameterBuffer" ||
        n == "cudaLaunchCooperativeKernel") {
      f.blockers.push_back({"dynamic parallelism", "calls " + n.str() + " from device code", a.locate(loc), loc});
      return true;
    }
    if (n == "__cluster_dims__" || n.starts_with("__cluster")) {
      f.blockers.push_back({"thread-block cluster", "uses " + n.str(), a.locate(loc), loc});
      return true;
    }
    CgClass cg = classifyCg(callee, call);
    switch (cg.what) {
    case CgClass::BlockSync: {
      BarrierHit h{cg.kind, true, loc, std::nullopt, ""};
      if (cg.kind != "cg::thread_block::sync")
        h.unrewritable = "the group may be a tile of the block rather than the block (a generic thread_group)";
      else if (n != "sync")
        h.unrewritable = "it is a split arrive/wait barrier (" + n.str() + ")";
      else if (auto *me = dyn_cast<MemberExpr>(call->getCallee()->IgnoreParenImpCasts()))
        groupMemberSync(call, me,
                        h); // thread_block::sync is a static member in CUDA 13: not always a CXXMemberCallExpr
      else
        calleeName(call, h);
      f.barriers.push_back(h);
      return true;
    }
    case CgClass::WarpSync:
      f.barriers.push_back({cg.kind, false, loc, {}, ""});
      f.warpOps.push_back({cg.kind, loc});
      return true;
    case CgClass::Grid:
      f.blockers.push_back(
          {"grid-wide sync", "uses cooperative_groups grid group (" + cg.kind + ")", a.locate(loc), loc});
      return true;
    case CgClass::Cluster:
      f.blockers.push_back(
          {"thread-block cluster", "uses cooperative_groups cluster group (" + cg.kind + ")", a.locate(loc), loc});
      return true;
    case CgClass::BlockIndex:
      f.blockers.push_back({"block index through a library",
                            "reads the block index through " + cg.kind + ", which PTB cannot virtualize", a.locate(loc),
                            loc, /*cgBlockIndex=*/true});
      return true;
    case CgClass::None: break;
    }
    const FunctionDecl *def = definitionOf(callee);
    if (!def) return true;
    if (a.sm.isInSystemHeader(def->getLocation())) {
      f.calls.push_back({def, {}, {}, loc, call->getNumArgs() > 0, true, true});
      return true;
    }
    CallHit h{def, {}, {}, loc, false, false};
    if (auto *op = dyn_cast<CXXOperatorCallExpr>(call)) {
      operatorForm(op, h);
    } else if (isa<UserDefinedLiteral>(call)) {
      refuse(h, "it is called through a user-defined literal");
    } else {
      unsigned written = 0;
      for (const Expr *arg : call->arguments())
        if (!isa<CXXDefaultArgExpr>(arg)) ++written;
      h.hasArgs = written > 0;
      const Expr *ce = call->getCallee()->IgnoreParenImpCasts();
      if (auto *dre = dyn_cast<DeclRefExpr>(ce)) {
        namedForm(call, dre->getNameInfo(), dre->getEndLoc(), h);
      } else if (auto *me = dyn_cast<MemberExpr>(ce)) {
        namedForm(call, me->getMemberNameInfo(), me->getEndLoc(), h);
      } else {
        refuse(h, "it is called through a pointer or an expression, not by its name");
      }
    }
    f.calls.push_back(h);
    return true;
  }

  // A constructor's call: the clone's arguments go where its '(' or '{' opens, or after the variable's name.
  bool VisitCXXConstructExpr(CXXConstructExpr *e) {
    auto *ctor = e->getConstructor();
    const FunctionDecl *def = ctor ? definitionOf(ctor) : nullptr;
    if (!def) return true;
    bool system = a.sm.isInSystemHeader(def->getLocation());
    CallHit h{def, {}, {}, e->getBeginLoc(), e->getNumArgs() > 0, true, system};
    if (!system) constructForm(e, h);
    f.calls.push_back(h);
    return true;
  }

  // `W(a)` is a functional cast around the construction: the parentheses are the cast's.
  bool VisitCXXFunctionalCastExpr(CXXFunctionalCastExpr *e) {
    if (auto *ce = dyn_cast<CXXConstructExpr>(e->getSubExpr()->IgnoreImplicit()); ce && e->getLParenLoc().isValid())
      castParens[ce] = e->getLParenLoc();
    return true;
  }

  // Destructors run without a call in the text: a temporary's, a deleted object's (a local variable's: in
  // VisitVarDecl). One that reads blockIdx/gridDim cannot be sent to a clone.
  bool VisitCXXBindTemporaryExpr(CXXBindTemporaryExpr *e) {
    destroys(e->getType(), e->getBeginLoc());
    return true;
  }
  bool VisitCXXDeleteExpr(CXXDeleteExpr *e) {
    destroys(e->getDestroyedType(), e->getBeginLoc());
    return true;
  }

  // Default arguments and default member initializers are evaluated where they are used, with the text
  // of the declaration: a blockIdx there is the real one, and a call there cannot be edited for the task.
  bool VisitCXXDefaultArgExpr(CXXDefaultArgExpr *e) {
    evaluatedElsewhere(e->getExpr(), "a default argument", e->getUsedLocation());
    return true;
  }
  bool VisitCXXDefaultInitExpr(CXXDefaultInitExpr *e) {
    evaluatedElsewhere(e->getExpr(), "a default member initializer", e->getUsedLocation());
    return true;
  }

  // An aggregate initialization `S s{a}` is visited as written; what the compiler adds (default member
  // initializers, constructors of members left out) is only in its semantic form.
  bool VisitInitListExpr(InitListExpr *e) {
    InitListExpr *sem = e->isSemanticForm() ? e : e->getSemanticForm();
    if (sem && sem != e) implicitInits(sem, e);
    return true;
  }
  void implicitInits(const InitListExpr *sem, const InitListExpr *written) {
    std::set<const Expr *> seen(written->inits().begin(), written->inits().end());
    for (const Expr *init : sem->inits()) {
      if (!init || seen.count(init)) continue;
      init = init->IgnoreImplicit();
      if (auto *d = dyn_cast<CXXDefaultInitExpr>(init))
        VisitCXXDefaultInitExpr(const_cast<CXXDefaultInitExpr *>(d));
      else if (auto *c = dyn_cast<CXXConstructExpr>(init))
        VisitCXXConstructExpr(const_cast<CXXConstructExpr *>(c));
      else if (auto *l = dyn_cast<InitListExpr>(init))
        implicitInits(l, written);
    }
  }

  void destroys(QualType t, SourceLocation at) {
    if (t.isNull()) return;
    t = a.ctx.getBaseElementType(t);
    const CXXRecordDecl *rd = t->getAsCXXRecordDecl();
    if (!rd || !rd->hasDefinition()) return;
    const CXXDestructorDecl *d = rd->getDestructor();
    if (!d || d->isTrivial()) return;
    const FunctionDecl *def = definitionOf(d);
    if (!def) return;
    CallHit h{def, {}, {}, at, false, true, a.sm.isInSystemHeader(def->getLocation())};
    h.why = "it is a destructor, which runs without a call in the text";
    f.calls.push_back(h);
  }

private:
  void refuse(CallHit &h, std::string why) {
    h.viaOperatorOrImplicit = true;
    h.why = std::move(why);
    h.site.reset();
  }

  // The call's site, of `form`, with its callee and extent.
  CloneCallSite &site(CallHit &h, CloneCallSite::Form form, unsigned extent) {
    h.site.emplace();
    h.site->form = form;
    h.site->callee = h.callee;
    h.site->extent = extent;
    return *h.site;
  }

  // A call by name whose name token is at h.nameLoc, `length` characters, and its '(' at h.lparenLoc.
  void named(CallHit &h, unsigned length, unsigned extent) {
    CloneCallSite &s = site(h, CloneCallSite::Form::Named, extent);
    s.name = h.nameLoc;
    s.nameLength = length;
    s.open = h.lparenLoc;
    s.args = h.hasArgs;
  }

  // A call by name (`f(x)`, `obj.f(x)`, `p->f()`, `W::s()`, `Base::f()`, `f()` in a member function): its
  // name and its '('. A call that cannot be located has no site; the gathering of calls says why when the
  // call needs its clone.
  void namedForm(const CallExpr *call, const DeclarationNameInfo &name, SourceLocation end, CallHit &h) {
    SourceLocation nameLoc = name.getLoc();
    // A call written in a macro argument is edited where it is written.
    if (nameLoc.isMacroID() && !a.spelledInMacroBody(nameLoc) && !a.spelledInMacroBody(end)) {
      nameLoc = a.sm.getSpellingLoc(nameLoc);
      end = a.sm.getSpellingLoc(end);
    }
    h.nameLoc = nameLoc;
    h.lparenLoc = a.lparenAfter(end);
    if (auto *m = dyn_cast<CXXMethodDecl>(h.callee); m && m->isVirtual()) return refuse(h, "it is a virtual function");
    if (nameLoc.isMacroID() || h.lparenLoc.isInvalid()) return;
    unsigned length = 0;
    switch (name.getName().getNameKind()) {
    case DeclarationName::Identifier: length = Lexer::MeasureTokenLength(nameLoc, a.sm, a.ctx.getLangOpts()); break;
    case DeclarationName::CXXOperatorName: // `a.operator+(b)`, `operator+(a, b)`
    case DeclarationName::CXXConversionFunctionName: {
      SourceLocation last = a.editableLoc(name.getEndLoc());
      if (last.isInvalid() || a.sm.getFileID(last) != a.sm.getFileID(nameLoc)) return;
      length = a.sm.getFileOffset(a.afterTokenAt(last)) - a.sm.getFileOffset(nameLoc);
      break;
    }
    default: return refuse(h, "it is a destructor, which cannot be cloned");
    }
    named(h, length, a.extentOf(call));
  }

  // An overloaded operator written as an operator (`a + b`, `x[i]`, `f(a)`, `-a`, `a++`): where its operator
  // and operands are, for writing it as a call of the clone (a member's or a free one).
  void operatorForm(const CXXOperatorCallExpr *op, CallHit &h) {
    OverloadedOperatorKind kind = op->getOperator();
    auto *m = dyn_cast<CXXMethodDecl>(h.callee);
    const bool member = m && !m->isStatic();
    const unsigned n = op->getNumArgs();
    if (m && m->isVirtual()) return refuse(h, "it is a virtual function");
    if (kind == OO_Arrow) return refuse(h, "it is operator->, which a member access calls");
    const LangOptions &lo = a.ctx.getLangOpts();
    SourceLocation opTok = a.editableLoc(op->getOperatorLoc());
    const char *inMacro = "the call is written inside a macro definition";
    if (opTok.isInvalid()) return refuse(h, inMacro);
    h.nameLoc = opTok;
    unsigned extent = a.extentOf(op);
    auto offset = [&](SourceLocation l) { return a.sm.getFileOffset(l); };
    FileID file = a.sm.getFileID(opTok);
    auto sameFile = [&](std::initializer_list<SourceLocation> ls) {
      for (SourceLocation l : ls)
        if (l.isInvalid() || a.sm.getFileID(l) != file) return false;
      return true;
    };
    if (kind == OO_Call || kind == OO_Subscript) {
      // The '(' or '[' right after the object (the callee's own location is not reliable in instantiations).
      const tok::TokenKind openKind = kind == OO_Call ? tok::l_paren : tok::l_square;
      const tok::TokenKind closeKind = kind == OO_Call ? tok::r_paren : tok::r_square;
      SourceLocation object = a.boundaryLoc(op->getArg(0)->getEndLoc(), false), open;
      if (object.isValid())
        if (auto next = Lexer::findNextToken(object, a.sm, lo); next && next->is(openKind)) open = next->getLocation();
      Token close;
      if (!sameFile({open}) || offset(open) >= offset(opTok) || Lexer::getRawToken(opTok, close, a.sm, lo) ||
          !close.is(closeKind))
        return refuse(h, inMacro);
      unsigned written = 0;
      for (unsigned i = 1; i < n; ++i)
        if (!isa<CXXDefaultArgExpr>(op->getArg(i))) ++written;
      CloneCallSite &s =
          site(h, kind == OO_Call ? CloneCallSite::Form::CallOperator : CloneCallSite::Form::SubscriptOperator, extent);
      s.member = member;
      s.args = written > 0;
      s.open = open;
      if (kind == OO_Subscript) s.op = opTok;
      return;
    }
    // The operator's own token must be where the call says it is.
    static const tok::TokenKind tokens[] = {
        tok::unknown,
#define OVERLOADED_OPERATOR(Name, Spelling, Token, Unary, Binary, MemberOnly) tok::Token,
#include "clang/Basic/OperatorKinds.def"
    };
    Token written;
    if (Lexer::getRawToken(opTok, written, a.sm, lo) || !written.is(tokens[kind])) return refuse(h, inMacro);
    const Expr *first = op->getArg(0);
    SourceLocation begin = a.boundaryLoc(first->getBeginLoc(), true);
    SourceLocation firstEnd = a.afterTokenAt(a.boundaryLoc(first->getEndLoc(), false));
    SourceLocation afterOp = a.afterTokenAt(opTok);
    bool postfix = (kind == OO_PlusPlus || kind == OO_MinusMinus) && n == 2;
    if (n == 2 && !postfix) { // a @ b
      SourceLocation second = a.boundaryLoc(op->getArg(1)->getBeginLoc(), true);
      SourceLocation end = a.afterTokenAt(a.boundaryLoc(op->getEndLoc(), false));
      if (!sameFile({begin, firstEnd, second, end}) ||
          !(offset(firstEnd) <= offset(opTok) && offset(afterOp) <= offset(second)))
        return refuse(h, inMacro);
      CloneCallSite &s = site(h, CloneCallSite::Form::BinaryOperator, extent);
      s.member = member;
      s.begin = begin;
      s.firstEnd = firstEnd;
      s.second = second;
      s.end = end;
    } else if (postfix) { // a++
      if (!sameFile({begin, firstEnd}) || offset(firstEnd) > offset(opTok)) return refuse(h, inMacro);
      CloneCallSite &s = site(h, CloneCallSite::Form::PostfixOperator, extent);
      s.member = member;
      s.begin = begin;
      s.firstEnd = firstEnd;
      s.end = afterOp;
    } else if (n == 1) { // @a
      if (!sameFile({begin, firstEnd}) || offset(afterOp) > offset(begin)) return refuse(h, inMacro);
      CloneCallSite &s = site(h, CloneCallSite::Form::PrefixOperator, extent);
      s.member = member;
      s.op = opTok;
      s.begin = begin;
      s.firstEnd = firstEnd;
    } else {
      refuse(h, "the operator cannot be written as a call");
    }
  }

  // A constructor called with a written initializer (`W w(a)`, `W w{a}`, `W(a)`, `W{a}`, `new W(a)`, a
  // member or base initializer `m(a)`) or a plain `W w;`.
  void constructForm(const CXXConstructExpr *e, CallHit &h) {
    unsigned written = 0;
    for (const Expr *arg : e->arguments())
      if (!isa<CXXDefaultArgExpr>(arg)) ++written;
    SourceLocation open = e->getParenOrBraceRange().getBegin();
    if (open.isInvalid())
      if (auto it = castParens.find(e); it != castParens.end()) open = it->second;
    SourceLocation at, afterName;
    if (open.isValid()) {
      open = a.editableLoc(open);
      Token t;
      if (open.isInvalid() || Lexer::getRawToken(open, t, a.sm, a.ctx.getLangOpts()) ||
          !t.isOneOf(tok::l_paren, tok::l_brace))
        return refuse(h, "the call is written inside a macro definition");
      at = open.getLocWithOffset(1);
    } else if (auto it = defaultInits.find(e); it != defaultInits.end()) {
      SourceLocation name = a.editableLoc(it->second);
      if (name.isInvalid()) return refuse(h, "the call is written inside a macro definition");
      at = afterName = a.afterTokenAt(name);
    } else {
      return refuse(h, "the constructor is called implicitly (a conversion, a copy, or a member or base without "
                       "a written initializer)");
    }
    if (auto *ctor = dyn_cast<CXXConstructorDecl>(h.callee); ctor && ctor->getInheritedConstructor())
      return refuse(h, "it is an inherited constructor");
    h.viaOperatorOrImplicit = false;
    h.nameLoc = at;
    CloneCallSite &s = site(
        h, afterName.isValid() ? CloneCallSite::Form::DefaultConstruct : CloneCallSite::Form::Construct, a.extentOf(e));
    s.args = written > 0;
    if (afterName.isValid())
      s.end = afterName;
    else
      s.open = open;
  }

  void evaluatedElsewhere(const Expr *x, const char *what, SourceLocation used) {
    if (!x || nestedDefaults > 8) return;
    FunctionFacts inner;
    BodyVisitor v(a, inner);
    v.nestedDefaults = nestedDefaults + 1;
    v.TraverseStmt(const_cast<Expr *>(x));
    for (int i = 0; i < 4; ++i) {
      f.direct[i] |= inner.direct[i];
      f.macros[i].insert(inner.macros[i].begin(), inner.macros[i].end());
    }
    if (!inner.indexLocs.empty())
      f.blockers.push_back({"blockIdx/gridDim read where the task cannot reach",
                            std::string(what) + " reads blockIdx/gridDim at " +
                                a.locate(inner.indexLocs.front()).str() +
                                ": it is evaluated with the text of the declaration, where blockIdx is the hardware's",
                            a.locate(used), used});
    for (CallHit c : inner.calls) {
      if (!c.viaOperatorOrImplicit) {
        c.viaOperatorOrImplicit = true;
        c.why = std::string("it is called from ") + what + ", whose text is the declaration's";
      }
      c.site.reset();
      c.callLoc = used;
      f.calls.push_back(c);
    }
    f.barriers.insert(f.barriers.end(), inner.barriers.begin(), inner.barriers.end());
    f.blockers.insert(f.blockers.end(), inner.blockers.begin(), inner.blockers.end());
    if (f.coupling.empty()) f.coupling = inner.coupling;
  }

  // Where `loc` is written in the function's text: a file location, or inside a macro argument, where the
  // argument is written. Invalid when it comes from a macro's definition (that text is not the body's).
  SourceLocation writtenAt(SourceLocation loc) const {
    if (loc.isInvalid() || loc.isFileID()) return loc;
    if (a.spelledInMacroBody(loc)) return {};
    SourceLocation sp = a.sm.getSpellingLoc(loc);
    return sp.isFileID() ? sp : SourceLocation();
  }

  unsigned tokenEnd(SourceLocation tok) const {
    return a.sm.getFileOffset(tok) + Lexer::MeasureTokenLength(tok, a.sm, a.ctx.getLangOpts());
  }

  void notWritten(SourceLocation loc, BarrierHit &h) {
    std::string m = a.macroNameAt(loc);
    h.unrewritable = "it is written inside the definition of macro " + (m.empty() ? std::string("?") : m);
  }

  TaskBarrierSite &taskBarrier(BarrierHit &h, TaskBarrierSite::Form form, SourceLocation at, unsigned length) {
    TaskBarrierSite &s = h.site.emplace();
    s.form = form;
    s.kind = h.kind;
    s.at = at;
    s.length = length;
    return s;
  }

  // A barrier called by name (`__syncthreads()`, `cg::sync(block)`): where its name, with its qualifier,
  // is written. `__syncthreads()` that is a whole macro expansion (`#define SYNC __syncthreads()`): the
  // macro's use, macro name and arguments included.
  void calleeName(const CallExpr *call, BarrierHit &h) {
    const Expr *callee = call->getCallee()->IgnoreParenImpCasts();
    SourceLocation b = writtenAt(callee->getBeginLoc()), e = writtenAt(callee->getEndLoc());
    if (b.isValid() && e.isValid() && a.sm.getFileID(b) == a.sm.getFileID(e)) {
      taskBarrier(h, TaskBarrierSite::Form::Name, b, tokenEnd(e) - a.sm.getFileOffset(b));
      return;
    }
    // The name alone is a macro's whole expansion (`#define SYNC __syncthreads`), or with the call's
    // parentheses (`#define SYNC() __syncthreads()`, no arguments): the macro's use is the barrier's text.
    if (wholeExpansion(callee->getBeginLoc(), callee->getEndLoc(), TaskBarrierSite::Form::Name, h)) return;
    if (call->getNumArgs() == 0 &&
        wholeExpansion(call->getBeginLoc(), call->getRParenLoc(), TaskBarrierSite::Form::NameAndCall, h))
      return;
    notWritten(callee->getBeginLoc(), h);
  }

  bool wholeExpansion(SourceLocation b, SourceLocation e, TaskBarrierSite::Form form, BarrierHit &h) {
    SourceLocation mb, me;
    const LangOptions &lo = a.ctx.getLangOpts();
    if (!b.isMacroID() || !e.isMacroID() || !Lexer::isAtStartOfMacroExpansion(b, a.sm, lo, &mb) ||
        !Lexer::isAtEndOfMacroExpansion(e, a.sm, lo, &me) || !mb.isFileID() || !me.isFileID() ||
        a.sm.getFileID(mb) != a.sm.getFileID(me) || a.sm.getFileOffset(mb) > a.sm.getFileOffset(me))
      return false;
    taskBarrier(h, form, mb, tokenEnd(me) - a.sm.getFileOffset(mb));
    return true;
  }

  // `block.sync()` / `p->sync()` on a cooperative_groups::thread_block: where the object begins, and its
  // `.sync()`.
  void groupMemberSync(const CallExpr *call, const MemberExpr *me, BarrierHit &h) {
    if (me->isImplicitAccess() || me->getOperatorLoc().isInvalid()) {
      h.unrewritable = "the group it is called on is not written (an implicit object)";
      return;
    }
    SourceLocation ob = writtenAt(me->getBase()->getBeginLoc()), op = writtenAt(me->getOperatorLoc()),
                   rp = writtenAt(call->getRParenLoc());
    if (ob.isInvalid() || op.isInvalid() || rp.isInvalid() || a.sm.getFileID(ob) != a.sm.getFileID(op) ||
        a.sm.getFileID(op) != a.sm.getFileID(rp) || a.sm.getFileOffset(ob) > a.sm.getFileOffset(op) ||
        a.sm.getFileOffset(op) > a.sm.getFileOffset(rp)) {
      notWritten(call->getBeginLoc(), h);
      return;
    }
    TaskBarrierSite &site = taskBarrier(h, TaskBarrierSite::Form::Member, ob, 0);
    site.memberOp = op;
    site.memberLength = tokenEnd(rp) - a.sm.getFileOffset(op);
    site.arrow = me->isArrow();
  }

  Analyzer &a;
  FunctionFacts &f;
  SlotFactsRecorder slot; // f.slot (a default argument's visitor records into facts that are dropped)
  int lambdaDepth = 0;
  struct OpenLambda {
    const LambdaExpr *lambda;
    size_t problemsBefore; // f.slot.problems when the walk entered it
    bool inBody = false, bodyReadsBuiltins = false;
  };
  std::vector<OpenLambda> lambdas; // the lambdas the walk is in, innermost last
  int nestedFunctionDepth = 0;     // inside a function defined in the body (TraverseDecl)
  int nestedDefaults = 0;
  std::map<const CXXConstructExpr *, SourceLocation> castParens;   // `W(a)`: the cast's '('
  std::map<const CXXConstructExpr *, SourceLocation> defaultInits; // `W w;`: the variable's name
};

} // namespace

void Analyzer::collect(const FunctionDecl *fd, const Stmt *body, FunctionFacts &f) {
  BodyVisitor v(*this, f);
  // A constructor's member and base initializers, written or implicit, run before its body.
  if (auto *ctor = dyn_cast<CXXConstructorDecl>(fd))
    for (const CXXCtorInitializer *init : ctor->inits())
      if (init->getInit()) v.TraverseStmt(init->getInit());
  v.TraverseStmt(const_cast<Stmt *>(body));
  // A destructor destroys the members and bases after its body.
  if (auto *dtor = dyn_cast<CXXDestructorDecl>(fd)) {
    const CXXRecordDecl *rd = dtor->getParent();
    for (const FieldDecl *field : rd->fields()) v.destroys(field->getType(), dtor->getLocation());
    for (const CXXBaseSpecifier &base : rd->bases()) v.destroys(base.getType(), dtor->getLocation());
  }
}

std::string textOf(SourceRange r, const SourceManager &sm, const LangOptions &lo) {
  return Lexer::getSourceText(CharSourceRange::getTokenRange(r), sm, lo).str();
}

} // namespace ptb::analysis

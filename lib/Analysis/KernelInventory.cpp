#include "KernelInventory.h"
#include "Uniformity.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMap.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"

#include "llvm/ADT/StringExtras.h"

#include <deque>
#include <functional>
#include <tuple>

using namespace clang;

namespace ptb {

std::string Location::str() const {
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

const char *name(BuiltinVar v) {
  switch (v) {
  case BuiltinVar::blockIdx: return "blockIdx";
  case BuiltinVar::gridDim: return "gridDim";
  case BuiltinVar::threadIdx: return "threadIdx";
  case BuiltinVar::blockDim: return "blockDim";
  }
  return "?";
}

std::string ptbCloneName(const FunctionDecl *fd) {
  if (auto *ctor = dyn_cast<CXXConstructorDecl>(fd)) return ctor->getParent()->getNameAsString();
  if (OverloadedOperatorKind op = fd->getOverloadedOperator(); op != OO_None) {
    static const char *const names[] = {"",
#define OVERLOADED_OPERATOR(Name, Spelling, Token, Unary, Binary, MemberOnly) #Name,
#include "clang/Basic/OperatorKinds.def"
    };
    auto *m = dyn_cast<CXXMethodDecl>(fd);
    return std::string(m && !m->isStatic() ? "operator" : "freeOperator") + names[op] + "__ptb";
  }
  return fd->getNameAsString() + "__ptb";
}

bool Kernel::usesVirtualIndex() const {
  auto it = uses.find(BuiltinVar::blockIdx), jt = uses.find(BuiltinVar::gridDim);
  return (it != uses.end() && it->second.used()) || (jt != uses.end() && jt->second.used());
}

std::optional<BuiltinVar> builtinVarOf(const Expr *e) {
  auto *ref = dyn_cast<DeclRefExpr>(e);
  if (!ref) return std::nullopt;
  auto *var = dyn_cast<VarDecl>(ref->getDecl());
  if (!var || !var->getIdentifier()) return std::nullopt;
  std::string type = var->getType().getUnqualifiedType().getAsString();
  if (type.find("__cuda_builtin_") == std::string::npos) return std::nullopt;
  StringRef n = var->getName();
  if (n == "blockIdx") return BuiltinVar::blockIdx;
  if (n == "gridDim") return BuiltinVar::gridDim;
  if (n == "threadIdx") return BuiltinVar::threadIdx;
  if (n == "blockDim") return BuiltinVar::blockDim;
  return std::nullopt;
}

namespace {

std::string withoutInlineNamespace(std::string s) {
  for (const char *ns : {"__v1::", "__4::", "__cxx11::", "_V2::"}) {
    for (size_t at; (at = s.find(ns)) != std::string::npos;) s.erase(at, strlen(ns));
  }
  return s;
}

// The definition to read for a called function: the instantiation when it has a body, else the pattern.
const FunctionDecl *definitionOf(const FunctionDecl *fd) {
  if (!fd) return nullptr;
  const FunctionDecl *def = nullptr;
  if (fd->hasBody(def)) return def;
  if (auto *p = fd->getTemplateInstantiationPattern())
    if (p->hasBody(def)) return def;
  return nullptr;
}

// The pattern (what is written in the source) of a function, for cloning.
const FunctionDecl *patternOf(const FunctionDecl *fd) {
  if (!fd) return nullptr;
  if (auto *p = fd->getTemplateInstantiationPattern()) fd = p;
  const FunctionDecl *def = nullptr;
  return fd->hasBody(def) ? def : nullptr;
}

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
};

// Whether a cooperative-groups function is a barrier, a grid construct, or a block-index read.
struct CgClass { std::string kind; enum { None, BlockSync, WarpSync, Grid, Cluster, BlockIndex } what; };

CgClass classifyCg(const FunctionDecl *fd, const CallExpr *call) {
  std::string q = withoutInlineNamespace(fd->getQualifiedNameAsString());
  if (q.rfind("cooperative_groups::", 0) != 0) return {"", CgClass::None};
  StringRef n = fd->getName();
  std::string cls;
  if (auto *m = dyn_cast<CXXMethodDecl>(fd)) cls = m->getParent()->getName().str();
  if (q.find("grid_group") != std::string::npos || n == "this_grid" || n == "this_multi_grid" ||
      q.find("multi_grid_group") != std::string::npos)
    return {q, CgClass::Grid};
  if (q.find("cluster_group") != std::string::npos || n == "this_cluster")
    return {q, CgClass::Cluster};
  if (cls == "thread_block" && (n == "group_index" || n == "block_index" || n == "block_rank"))
    return {q, CgClass::BlockIndex};
  if (n == "sync" || n == "barrier_wait" || n == "barrier_arrive") {
    std::string on = cls;
    if (on.empty() && call && call->getNumArgs() == 1)
      on = withoutInlineNamespace(call->getArg(0)->IgnoreParenImpCasts()->getType().getCanonicalType()
                                      .getUnqualifiedType().getAsString());
    if (on.find("grid_group") != std::string::npos) return {q, CgClass::Grid};
    if (on.find("cluster") != std::string::npos) return {q, CgClass::Cluster};
    if (on.find("thread_block_tile") != std::string::npos || on.find("coalesced") != std::string::npos ||
        on.find("tiled_partition") != std::string::npos)
      return {"cg::" + std::string(on.find("coalesced") != std::string::npos ? "coalesced_group" : "thread_block_tile") + "::sync", CgClass::WarpSync};
    if (on.find("thread_block") != std::string::npos) return {"cg::thread_block::sync", CgClass::BlockSync};
    // A generic group: it may be the whole block, so it counts as a block-wide barrier.
    if (on.find("thread_group") != std::string::npos) return {"cg::thread_group::sync", CgClass::BlockSync};
  }
  return {"", CgClass::None};
}

class Analyzer {
public:
  Analyzer(ASTContext &ctx, const FileSelection &selection)
      : ctx(ctx), sm(ctx.getSourceManager()), selected(sm, selection) {}

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

  ASTContext &ctx;
  SourceManager &sm;
  SelectedFiles selected;  // the main file and the selected included files
  std::map<const FunctionDecl *, FunctionFacts> memo;
};

class BodyVisitor : public RecursiveASTVisitor<BodyVisitor> {
public:
  BodyVisitor(Analyzer &a, FunctionFacts &f) : a(a), f(f) {}
  bool shouldVisitTemplateInstantiations() const { return false; }
  bool shouldVisitImplicitCode() const { return false; }

  bool TraverseLambdaExpr(LambdaExpr *e) {
    ++lambdaDepth;
    bool usedBefore = f.indexLocs.size();
    size_t before = f.indexLocs.size();
    bool r = RecursiveASTVisitor::TraverseLambdaExpr(e);
    (void)usedBefore;
    if (f.indexLocs.size() > before && e->getCaptureDefault() == LCD_None) f.lambdasWithoutDefaultCapture.push_back(e);
    --lambdaDepth;
    return r;
  }

  bool VisitDeclRefExpr(DeclRefExpr *e) {
    if (auto v = builtinVarOf(e)) {
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

  bool VisitReturnStmt(ReturnStmt *r) {
    if (lambdaDepth == 0) f.returns.push_back(r);
    return true;
  }

  void couple(const std::string &what) {
    if (f.coupling.empty()) f.coupling = what;
  }

  bool VisitVarDecl(VarDecl *v) {
    if (!v->hasAttr<CUDASharedAttr>()) {
      if (v->isLocalVarDecl() && !v->isStaticLocal()) {
        destroys(v->getType(), v->getLocation());
        // `W w;`: the constructor's clone is called as `W w(::ptb::VirtualBlock{}, blockIdx, gridDim);`.
        if (auto *ce = dyn_cast_or_null<CXXConstructExpr>(v->getInit() ? v->getInit()->IgnoreImplicit() : nullptr);
            ce && ce->getNumArgs() == 0 && ce->getParenOrBraceRange().isInvalid() &&
            !v->getType()->isArrayType() && !isa<DecompositionDecl>(v))
          defaultInits[ce] = v->getLocation();
      }
      return true;
    }
    couple("__shared__ " + v->getNameAsString());
    SharedVariable s;
    s.name = v->getNameAsString();
    s.type = v->getType().getAsString(a.ctx.getPrintingPolicy());
    s.dynamic = v->hasExternalStorage() || v->getType()->isIncompleteArrayType();
    s.loc = a.locate(v->getLocation());
    QualType t = v->getType();
    if (!s.dynamic && !t->isDependentType() && !t->isIncompleteType())
      s.bytes = a.ctx.getTypeSizeInChars(t).getQuantity();
    f.shared.push_back(s);
    return true;
  }

  bool VisitGCCAsmStmt(GCCAsmStmt *s) {
    couple("inline asm");
    std::string text = s->getAsmString()->getString().str();
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
    if (has("bar.sync") || has("barrier.sync") || has("bar.red") || has("barrier.red") ||
        has("bar.arrive") || has("barrier.cta"))
      f.barriers.push_back({"bar.sync (inline asm)", true, s->getAsmLoc(), {}, "it is inline asm"});
    if (has("shfl") || has("vote") || has("bar.warp") || has("match.") || has("redux") || has("mma") ||
        has("ldmatrix") || has("stmatrix") || has("elect.sync"))
      f.warpOps.push_back({"warp-collective inline asm", s->getAsmLoc()});
    return true;
  }

  bool VisitCUDAKernelCallExpr(CUDAKernelCallExpr *e) {
    f.blockers.push_back({"dynamic parallelism", "launches a kernel from device code", a.locate(e->getBeginLoc()),
                          e->getBeginLoc()});
    return true;
  }

  bool VisitCallExpr(CallExpr *call) {
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
          if (auto *ft = dyn_cast<FunctionTemplateDecl>(d->getUnderlyingDecl())) cand = ft->getTemplatedDecl();
          else cand = dyn_cast<FunctionDecl>(d->getUnderlyingDecl());
          if (cand && definitionOf(cand) && !a.sm.isInSystemHeader(cand->getLocation())) {
            CallHit h{definitionOf(cand), ule->getNameLoc(), a.lparenAfter(ule->getEndLoc()), call->getBeginLoc(),
                      call->getNumArgs() > 0, false};
            if (h.nameLoc.isFileID() && h.lparenLoc.isValid() && ule->getName().isIdentifier()) {
              unsigned extent = a.extentOf(call);
              edit(h, CallEdit::Kind::Replace, h.nameLoc, Lexer::MeasureTokenLength(h.nameLoc, a.sm, a.ctx.getLangOpts()),
                   ptbCloneName(h.callee), extent);
              edit(h, CallEdit::Kind::Open, h.lparenLoc.getLocWithOffset(1), 0,
                   std::string("blockIdx, gridDim") + (h.hasArgs ? ", " : ""), extent);
            }
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
      static const char *warpOps[] = {"__shfl", "__ballot", "__any", "__all", "__match", "__reduce_", "__activemask",
                                      "__syncwarp", "__threadfence_block", "__syncthreads", "__barrier"};
      for (const char *w : warpOps)
        if (n.starts_with(w)) couple(n.str());
      if (q.rfind("cooperative_groups::", 0) == 0 || q.rfind("nvcuda::wmma::", 0) == 0) couple(q);
      static const char *collectives[] = {"__shfl", "__ballot_sync", "__any_sync", "__all_sync", "__uni_sync",
                                          "__match", "__reduce_", "__syncwarp"};
      for (const char *w : collectives)
        if (n.starts_with(w)) f.warpOps.push_back({n.str(), loc});
      if (q.rfind("nvcuda::wmma::", 0) == 0) f.warpOps.push_back({q, loc});
    }
    if (n == "__syncthreads" || n == "__syncthreads_count" || n == "__syncthreads_and" ||
        n == "__syncthreads_or" || n == "__barrier_sync") {
      BarrierHit h{n.str(), true, loc, {}, ""};
      if (n == "__barrier_sync") {
        Expr::EvalResult id;
        const Expr *arg = call->getNumArgs() == 1 ? call->getArg(0) : nullptr;
        if (!arg || arg->isValueDependent() || !arg->EvaluateAsInt(id, a.ctx) || id.Val.getInt() != 0)
          h.unrewritable = "it is a named barrier (an id other than 0, or one not known at compile time)";
      }
      if (h.unrewritable.empty()) {
        std::string to = n == "__syncthreads"         ? "::ptb::task_sync"
                         : n == "__syncthreads_count" ? "::ptb::task_sync_count"
                         : n == "__syncthreads_and"   ? "::ptb::task_sync_and"
                         : n == "__syncthreads_or"    ? "::ptb::task_sync_or"
                                                      : "::ptb::task_barrier_sync";
        renameCallee(call, to, h);
      }
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
      BarrierHit h{cg.kind, true, loc, {}, ""};
      if (cg.kind != "cg::thread_block::sync")
        h.unrewritable = "the group may be a tile of the block rather than the block (a generic thread_group)";
      else if (n != "sync")
        h.unrewritable = "it is a split arrive/wait barrier (" + n.str() + ")";
      else if (auto *me = dyn_cast<MemberExpr>(call->getCallee()->IgnoreParenImpCasts()))
        groupMemberSync(call, me, h);  // thread_block::sync is a static member in CUDA 13: not always a CXXMemberCallExpr
      else
        renameCallee(call, "::ptb::task_group_sync", h);
      f.barriers.push_back(h);
      return true;
    }
    case CgClass::WarpSync:
      f.barriers.push_back({cg.kind, false, loc, {}, ""});
      f.warpOps.push_back({cg.kind, loc});
      return true;
    case CgClass::Grid:
      f.blockers.push_back({"grid-wide sync", "uses cooperative_groups grid group (" + cg.kind + ")", a.locate(loc), loc});
      return true;
    case CgClass::Cluster:
      f.blockers.push_back({"thread-block cluster", "uses cooperative_groups cluster group (" + cg.kind + ")", a.locate(loc), loc});
      return true;
    case CgClass::BlockIndex:
      f.blockers.push_back({"block index through a library", "reads the block index through " + cg.kind +
                            ", which PTB cannot virtualize", a.locate(loc), loc, /*cgBlockIndex=*/true});
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
      for (const Expr *arg : call->arguments()) if (!isa<CXXDefaultArgExpr>(arg)) ++written;
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

  // The constructor's clone takes a ::ptb::VirtualBlock first, then the virtual indices: `W w(a)` becomes
  // `W w(::ptb::VirtualBlock{}, blockIdx, gridDim, a)`, `W{a}` `W{::ptb::VirtualBlock{}, blockIdx, gridDim, a}`.
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
      if (auto *d = dyn_cast<CXXDefaultInitExpr>(init)) VisitCXXDefaultInitExpr(const_cast<CXXDefaultInitExpr *>(d));
      else if (auto *c = dyn_cast<CXXConstructExpr>(init)) VisitCXXConstructExpr(const_cast<CXXConstructExpr *>(c));
      else if (auto *l = dyn_cast<InitListExpr>(init)) implicitInits(l, written);
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
    h.edits.clear();
  }

  void edit(CallHit &h, CallEdit::Kind kind, SourceLocation at, unsigned length, std::string text, unsigned extent) {
    h.edits.push_back({kind, at, length, std::move(text), extent});
  }

  // A call by name (`f(x)`, `obj.f(x)`, `p->f()`, `W::s()`, `Base::f()`, `f()` in a member function): the
  // name becomes the clone's and the virtual indices go first among the arguments. A call that cannot be
  // located keeps no edits; the gathering of calls says why when the call needs its clone.
  void namedForm(const CallExpr *call, const DeclarationNameInfo &name, SourceLocation end, CallHit &h) {
    SourceLocation nameLoc = name.getLoc();
    // A call written in a macro argument is edited where it is written.
    if (nameLoc.isMacroID() && !a.spelledInMacroBody(nameLoc) && !a.spelledInMacroBody(end)) {
      nameLoc = a.sm.getSpellingLoc(nameLoc);
      end = a.sm.getSpellingLoc(end);
    }
    h.nameLoc = nameLoc;
    h.lparenLoc = a.lparenAfter(end);
    if (auto *m = dyn_cast<CXXMethodDecl>(h.callee); m && m->isVirtual())
      return refuse(h, "it is a virtual function");
    if (nameLoc.isMacroID() || h.lparenLoc.isInvalid()) return;
    unsigned length = 0;
    switch (name.getName().getNameKind()) {
    case DeclarationName::Identifier:
      length = Lexer::MeasureTokenLength(nameLoc, a.sm, a.ctx.getLangOpts());
      break;
    case DeclarationName::CXXOperatorName:  // `a.operator+(b)`, `operator+(a, b)`
    case DeclarationName::CXXConversionFunctionName: {
      SourceLocation last = a.editableLoc(name.getEndLoc());
      if (last.isInvalid() || a.sm.getFileID(last) != a.sm.getFileID(nameLoc)) return;
      length = a.sm.getFileOffset(a.afterTokenAt(last)) - a.sm.getFileOffset(nameLoc);
      break;
    }
    default:
      return refuse(h, "it is a destructor, which cannot be cloned");
    }
    unsigned extent = a.extentOf(call);
    edit(h, CallEdit::Kind::Replace, nameLoc, length, ptbCloneName(h.callee), extent);
    edit(h, CallEdit::Kind::Open, h.lparenLoc.getLocWithOffset(1), 0,
         std::string("blockIdx, gridDim") + (h.hasArgs ? ", " : ""), extent);
  }

  // An overloaded operator written as an operator. The call is written as one of the clone, a member
  // (`a + b` -> `(a).operatorPlus__ptb(blockIdx, gridDim, b)`, `x[i]` -> `x.operatorSubscript__ptb(blockIdx,
  // gridDim, i)`, `f(a)` -> `f.operatorCall__ptb(blockIdx, gridDim, a)`, `-a` -> `(a).operatorMinus__ptb(blockIdx,
  // gridDim)`, `a++` -> `(a).operatorPlusPlus__ptb(blockIdx, gridDim, 0)`) or not (`a + b` ->
  // `freeOperatorPlus__ptb(blockIdx, gridDim, a, b)`).
  void operatorForm(const CXXOperatorCallExpr *op, CallHit &h) {
    OverloadedOperatorKind kind = op->getOperator();
    auto *m = dyn_cast<CXXMethodDecl>(h.callee);
    const bool member = m && !m->isStatic();
    const std::string name = ptbCloneName(h.callee), vi = "blockIdx, gridDim";
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
      for (unsigned i = 1; i < n; ++i) if (!isa<CXXDefaultArgExpr>(op->getArg(i))) ++written;
      edit(h, CallEdit::Kind::Replace, open, 1, "." + name + "(" + vi + (written ? ", " : ""), extent);
      if (kind == OO_Subscript) edit(h, CallEdit::Kind::Replace, opTok, 1, ")", extent);
      return;
    }
    // The operator's own token must be where the call says it is.
    static const tok::TokenKind tokens[] = {tok::unknown,
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
    if (n == 2 && !postfix) {  // a @ b
      SourceLocation second = a.boundaryLoc(op->getArg(1)->getBeginLoc(), true);
      SourceLocation end = a.afterTokenAt(a.boundaryLoc(op->getEndLoc(), false));
      if (!sameFile({begin, firstEnd, second, end}) || !(offset(firstEnd) <= offset(opTok) && offset(afterOp) <= offset(second)))
        return refuse(h, inMacro);
      edit(h, CallEdit::Kind::Open, begin, 0, member ? "(" : name + "(" + vi + ", ", extent);
      edit(h, CallEdit::Kind::Replace, firstEnd, offset(second) - offset(firstEnd),
           member ? ")." + name + "(" + vi + ", " : std::string(", "), extent);
      edit(h, CallEdit::Kind::Close, end, 0, ")", extent);
    } else if (postfix) {  // a++
      if (!sameFile({begin, firstEnd}) || offset(firstEnd) > offset(opTok)) return refuse(h, inMacro);
      edit(h, CallEdit::Kind::Open, begin, 0, member ? "(" : name + "(" + vi + ", ", extent);
      edit(h, CallEdit::Kind::Replace, firstEnd, offset(afterOp) - offset(firstEnd),
           member ? ")." + name + "(" + vi + ", 0)" : std::string(", 0)"), extent);
    } else if (n == 1) {  // @a
      if (!sameFile({begin, firstEnd}) || offset(afterOp) > offset(begin)) return refuse(h, inMacro);
      edit(h, CallEdit::Kind::Replace, opTok, offset(begin) - offset(opTok), member ? "(" : name + "(" + vi + ", ", extent);
      edit(h, CallEdit::Kind::Close, firstEnd, 0, member ? ")." + name + "(" + vi + ")" : std::string(")"), extent);
    } else {
      refuse(h, "the operator cannot be written as a call");
    }
  }

  // A constructor called with a written initializer (`W w(a)`, `W w{a}`, `W(a)`, `W{a}`, `new W(a)`, a
  // member or base initializer `m(a)`) or a plain `W w;`.
  void constructForm(const CXXConstructExpr *e, CallHit &h) {
    unsigned written = 0;
    for (const Expr *arg : e->arguments()) if (!isa<CXXDefaultArgExpr>(arg)) ++written;
    std::string text = "::ptb::VirtualBlock{}, blockIdx, gridDim";
    SourceLocation open = e->getParenOrBraceRange().getBegin();
    if (open.isInvalid())
      if (auto it = castParens.find(e); it != castParens.end()) open = it->second;
    SourceLocation at;
    if (open.isValid()) {
      open = a.editableLoc(open);
      Token t;
      if (open.isInvalid() || Lexer::getRawToken(open, t, a.sm, a.ctx.getLangOpts()) || !t.isOneOf(tok::l_paren, tok::l_brace))
        return refuse(h, "the call is written inside a macro definition");
      at = open.getLocWithOffset(1);
      if (written) text += ", ";
    } else if (auto it = defaultInits.find(e); it != defaultInits.end()) {
      SourceLocation name = a.editableLoc(it->second);
      if (name.isInvalid()) return refuse(h, "the call is written inside a macro definition");
      at = a.afterTokenAt(name);
      text = "(" + text + ")";
    } else {
      return refuse(h, "the constructor is called implicitly (a conversion, a copy, or a member or base without "
                       "a written initializer)");
    }
    if (auto *ctor = dyn_cast<CXXConstructorDecl>(h.callee); ctor && ctor->getInheritedConstructor())
      return refuse(h, "it is an inherited constructor");
    h.viaOperatorOrImplicit = false;
    h.nameLoc = at;
    edit(h, CallEdit::Kind::Open, at, 0, text, a.extentOf(e));
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
                            std::string(what) + " reads blockIdx/gridDim at " + a.locate(inner.indexLocs.front()).str() +
                                ": it is evaluated with the text of the declaration, where blockIdx is the hardware's",
                            a.locate(used), used});
    for (CallHit c : inner.calls) {
      if (!c.viaOperatorOrImplicit) {
        c.viaOperatorOrImplicit = true;
        c.why = std::string("it is called from ") + what + ", whose text is the declaration's";
      }
      c.edits.clear();
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

  // A barrier called by name (`__syncthreads()`, `cg::sync(block)`): the name, with its qualifier, becomes
  // `to`. `__syncthreads()` that is a whole macro expansion (`#define SYNC __syncthreads()`) is replaced
  // there, macro name and arguments included.
  void renameCallee(const CallExpr *call, const std::string &to, BarrierHit &h) {
    const Expr *callee = call->getCallee()->IgnoreParenImpCasts();
    SourceLocation b = writtenAt(callee->getBeginLoc()), e = writtenAt(callee->getEndLoc());
    if (b.isValid() && e.isValid() && a.sm.getFileID(b) == a.sm.getFileID(e)) {
      h.edits.push_back({b, tokenEnd(e) - a.sm.getFileOffset(b), to});
      return;
    }
    // The name alone is a macro's whole expansion (`#define SYNC __syncthreads`), or with the call's
    // parentheses (`#define SYNC() __syncthreads()`, no arguments): the macro's use is replaced.
    if (wholeExpansion(callee->getBeginLoc(), callee->getEndLoc(), to, h)) return;
    if (call->getNumArgs() == 0 && wholeExpansion(call->getBeginLoc(), call->getRParenLoc(), to + "()", h)) return;
    notWritten(callee->getBeginLoc(), h);
  }

  bool wholeExpansion(SourceLocation b, SourceLocation e, const std::string &to, BarrierHit &h) {
    SourceLocation mb, me;
    const LangOptions &lo = a.ctx.getLangOpts();
    if (!b.isMacroID() || !e.isMacroID() || !Lexer::isAtStartOfMacroExpansion(b, a.sm, lo, &mb) ||
        !Lexer::isAtEndOfMacroExpansion(e, a.sm, lo, &me) || !mb.isFileID() || !me.isFileID() ||
        a.sm.getFileID(mb) != a.sm.getFileID(me) || a.sm.getFileOffset(mb) > a.sm.getFileOffset(me))
      return false;
    h.edits.push_back({mb, tokenEnd(me) - a.sm.getFileOffset(mb), to});
    return true;
  }

  // `block.sync()` / `p->sync()` on a cooperative_groups::thread_block: ::ptb::task_group_sync(block).
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
    h.edits.push_back({ob, 0, std::string("::ptb::task_group_sync(") + (me->isArrow() ? "*" : "")});
    h.edits.push_back({op, tokenEnd(rp) - a.sm.getFileOffset(op), ")"});
  }

  Analyzer &a;
  FunctionFacts &f;
  int lambdaDepth = 0;
  int nestedDefaults = 0;
  std::map<const CXXConstructExpr *, SourceLocation> castParens;    // `W(a)`: the cast's '('
  std::map<const CXXConstructExpr *, SourceLocation> defaultInits;  // `W w;`: the variable's name
};

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

class KernelBuilder {
public:
  KernelBuilder(Analyzer &a) : a(a), sm(a.sm), lo(a.ctx.getLangOpts()) {}

  Kernel build(const FunctionDecl *def) {
    Kernel k;
    k.decl = def;
    k.templ = def->getDescribedFunctionTemplate();
    k.name = def->getNameAsString();
    k.qualifiedName = def->getQualifiedNameAsString();
    k.loc = a.locate(def->getLocation());
    if (k.templ) {
      for (const NamedDecl *p : *k.templ->getTemplateParameters())
        k.templateParams.push_back(textOf(p->getSourceRange(), sm, lo));
      for (const FunctionDecl *spec : k.templ->specializations()) {
        std::string s;
        llvm::raw_string_ostream os(s);
        spec->getNameForDiagnostic(os, a.ctx.getPrintingPolicy(), /*Qualified=*/true);
        k.instantiations.push_back(os.str());
      }
      std::sort(k.instantiations.begin(), k.instantiations.end());
      k.instantiations.erase(std::unique(k.instantiations.begin(), k.instantiations.end()), k.instantiations.end());
    }
    // Clusters: clang 19 drops the unknown cluster_dims attribute, so read the declaration's own text.
    {
      SourceLocation b = sm.getExpansionLoc(k.templ ? k.templ->getBeginLoc() : def->getBeginLoc());
      SourceLocation e = sm.getExpansionLoc(def->getBody()->getBeginLoc());
      if (sm.getFileID(b) == sm.getFileID(e) && sm.getFileOffset(b) <= sm.getFileOffset(e)) {
        StringRef head = sm.getBufferData(sm.getFileID(b)).substr(sm.getFileOffset(b), sm.getFileOffset(e) - sm.getFileOffset(b));
        size_t at = head.find("__cluster_dims__");
        if (at == StringRef::npos) at = head.find("cluster_dims");
        if (at != StringRef::npos) {
          SourceLocation l = b.getLocWithOffset(at);
          k.blockers.push_back({"thread-block cluster", "the kernel is declared with __cluster_dims__", a.locate(l), l});
        }
      }
    }
    for (const ParmVarDecl *p : def->parameters())
      k.params.push_back({p->getNameAsString(), p->getType().getAsString(a.ctx.getPrintingPolicy()),
                          p->isParameterPack()});
    for (BuiltinVar v : kBuiltinVars) k.uses[v];

    // The bodies to read: the pattern, and every instantiation (they resolve dependent calls).
    std::vector<const FunctionDecl *> bodies{def};
    if (k.templ)
      for (const FunctionDecl *spec : k.templ->specializations())
        if (const FunctionDecl *d = definitionOf(spec); d && d != def) bodies.push_back(d);

    std::set<unsigned> seenBarrier, seenBlocker, seenCall, seenShared;
    for (const FunctionDecl *body : bodies) {
      const FunctionFacts &f = a.factsOf(body);
      for (int i = 0; i < 4; ++i) {
        if (f.direct[i]) k.uses[kBuiltinVars[i]].direct = true;
        k.uses[kBuiltinVars[i]].macros.insert(f.macros[i].begin(), f.macros[i].end());
      }
      for (auto &b : f.barriers)
        if (seenBarrier.insert(sm.getFileOffset(sm.getFileLoc(b.loc))).second) addBarrier(k, b, {}, b.loc);
      for (auto &b : f.blockers)
        if (seenBlocker.insert(sm.getFileOffset(sm.getFileLoc(b.sloc))).second) k.blockers.push_back(b);
      for (auto &s : f.shared)
        if (body == def) { SharedVariable sv = s; sv.function = k.qualifiedName; k.shared.push_back(sv); }
      for (auto *l : f.lambdasWithoutDefaultCapture)
        k.blockers.push_back({"lambda without capture default", "a lambda that reads blockIdx/gridDim must capture it; give it [&] or [=]",
                              a.locate(l->getBeginLoc()), l->getBeginLoc()});
      (void)seenCall; (void)seenShared;
    }

    for (const FunctionDecl *body : bodies)
      if (k.taskCoupling.empty()) k.taskCoupling = a.factsOf(body).coupling;
    walkCallees(k, bodies);
    k.tasksIndependent = k.taskCoupling.empty() && k.barriers.empty() && k.shared.empty();
    if (!k.tasksIndependent && k.taskCoupling.empty()) k.taskCoupling = "barriers or shared memory";

    const FunctionFacts &pf = a.factsOf(def);
    UniformityAnalysis ua(a.ctx, def);
    for (const ReturnStmt *r : pf.returns) {
      ReturnSite rs;
      rs.stmt = r;
      rs.loc = a.locate(r->getReturnLoc());
      rs.blockUniform = ua.isReachedUniformly(r, rs.reason);
      k.returns.push_back(rs);
    }
    std::sort(k.barriers.begin(), k.barriers.end(), [](auto &x, auto &y) { return x.offset < y.offset; });
    decideParking(k, bodies);
    return k;
  }

private:
  // ---------------------------------------------------------------------------------------------------
  // Parking (docs/ptb-transform.md, "Parking"). A thread-dependent return that a block barrier can follow
  // in the same task: the threads that return would go on to the worker's next task and meet its barriers.
  // The twin keeps such a kernel when every block barrier that can follow a thread-dependent return can be
  // rewritten into a task barrier (those in the kernel's text, and in device functions that can be cloned)
  // and no warp-level operation can follow one: the threads that return then park, meeting each barrier
  // the rest of the block still passes. Otherwise the kernel is refused, naming the return and the barrier.

  // What a call reaches, directly or below: the first block barrier, the first block barrier that cannot
  // become a task barrier (and why), the first warp-level operation. Chains name the functions from the
  // callee down to the one that holds it.
  struct Reach {
    struct What {
      bool found = false;
      std::string kind, why;
      std::vector<std::string> chain;
    };
    What barrier, bad, warp;
    static void take(What &into, const What &from) { if (!into.found && from.found) into = from; }
    void merge(const Reach &o) { take(barrier, o.barrier); take(bad, o.bad); take(warp, o.warp); }
  };

  static bool isLambdaCall(const CallHit &c) {
    auto *m = dyn_cast<CXXMethodDecl>(c.callee);
    return m && m->getParent()->isLambda();
  }

  // Why a call to a user function cannot be sent to a clone, or "".
  std::string redirectProblem(const CallHit &c) const {
    const FunctionDecl *pat = patternOf(c.callee);
    if (!pat) return "its definition cannot be cloned";
    if (isa<CXXMethodDecl>(pat) || c.viaOperatorOrImplicit) return "it is a member function, constructor or operator";
    if (c.nameLoc.isValid() && a.spelledInMacroBody(c.nameLoc)) return "the call is written inside a macro definition";
    if (c.nameLoc.isInvalid() || c.lparenLoc.isInvalid()) return "the call cannot be rewritten in place";
    if (a.sm.isInSystemHeader(pat->getLocation())) return "it is in a system header";
    return notRedirectable(c, pat);
  }

  // What `fn` reaches (its own body and below); `library`: it is library code, whose barriers cannot be
  // rewritten.
  Reach functionReach(const FunctionDecl *fn, bool library) {
    auto key = std::make_pair(fn, library);
    if (auto it = reachMemo.find(key); it != reachMemo.end()) return it->second;
    if (!reachStack.insert(key).second) return {};  // recursion: the other members decide
    const FunctionFacts &f = a.factsOf(fn);
    Reach r;
    for (const BarrierHit &h : f.barriers) {
      if (!h.blockWide) {
        Reach::take(r.warp, {true, h.kind, "", {}});
        continue;
      }
      Reach::take(r.barrier, {true, h.kind, "", {}});
      std::string why = library ? "it is in library code" : h.unrewritable;
      if (!why.empty()) Reach::take(r.bad, {true, h.kind, why, {}});
    }
    for (const WarpHit &w : f.warpOps) Reach::take(r.warp, {true, w.kind, "", {}});
    for (const CallHit &c : f.calls) r.merge(callReach(c, library));
    reachStack.erase(key);
    reachMemo[key] = r;
    return r;
  }

  // What a call reaches. A lambda's barriers are in the text of the function that defines it, rewritten
  // with it; a library function's cannot be rewritten; a user function's are rewritten in its clone,
  // which needs the call to be redirected.
  Reach callReach(const CallHit &c, bool library) {
    const bool lambda = isLambdaCall(c);
    const bool lib = library || (c.system && !lambda);
    Reach r = functionReach(c.callee, lib);
    const std::string name = lambda ? "lambda" : c.callee->getNameAsString();
    for (Reach::What *w : {&r.barrier, &r.bad, &r.warp})
      if (w->found) w->chain.insert(w->chain.begin(), name);
    if (lib && !library && r.bad.found)
      r.bad.why = "it is in library code (" + c.callee->getQualifiedNameAsString() + ")";
    if (r.barrier.found && !r.bad.found && !lib && !lambda) {
      std::string why = redirectProblem(c);
      if (!why.empty()) {
        r.bad = r.barrier;
        r.bad.why = "the call to " + c.callee->getQualifiedNameAsString() +
                    " cannot be sent to a clone with task barriers: " + why;
      }
    }
    return r;
  }

  // Whether a call of a parking kernel (or of a function cloned for it) goes to a clone for its barriers.
  bool barrierClone(const CallHit &c) {
    if (c.system || isLambdaCall(c)) return false;
    Reach r = callReach(c, false);
    return r.barrier.found && !r.bad.found;
  }

  void decideParking(Kernel &k, const std::vector<const FunctionDecl *> &bodies) {
    // What the kernel's text reaches, at the offset where it does (its own barriers, its calls).
    struct Item { unsigned offset; Location loc; std::string kind, why; std::vector<std::string> chain; enum { Barrier, Bad, Warp } what; };
    std::vector<Item> items;
    auto off = [&](SourceLocation l) { return sm.getFileOffset(sm.getFileLoc(l)); };
    for (const FunctionDecl *body : bodies) {
      const FunctionFacts &f = a.factsOf(body);
      for (const BarrierHit &h : f.barriers) {
        if (!h.blockWide) items.push_back({off(h.loc), a.locate(h.loc), h.kind, "", {}, Item::Warp});
        else if (!h.unrewritable.empty()) items.push_back({off(h.loc), a.locate(h.loc), h.kind, h.unrewritable, {}, Item::Bad});
        else items.push_back({off(h.loc), a.locate(h.loc), h.kind, "", {}, Item::Barrier});
      }
      for (const WarpHit &w : f.warpOps) items.push_back({off(w.loc), a.locate(w.loc), w.kind, "", {}, Item::Warp});
      for (const CallHit &c : f.calls) {
        Reach r = callReach(c, false);
        if (r.bad.found) items.push_back({off(c.callLoc), a.locate(c.callLoc), r.bad.kind, r.bad.why, r.bad.chain, Item::Bad});
        else if (r.barrier.found) items.push_back({off(c.callLoc), a.locate(c.callLoc), r.barrier.kind, "", r.barrier.chain, Item::Barrier});
        if (r.warp.found) items.push_back({off(c.callLoc), a.locate(c.callLoc), r.warp.kind, "", r.warp.chain, Item::Warp});
      }
    }
    // Bad items first at one offset, so that the first one found after a return is the worst.
    std::stable_sort(items.begin(), items.end(), [](const Item &x, const Item &y) {
      return x.offset != y.offset ? x.offset < y.offset : (x.what != Item::Barrier) > (y.what != Item::Barrier);
    });

    ParentMap bodyParents(const_cast<Stmt *>(k.decl->getBody()));
    struct Follows { const ReturnSite *ret; const Item *barrier = nullptr, *bad = nullptr; };
    std::vector<Follows> follows;
    bool needed = false;
    for (const ReturnSite &r : k.returns) {
      if (r.blockUniform) continue;
      unsigned at = sm.getFileOffset(sm.getFileLoc(r.stmt->getBeginLoc()));
      // The source ranges of loops around the return: anything in them can follow it.
      std::vector<std::pair<unsigned, unsigned>> loops;
      for (const Stmt *p = bodyParents.getParent(r.stmt); p; p = bodyParents.getParent(p)) {
        if (isa<LambdaExpr>(p)) break;
        if (isa<ForStmt, WhileStmt, DoStmt, CXXForRangeStmt>(p))
          loops.push_back({sm.getFileOffset(sm.getFileLoc(p->getBeginLoc())),
                           sm.getFileOffset(sm.getFileLoc(p->getEndLoc()))});
      }
      Follows fo{&r};
      for (const Item &i : items) {
        bool after = i.offset > at;
        for (auto &[lo, hi] : loops) if (i.offset >= lo && i.offset <= hi) after = true;
        if (!after) continue;
        if (i.what != Item::Warp && !fo.barrier) fo.barrier = &i;
        if (i.what != Item::Barrier && !fo.bad) fo.bad = &i;
      }
      needed = needed || fo.barrier;
      follows.push_back(fo);
    }
    if (!needed) return;  // no block barrier can follow a thread-dependent return: nothing to park

    auto describe = [](const ReturnSite &r, const Item &i) {
      return "the return at " + r.loc.str() + " depends on " + r.reason + " and can be followed by " + i.kind + " at " +
             i.loc.str() + (i.chain.empty() ? std::string() : " (in " + llvm::join(i.chain, " -> ") + ")");
    };
    bool refused = false;
    for (const Follows &fo : follows) {
      if (!fo.bad) continue;
      Blocker bl;
      bl.construct = "thread-dependent return before a barrier";
      bl.detail = describe(*fo.ret, *fo.bad) +
                  (fo.bad->what == Item::Warp
                       ? "; a thread that returns waits at the task's barriers until the block has finished the task, "
                         "and a warp-level operation waits for every thread of its mask that has not exited"
                       : "; a thread that returns must wait at every barrier the rest of the task passes, and this "
                         "one cannot be rewritten to let it: " + fo.bad->why);
      bl.loc = fo.ret->loc;
      bl.sloc = fo.ret->stmt->getBeginLoc();
      k.blockers.push_back(bl);
      refused = true;
    }
    if (refused) return;
    for (const Follows &fo : follows) {
      if (!fo.barrier) continue;
      Blocker p;
      p.construct = "thread-dependent return before a barrier";
      p.detail = describe(*fo.ret, *fo.barrier);
      p.loc = fo.ret->loc;
      p.sloc = fo.ret->stmt->getBeginLoc();
      k.parkedReturns.push_back(p);
    }

    // The twin parks: the clones, now with the functions whose barriers must become task barriers too,
    // and the edits of every block barrier in the kernel's text and in the clones' texts.
    k.virtualizedCalls.clear();
    k.virtualizedCallees.clear();
    std::map<const FunctionDecl *, std::set<const FunctionDecl *>> sources;
    collectClones(k, bodies, true, &sources);
    std::set<std::tuple<unsigned, unsigned, std::string>> seen;
    auto addEdits = [&](const FunctionDecl *fn) {
      for (const BarrierHit &h : a.factsOf(fn).barriers)
        if (h.blockWide && h.unrewritable.empty())
          for (const TaskBarrierEdit &e : h.edits)
            if (seen.insert({e.at.getRawEncoding(), e.length, e.text}).second) k.taskBarrierEdits.push_back(e);
    };
    for (const FunctionDecl *body : bodies) addEdits(body);
    for (const FunctionDecl *pat : k.virtualizedCallees) {
      addEdits(pat);
      for (const FunctionDecl *asCalled : sources[pat]) addEdits(asCalled);
    }
  }

  std::map<std::pair<const FunctionDecl *, bool>, Reach> reachMemo;
  std::set<std::pair<const FunctionDecl *, bool>> reachStack;

  void addBarrier(Kernel &k, const BarrierHit &b, const std::vector<std::string> &via, SourceLocation reach) {
    Barrier out;
    out.kind = b.kind;
    out.blockWide = b.blockWide;
    out.loc = a.locate(reach);
    out.via = via;
    out.offset = sm.getFileOffset(sm.getFileLoc(reach));
    k.barriers.push_back(out);
  }

  // Breadth-first over the call graph from the kernel's bodies: callee chains for builtins, barriers
  // reached through calls, blockers inside callees, and which callees must be cloned for the PTB twin.
  void walkCallees(Kernel &k, const std::vector<const FunctionDecl *> &bodies) {
    struct Node { const FunctionDecl *fn; std::vector<std::string> chain; SourceLocation reach; bool system; };
    std::deque<Node> queue;
    std::set<const FunctionDecl *> visited;
    // Reach: for barriers in callees, the location in the kernel body of the call that leads there.
    for (const FunctionDecl *body : bodies)
      for (const CallHit &c : a.factsOf(body).calls)
        queue.push_back({c.callee, {c.callee->getNameAsString()}, c.callLoc, c.system});
    std::set<std::string> calleeNames;
    std::set<std::pair<unsigned, std::string>> seenBarrierVia;
    while (!queue.empty()) {
      Node n = queue.front();
      queue.pop_front();
      const FunctionFacts &f = a.factsOf(n.fn);
      if (k.taskCoupling.empty() && !f.coupling.empty())
        k.taskCoupling = f.coupling + " (in " + n.fn->getQualifiedNameAsString() + ")";
      if (!n.system) calleeNames.insert(n.fn->getQualifiedNameAsString());
      for (int i = 0; i < 4 && !n.system; ++i)
        if (f.direct[i] || !f.macros[i].empty()) {
          auto &chains = k.uses[kBuiltinVars[i]].callChains;
          if (std::find(chains.begin(), chains.end(), n.chain) == chains.end() && chains.size() < 16)
            chains.push_back(n.chain);
        }
      for (auto &b : f.barriers) {
        unsigned off = sm.getFileOffset(sm.getFileLoc(n.reach));
        if (seenBarrierVia.insert({off, b.kind}).second) addBarrier(k, b, n.chain, n.reach);
      }
      // Inside system headers only barriers count: a library's generic dispatch (cooperative_groups'
      // thread_group::sync reaching grid sync for grid groups) is not what this kernel does; the
      // kernel's own uses of grid groups, clusters and the like are classified where it calls them.
      for (auto &b : n.system ? std::vector<Blocker>() : f.blockers) {
        Blocker c = b;
        c.detail += " (in " + n.fn->getQualifiedNameAsString() + ", reached from the kernel at " + a.locate(n.reach).str() + ")";
        bool dup = false;
        for (auto &e : k.blockers) if (e.sloc == c.sloc) dup = true;
        if (!dup) k.blockers.push_back(c);
      }
      if (!visited.insert(n.fn).second) continue;
      if (n.chain.size() > 32) continue;
      for (const CallHit &c : f.calls) {
        auto chain = n.chain;
        chain.push_back(c.callee->getNameAsString());
        queue.push_back({c.callee, chain, n.reach, n.system || c.system});
      }
    }
    k.callees.assign(calleeNames.begin(), calleeNames.end());

    collectClones(k, bodies, false);
  }


  // The device functions to clone for the twin and the calls to redirect to the clones: those that read
  // blockIdx/gridDim (directly or below) and, for a parking kernel, those whose block barriers (directly
  // or below) must become task barriers. `sources`: each cloned pattern and the functions as called that
  // stand for it (instantiations), whose facts hold the barriers of dependent code.
  void collectClones(Kernel &k, const std::vector<const FunctionDecl *> &bodies, bool parking,
                     std::map<const FunctionDecl *, std::set<const FunctionDecl *>> *sources = nullptr) {
    std::map<const FunctionDecl *, bool> needs;  // reads blockIdx/gridDim, directly or below
    // Which functions (as called) read blockIdx/gridDim, directly or transitively: fixed point.
    std::function<bool(const FunctionDecl *, std::set<const FunctionDecl *> &)> reads =
        [&](const FunctionDecl *fn, std::set<const FunctionDecl *> &stack) -> bool {
      auto it = needs.find(fn);
      if (it != needs.end()) return it->second;
      if (!stack.insert(fn).second) return false;  // recursion: decided by the other members
      const FunctionFacts &f = a.factsOf(fn);
      bool r = !f.indexLocs.empty();
      for (const CallHit &c : f.calls) if (!c.system) r = reads(c.callee, stack) || r;
      stack.erase(fn);
      needs[fn] = r;
      return r;
    };
    // Collect the calls to redirect, from the kernel bodies and from every function being cloned.
    std::set<const FunctionDecl *> clonedPatterns, gathered;
    std::vector<const FunctionDecl *> order;
    std::set<unsigned> seenCalls;
    // The calls each body read sends to clones (by location), per pattern and instance: a pattern's text
    // serves all its instantiations, so a call sent to a clone in one must be sent to one in all.
    std::map<const FunctionDecl *, std::map<const FunctionDecl *, std::set<unsigned>>> redirectedIn;
    auto keyOf = [&](const CallHit &c) { return sm.getFileOffset(sm.getFileLoc(c.nameLoc)); };
    auto block = [&](const std::string &detail, SourceLocation at) {
      Blocker b{"blockIdx/gridDim read through a call that cannot be redirected", detail, a.locate(at), at};
      for (auto &e : k.blockers) if (e.sloc == b.sloc) return;
      k.blockers.push_back(b);
    };
    std::function<void(const FunctionDecl *callerAsCalled, const FunctionDecl *callerPattern)> gather;
    // Sends the call `c` (in `caller`, an instance of `callerPattern`) to the clone of its callee `pat`.
    auto redirect = [&](const CallHit &c, const FunctionDecl *pat, const FunctionDecl *caller,
                        const FunctionDecl *callerPattern) {
      unsigned off = keyOf(c);
      redirectedIn[callerPattern][caller].insert(off);
      if (seenCalls.insert(off).second) {
        k.virtualizedCalls.push_back({pat, sm.getFileLoc(c.nameLoc), c.lparenLoc.isValid() ? sm.getFileLoc(c.lparenLoc) : SourceLocation(),
                                      c.hasArgs, callerPattern, c.edits});
      } else {
        for (const VirtualizedCall &v : k.virtualizedCalls)
          if (sm.getFileOffset(v.nameLoc) == off && !sameEdits(v.edits, c.edits))
            block("the call of " + pat->getQualifiedNameAsString() + " is " + v.callee->getQualifiedNameAsString() +
                      " in another instantiation, whose clone is called differently; the clone's text serves both",
                  c.callLoc);
      }
      // An explicit specialization's clone specializes the primary template's clone: that one is
      // cloned too (first), whether or not the primary reads the indices.
      if (pat->getTemplateSpecializationKind() == TSK_ExplicitSpecialization && pat->getPrimaryTemplate())
        if (const FunctionDecl *primary = patternOf(pat->getPrimaryTemplate()->getTemplatedDecl());
            primary && clonedPatterns.insert(primary).second) {
          if (gathered.insert(primary).second) gather(primary, primary);
          order.push_back(primary);
        }
      bool fresh = clonedPatterns.insert(pat).second;
      if (gathered.insert(c.callee).second) gather(c.callee, pat);
      if (fresh && c.callee != pat && gathered.insert(pat).second) gather(pat, pat);
      if (fresh) order.push_back(pat);  // post-order: callees before callers
    };
    gather = [&](const FunctionDecl *caller, const FunctionDecl *callerPattern) {
      redirectedIn[callerPattern][caller];
      for (const CallHit &c : a.factsOf(caller).calls) {
        if (c.system) continue;
        std::set<const FunctionDecl *> stack;
        // A call is sent to a clone when its callee reads blockIdx/gridDim or, in a parking kernel, when
        // the callee's barriers must become task barriers (barrierClone() checked that it can be sent).
        bool read = reads(c.callee, stack);
        if (!read && !(parking && barrierClone(c))) continue;
        const FunctionDecl *pat = patternOf(c.callee);
        if (!pat) continue;
        if (sources) (*sources)[pat].insert(c.callee);
        if (std::string why = notRedirectable(c, pat); read && !why.empty()) {
          block(pat->getQualifiedNameAsString() + " reads blockIdx/gridDim, but " + why, c.callLoc);
          continue;
        }
        redirect(c, pat, caller, callerPattern);
      }
    };
    for (const FunctionDecl *body : bodies)
      if (gathered.insert(body).second) gather(body, k.decl);

    // A call sent to a clone in one instantiation of a pattern goes to a clone in the others too (the
    // clone of a callee that reads neither index only passes them on); where it cannot (a built-in
    // operator there, or a call that cannot be redirected) the kernel is refused.
    for (bool changed = true; changed;) {
      changed = false;
      std::vector<std::tuple<const CallHit *, const FunctionDecl *, const FunctionDecl *, const FunctionDecl *>> more;
      for (auto &[pattern, instances] : redirectedIn) {
        std::set<unsigned> all;
        for (auto &[inst, keys] : instances) all.insert(keys.begin(), keys.end());
        for (auto &[inst, keys] : instances) {
          if (inst == pattern) continue;
          for (unsigned key : all) {
            if (keys.count(key)) continue;
            const CallHit *hit = nullptr;
            for (const CallHit &c : a.factsOf(inst).calls)
              if (!c.system && c.nameLoc.isValid() && keyOf(c) == key) hit = &c;
            const FunctionDecl *pat = hit ? patternOf(hit->callee) : nullptr;
            const VirtualizedCall *sent = nullptr;
            for (const VirtualizedCall &v : k.virtualizedCalls)
              if (sm.getFileOffset(v.nameLoc) == key) sent = &v;
            if (pat && sent && notRedirectable(*hit, pat).empty() && sameEdits(sent->edits, hit->edits)) {
              more.emplace_back(hit, pat, inst, pattern);
              continue;
            }
            std::string what;
            llvm::raw_string_ostream os(what);
            inst->getNameForDiagnostic(os, a.ctx.getPrintingPolicy(), /*Qualified=*/true);
            SourceLocation at = sent ? sent->nameLoc : pattern->getLocation();
            block("the call at " + a.locate(at).str() + " is sent to the PTB clone of " +
                      (sent ? sent->callee->getQualifiedNameAsString() : std::string("a function")) +
                      " in one instantiation of " + pattern->getQualifiedNameAsString() + " but cannot be in " + os.str() +
                      (hit ? " (" + (pat ? notRedirectable(*hit, pat) : std::string("its callee has no definition")) + ")"
                           : " (there it is a built-in operation or another kind of call)") +
                      "; the clone's text serves every instantiation",
                  at);
            keys.insert(key);  // reported once
          }
        }
      }
      for (auto &[hit, pat, inst, pattern] : more) {
        if (redirectedIn[pattern][inst].count(keyOf(*hit))) continue;
        redirect(*hit, pat, inst, pattern);
        changed = true;
      }
    }
    k.virtualizedCallees = order;
  }

  static bool sameEdits(const std::vector<CallEdit> &x, const std::vector<CallEdit> &y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (x[i].kind != y[i].kind || x[i].loc != y[i].loc || x[i].length != y[i].length || x[i].text != y[i].text)
        return false;
    return true;
  }

  // Why a call to `pat` (which reads blockIdx/gridDim) cannot be sent to a PTB clone, or "".
  std::string notRedirectable(const CallHit &c, const FunctionDecl *pat) const {
    if (c.viaOperatorOrImplicit) return c.why.empty() ? "the call cannot be rewritten in place" : c.why;
    if (c.edits.empty())
      return c.nameLoc.isValid() && a.spelledInMacroBody(c.nameLoc) ? "the call is written inside a macro definition"
                                                                   : "the call cannot be rewritten in place";
    if (sm.isInSystemHeader(pat->getLocation())) return "the call cannot be rewritten in place";
    auto notTransformed = [&](SourceLocation l) {
      return "a file that is not transformed (" + a.locate(l).file + "; --header-filter selects the files that are)";
    };
    if (pat->isImplicit() || pat->isDefaulted()) return "it is implicitly defined or defaulted: it has no text to clone";
    auto *m = dyn_cast<CXXMethodDecl>(pat);
    if (!m) {
      // A friend defined in a class: its clone must be a friend in the class too.
      if (pat->getFriendObjectKind() != Decl::FOK_None && !a.selected.containsLoc(pat->getLocation()))
        return "it is a friend defined in " + notTransformed(pat->getLocation());
      return "";
    }
    if (isa<CXXDestructorDecl>(m)) return "it is a destructor, which cannot be cloned";
    if (m->isVirtual()) return "it is a virtual function";
    if (m->getTemplateSpecializationKind() == TSK_ExplicitSpecialization)
      return "it is an explicit specialization of a member";
    const CXXRecordDecl *rd = m->getParent();
    if (rd->isLocalClass()) return "it is a member of a class defined inside a function";
    // Its clone is added to the class: the class, the definition and the declaration in the class must be
    // text that is written out.
    for (SourceLocation l : {rd->getLocation(), m->getFirstDecl()->getLocation(), pat->getLocation()}) {
      if (l.isMacroID()) return "it or its class is written inside a macro";
      if (!a.selected.containsLoc(l)) return "it is a member of a class in " + notTransformed(l);
    }
    if (pat->getBody()->getBeginLoc().isMacroID() || pat->getBody()->getEndLoc().isMacroID())
      return "it or its class is written inside a macro";
    return "";
  }

  Analyzer &a;
  SourceManager &sm;
  const LangOptions &lo;
};

// Launch sites anywhere in the main file.
class LaunchFinder : public RecursiveASTVisitor<LaunchFinder> {
public:
  LaunchFinder(Analyzer &a) : a(a) {}
  bool shouldVisitTemplateInstantiations() const { return false; }

  // Only the selected files' declarations hold their launches: other headers (the CUDA runtime, the C++
  // library) are not walked, which is most of the translation unit.
  bool TraverseDecl(Decl *d) {
    if (d && !isa<TranslationUnitDecl>(d) && !a.selected.containsLoc(d->getLocation()))
      return true;
    auto *fd = dyn_cast_or_null<FunctionDecl>(d);  // functions, member functions, constructors, ...
    const FunctionDecl *saved = current;
    if (fd) current = fd;
    bool r = RecursiveASTVisitor::TraverseDecl(d);
    current = saved;
    return r;
  }

  bool VisitCUDAKernelCallExpr(CUDAKernelCallExpr *e) {
    const FunctionDecl *callee = e->getDirectCallee();
    const Expr *calleeExpr = e->getCallee()->IgnoreParenImpCasts();
    LaunchSite s;
    s.form = LaunchSite::Form::TripleChevron;
    s.formName = "<<<>>>";
    fill(s, e, calleeExpr);
    record(s, callee ? callee : calleeFromExpr(calleeExpr));
    return true;
  }

  bool VisitCallExpr(CallExpr *e) {
    if (isa<CUDAKernelCallExpr>(e)) return true;
    const FunctionDecl *fn = e->getDirectCallee();
    if (!fn || !fn->getIdentifier()) return true;
    StringRef n = fn->getName();
    if (n != "cudaLaunchKernel" && n != "cudaLaunchCooperativeKernel" && n != "cudaLaunchKernelExC" &&
        n != "cudaLaunchKernelEx")
      return true;
    if (!a.selected.containsLoc(e->getBeginLoc())) return true;
    const Expr *kernelArg = nullptr;
    if (n == "cudaLaunchKernelEx" || n == "cudaLaunchKernelExC") {
      if (e->getNumArgs() >= 2) kernelArg = e->getArg(1);
    } else if (e->getNumArgs() >= 1) {
      kernelArg = e->getArg(0);
    }
    if (!kernelArg) return true;
    const Expr *k = kernelArg->IgnoreParenCasts();
    if (auto *uo = dyn_cast<UnaryOperator>(k); uo && uo->getOpcode() == UO_AddrOf) k = uo->getSubExpr()->IgnoreParenCasts();
    LaunchSite s;
    s.form = n == "cudaLaunchKernel" ? LaunchSite::Form::CudaLaunchKernel : LaunchSite::Form::Other;
    s.formName = n.str();
    fill(s, e, k);
    const FunctionDecl *callee = nullptr;
    if (auto *dre = dyn_cast<DeclRefExpr>(k)) callee = dyn_cast<FunctionDecl>(dre->getDecl());
    record(s, callee);
    return true;
  }

  std::map<const FunctionDecl *, std::vector<LaunchSite>> byKernel;  // keyed by the kernel's pattern definition
  std::vector<LaunchSite> unknown;

private:
  const FunctionDecl *calleeFromExpr(const Expr *e) {
    if (auto *ule = dyn_cast<UnresolvedLookupExpr>(e))
      for (NamedDecl *d : ule->decls()) {
        if (auto *ft = dyn_cast<FunctionTemplateDecl>(d->getUnderlyingDecl())) return ft->getTemplatedDecl();
        if (auto *f = dyn_cast<FunctionDecl>(d->getUnderlyingDecl())) return f;
      }
    return nullptr;
  }

  void fill(LaunchSite &s, const Expr *call, const Expr *calleeExpr) {
    SourceLocation b = call->getBeginLoc();
    s.loc = a.locate(b);
    s.expr = call;
    s.inMacro = b.isMacroID();
    if (s.inMacro) {
      s.inMacroBody = a.spelledInMacroBody(b);
      s.macro = macroOf(b, s.inMacroBody);
      // A launch in a macro argument is located where it is written; one in a definition, at the use.
      if (!s.inMacroBody) s.loc = locateSpelling(b);
    }
    if (auto *dre = dyn_cast<DeclRefExpr>(calleeExpr); dre && dre->hasExplicitTemplateArgs())
      s.templateArgs = Lexer::getSourceText(CharSourceRange::getCharRange(
                                                a.sm.getFileLoc(dre->getLAngleLoc()).getLocWithOffset(1),
                                                a.sm.getFileLoc(dre->getRAngleLoc())),
                                            a.sm, a.ctx.getLangOpts()).str();
    if (auto *ule = dyn_cast<UnresolvedLookupExpr>(calleeExpr); ule && ule->hasExplicitTemplateArgs())
      s.templateArgs = Lexer::getSourceText(CharSourceRange::getCharRange(
                                                a.sm.getFileLoc(ule->getLAngleLoc()).getLocWithOffset(1),
                                                a.sm.getFileLoc(ule->getRAngleLoc())),
                                            a.sm, a.ctx.getLangOpts()).str();
    if (current) {
      s.enclosingFunction = current->getQualifiedNameAsString();
      s.fromDevice = current->hasAttr<CUDAGlobalAttr>() ||
                     (current->hasAttr<CUDADeviceAttr>() && !current->hasAttr<CUDAHostAttr>());
    }
  }

  Location locateSpelling(SourceLocation loc) {
    SourceLocation sp = a.sm.getSpellingLoc(loc);
    Location l;
    PresumedLoc p = a.sm.getPresumedLoc(sp);
    if (p.isInvalid()) return a.locate(loc);
    l.file = p.getFilename();
    l.line = p.getLine();
    l.column = p.getColumn();
    return l;
  }

  // The macro a launch comes out of: for a launch in a macro's argument, the macro invoked in the source
  // text; for one written in a macro's definition, that macro.
  std::string macroOf(SourceLocation loc, bool inDefinition) {
    if (inDefinition) {
      SourceLocation l = loc;
      while (l.isMacroID() && a.sm.isMacroArgExpansion(l)) l = a.sm.getImmediateSpellingLoc(l);
      return Lexer::getImmediateMacroName(l, a.sm, a.ctx.getLangOpts()).str();
    }
    SourceLocation start = a.sm.getExpansionRange(loc).getBegin();
    return Lexer::getSourceText(CharSourceRange::getTokenRange(start, start), a.sm, a.ctx.getLangOpts()).str();
  }

  void record(LaunchSite &s, const FunctionDecl *callee) {
    if (!a.selected.containsLoc(s.expr->getBeginLoc())) return;
    const FunctionDecl *pat = patternOf(callee);
    if (pat && pat->hasAttr<CUDAGlobalAttr>()) {
      s.kernel = pat;
      byKernel[pat].push_back(s);
    } else {
      unknown.push_back(s);
    }
  }

  Analyzer &a;
  const FunctionDecl *current = nullptr;
};

// Kernels defined in the selected files, in translation-unit order.
class KernelFinder : public RecursiveASTVisitor<KernelFinder> {
public:
  KernelFinder(const SelectedFiles &selected) : selected(selected) {}
  bool shouldVisitTemplateInstantiations() const { return false; }
  bool TraverseDecl(Decl *d) {
    if (d && !isa<TranslationUnitDecl>(d) && !selected.containsLoc(d->getLocation())) return true;
    return RecursiveASTVisitor::TraverseDecl(d);
  }
  bool VisitFunctionDecl(FunctionDecl *fd) {
    if (!fd->hasAttr<CUDAGlobalAttr>() || !fd->doesThisDeclarationHaveABody()) return true;
    if (fd->isTemplateInstantiation()) return true;
    if (!selected.containsLoc(fd->getLocation())) return true;
    kernels.push_back(fd);
    return true;
  }
  const SelectedFiles &selected;
  std::vector<const FunctionDecl *> kernels;
};

} // namespace

Inventory analyzeTranslationUnit(ASTContext &ctx, const FileSelection &selection) {
  Inventory inv;
  SourceManager &sm = ctx.getSourceManager();
  if (auto fe = sm.getFileEntryRefForID(sm.getMainFileID())) inv.mainFile = fe->getName().str();
  Analyzer a(ctx, selection);
  if (selection.selectsIncludedFiles()) {
    std::set<std::string> seen;
    for (unsigned i = 0, n = sm.local_sloc_entry_size(); i < n; ++i) {
      const SrcMgr::SLocEntry &e = sm.getLocalSLocEntry(i);
      if (!e.isFile()) continue;
      FileID fid = sm.getFileID(SourceLocation::getFromRawEncoding(e.getOffset()));
      if (fid == sm.getMainFileID() || !a.selected.contains(fid)) continue;
      if (auto fe = sm.getFileEntryRefForID(fid); fe && seen.insert(fe->getName().str()).second)
        inv.includedFiles.push_back(fe->getName().str());
    }
  }
  KernelFinder kf(a.selected);
  kf.TraverseDecl(ctx.getTranslationUnitDecl());
  LaunchFinder lf(a);
  lf.TraverseDecl(ctx.getTranslationUnitDecl());
  KernelBuilder kb(a);
  std::set<const FunctionDecl *> known;
  for (const FunctionDecl *fd : kf.kernels) {
    Kernel k = kb.build(fd);
    auto it = lf.byKernel.find(fd);
    if (it != lf.byKernel.end()) k.launches = it->second;
    known.insert(fd);
    inv.kernels.push_back(std::move(k));
  }
  for (auto &[fd, sites] : lf.byKernel)
    if (!known.count(fd)) inv.otherLaunches.insert(inv.otherLaunches.end(), sites.begin(), sites.end());
  inv.otherLaunches.insert(inv.otherLaunches.end(), lf.unknown.begin(), lf.unknown.end());
  return inv;
}

} // namespace ptb

#include "KernelsAndLaunches.h"

#include "clang/AST/ASTLambda.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/ASTMatchers/ASTMatchers.h"

#include <algorithm>

namespace ptb::analysis {

namespace {

using namespace clang::ast_matchers;

// Receives the matches in translation-unit order and records them.
class Collector : public MatchFinder::MatchCallback {
public:
  Collector(Analyzer &a, KernelsAndLaunches &out) : a(a), out(out) {}

  void run(const MatchFinder::MatchResult &r) override {
    if (auto *fd = r.Nodes.getNodeAs<FunctionDecl>("kernel")) {
      if (a.selected.containsLoc(fd->getLocation())) out.kernels.push_back(fd);
    } else if (auto *launch = r.Nodes.getNodeAs<CUDAKernelCallExpr>("chevron")) {
      chevron(launch);
    } else if (auto *call = r.Nodes.getNodeAs<CallExpr>("api")) {
      api(call);
    }
  }

private:
  void chevron(const CUDAKernelCallExpr *e) {
    const FunctionDecl *callee = e->getDirectCallee();
    const Expr *calleeExpr = e->getCallee()->IgnoreParenImpCasts();
    LaunchSite s;
    s.form = LaunchSite::Form::TripleChevron;
    s.formName = "<<<>>>";
    fill(s, e, calleeExpr);
    record(s, callee ? callee : calleeFromExpr(calleeExpr));
  }

  // cudaLaunchKernel(kernel, ...), cudaLaunchKernelEx(&config, kernel, ...): the kernel is named by its
  // address.
  void api(const CallExpr *e) {
    if (!a.selected.containsLoc(e->getBeginLoc())) return;
    StringRef n = e->getDirectCallee()->getName();
    const Expr *kernelArg = nullptr;
    if (n == "cudaLaunchKernelEx" || n == "cudaLaunchKernelExC") {
      if (e->getNumArgs() >= 2) kernelArg = e->getArg(1);
    } else if (e->getNumArgs() >= 1) {
      kernelArg = e->getArg(0);
    }
    if (!kernelArg) return;
    const Expr *k = kernelArg->IgnoreParenCasts();
    if (auto *uo = dyn_cast<UnaryOperator>(k); uo && uo->getOpcode() == UO_AddrOf)
      k = uo->getSubExpr()->IgnoreParenCasts();
    LaunchSite s;
    s.form = n == "cudaLaunchKernel" ? LaunchSite::Form::CudaLaunchKernel : LaunchSite::Form::Other;
    s.formName = n.str();
    fill(s, e, k);
    const FunctionDecl *callee = nullptr;
    if (auto *dre = dyn_cast<DeclRefExpr>(k)) callee = dyn_cast<FunctionDecl>(dre->getDecl());
    record(s, callee);
  }

  // The function whose text holds `e`: the innermost function declaration around it, looking through
  // lambdas (a launch in a lambda belongs to the function that writes the lambda).
  const FunctionDecl *enclosingFunction(const Expr *e) {
    DynTypedNodeList parents = a.ctx.getParents(*e);
    for (int depth = 0; !parents.empty() && depth < 4096; ++depth) {
      const DynTypedNode &p = parents[0];
      if (auto *fd = p.get<FunctionDecl>(); fd && !isLambdaCallOperator(fd)) return fd;
      parents = a.ctx.getParents(p);
    }
    return nullptr;
  }

  const FunctionDecl *calleeFromExpr(const Expr *e) {
    if (auto *ule = dyn_cast<UnresolvedLookupExpr>(e))
      for (NamedDecl *d : ule->decls()) {
        if (auto *ft = dyn_cast<FunctionTemplateDecl>(d->getUnderlyingDecl())) return ft->getTemplatedDecl();
        if (auto *f = dyn_cast<FunctionDecl>(d->getUnderlyingDecl())) return f;
      }
    return nullptr;
  }

  void fill(LaunchSite &s, const Expr *call, const Expr *calleeExpr) {
    const FunctionDecl *current = enclosingFunction(call);
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
      s.templateArgs =
          Lexer::getSourceText(CharSourceRange::getCharRange(a.sm.getFileLoc(dre->getLAngleLoc()).getLocWithOffset(1),
                                                             a.sm.getFileLoc(dre->getRAngleLoc())),
                               a.sm, a.ctx.getLangOpts())
              .str();
    if (auto *ule = dyn_cast<UnresolvedLookupExpr>(calleeExpr); ule && ule->hasExplicitTemplateArgs())
      s.templateArgs =
          Lexer::getSourceText(CharSourceRange::getCharRange(a.sm.getFileLoc(ule->getLAngleLoc()).getLocWithOffset(1),
                                                             a.sm.getFileLoc(ule->getRAngleLoc())),
                               a.sm, a.ctx.getLangOpts())
              .str();
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
      out.launchesByKernel[pat].push_back(s);
    } else {
      out.otherLaunches.push_back(s);
    }
  }

  Analyzer &a;
  KernelsAndLaunches &out;
};

// Narrows the translation unit's traversal scope to the top-level declarations of the selected files for
// its lifetime.
class SelectedScope {
public:
  explicit SelectedScope(Analyzer &a) : ctx(a.ctx), saved(ctx.getTraversalScope()) {
    std::vector<Decl *> scope;
    for (Decl *d : ctx.getTranslationUnitDecl()->decls())
      if (a.selected.containsLoc(d->getLocation())) scope.push_back(d);
    ctx.setTraversalScope(scope);
  }
  ~SelectedScope() { ctx.setTraversalScope(saved); }

private:
  ASTContext &ctx;
  std::vector<Decl *> saved;
};

} // namespace

KernelsAndLaunches findKernelsAndLaunches(Analyzer &a) {
  KernelsAndLaunches out;
  Collector collector(a, out);
  MatchFinder finder;
  // Templates are searched as written: their instantiations repeat the same text.
  finder.addMatcher(
      functionDecl(hasAttr(attr::CUDAGlobal), isDefinition(), unless(isTemplateInstantiation())).bind("kernel"),
      &collector);
  finder.addMatcher(cudaKernelCallExpr(unless(isInTemplateInstantiation())).bind("chevron"), &collector);
  finder.addMatcher(callExpr(unless(cudaKernelCallExpr()), unless(isInTemplateInstantiation()),
                             callee(functionDecl(hasAnyName("cudaLaunchKernel", "cudaLaunchCooperativeKernel",
                                                            "cudaLaunchKernelExC", "cudaLaunchKernelEx"))))
                        .bind("api"),
                    &collector);
  {
    SelectedScope scope(a);
    finder.matchAST(a.ctx);
  }
  // The matcher meets a statement's children before their descendants: put the launches back in the
  // order they are written (a macro's expansion: the order of the text it expands to).
  auto written = [&](const LaunchSite &x, const LaunchSite &y) {
    SourceLocation xb = x.expr->getBeginLoc(), yb = y.expr->getBeginLoc();
    SourceLocation xe = a.sm.getExpansionLoc(xb), ye = a.sm.getExpansionLoc(yb);
    if (xe != ye) return a.sm.isBeforeInTranslationUnit(xe, ye);
    return xb != yb && a.sm.isBeforeInTranslationUnit(a.sm.getSpellingLoc(xb), a.sm.getSpellingLoc(yb));
  };
  for (auto &[kernel, sites] : out.launchesByKernel) std::stable_sort(sites.begin(), sites.end(), written);
  std::stable_sort(out.otherLaunches.begin(), out.otherLaunches.end(), written);
  return out;
}

} // namespace ptb::analysis

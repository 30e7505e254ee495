#include "TwinsApart.h"

#include "clang/AST/Attr.h"
#include "clang/AST/DeclCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/ASTMatchers/ASTMatchers.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace clang;
using namespace clang::ast_matchers;

namespace ptb {

std::string externDeclaration(const VarDecl *v, const ASTContext &ctx) {
  QualType t = v->getType();
  if (const TagDecl *tag = t->getAsTagDecl(); tag && !tag->getIdentifier() && !tag->getTypedefNameForAnonDecl())
    return "";
  if (t->getContainedAutoType() || t->getContainedDeducedType()) return "";
  if (const auto *rd = t->getAsCXXRecordDecl(); rd && rd->isLambda()) return "";
  PrintingPolicy policy = ctx.getPrintingPolicy();
  policy.SuppressTagKeyword = false;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "extern ";
  if (v->getTLSKind() != VarDecl::TLS_None) os << "thread_local ";
  t.print(os, policy, v->getName());
  os << ";";
  return text;
}

namespace {

// A variable in device memory whose copy in a second module could differ from the program's: not a
// constant (clang makes a namespace-scope constexpr variable __constant__ implicitly; every module's copy
// holds its value).
bool deviceStorage(const VarDecl *v) {
  auto written = [](const Attr *a) { return a && !a->isImplicit(); };
  if (!written(v->getAttr<CUDADeviceAttr>()) && !written(v->getAttr<CUDAConstantAttr>()) && !v->hasAttr<HIPManagedAttr>())
    return false;
  return !(v->isConstexpr() || (v->getType().isConstQualified() && v->hasConstantInitialization()));
}

bool atFileScope(const Decl *d) { return d->getLexicalDeclContext()->getRedeclContext()->isFileContext(); }

class Planner : public MatchFinder::MatchCallback {
public:
  Planner(ASTContext &ctx, TwinsApartPlan &plan) : ctx(ctx), sm(ctx.getSourceManager()), plan(plan) {}

  void run(const MatchFinder::MatchResult &r) override {
    if (!plan.keptBecause.empty()) return;
    if (const auto *fd = r.Nodes.getNodeAs<FunctionDecl>("function")) function(fd);
    if (const auto *vd = r.Nodes.getNodeAs<VarDecl>("variable")) variable(vd);
  }

  void finish() {
    if (!plan.keptBecause.empty()) {
      plan.guards.clear();
      plan.madeExtern.clear();
      return;
    }
    for (auto &[offset, group] : externGroups) plan.madeExtern.push_back(group);
  }

private:
  void keep(const Decl *d, const std::string &why) {
    if (!plan.keptBecause.empty()) return;
    plan.keptBecause = why;
    plan.keptAt = d->getLocation();
  }

  bool inMain(const Decl *d) const { return sm.isInMainFile(sm.getExpansionLoc(d->getLocation())); }

  std::string where(const Decl *d) const {
    return llvm::sys::path::filename(sm.getFilename(sm.getExpansionLoc(d->getLocation()))).str();
  }

  // A definition the twins part must not repeat: in the main file it is edited, elsewhere nothing can be.
  bool editable(const Decl *d, const std::string &what) {
    if (!inMain(d)) {
      keep(d, what + " is defined in '" + where(d) + "', which the twins' compile includes too");
      return false;
    }
    // Specifiers may be macros (__global__ is one); the name and the end must be written in the file.
    bool macro = d->getLocation().isMacroID() || d->getEndLoc().isMacroID();
    if (const auto *fd = dyn_cast<FunctionDecl>(d); fd && fd->getBody())
      macro = macro || fd->getBody()->getBeginLoc().isMacroID() || fd->getBody()->getEndLoc().isMacroID();
    if (macro) {
      keep(d, what + " is written by a macro, which the twins' compile cannot leave out");
      return false;
    }
    return true;
  }

  void function(const FunctionDecl *fd) {
    if (fd->isImplicit() || fd->isTemplated() || fd->isTemplateInstantiation() || !atFileScope(fd)) return;
    if (fd->isInlined() || !fd->isExternallyVisible()) return;  // weak or internal: a second copy is harmless
    if (fd->isDeleted() || (!fd->getBody() && !isa<CXXMethodDecl>(fd))) return;  // no symbol
    if (fd->hasAttr<CUDAGlobalAttr>()) {
      if (fd->getTemplateSpecializationKind() != TSK_Undeclared) return;  // template kernels: a stub per unit
      if (editable(fd, "kernel '" + fd->getQualifiedNameAsString() + "'")) plan.guards.push_back({fd, true, false});
      return;
    }
    // nvcc's host pass defines a host symbol for a __device__ function too.
    const bool device = fd->hasAttr<CUDADeviceAttr>();
    const std::string what = "function '" + fd->getQualifiedNameAsString() + "'";
    if (!editable(fd, what)) return;
    plan.guards.push_back({fd, !isa<CXXMethodDecl>(fd), device});
  }

  void variable(const VarDecl *v) {
    if (v->isImplicit() || !v->hasGlobalStorage() || v->isTemplated() ||
        v->getTemplateSpecializationKind() != TSK_Undeclared || v->isThisDeclarationADefinition() != VarDecl::Definition)
      return;
    const std::string what = "variable '" + v->getQualifiedNameAsString() + "'";
    if (deviceStorage(v)) {
      keep(v, what + " lives in device memory: a module of the twins' own would have its own copy");
      return;
    }
    if (v->hasAttr<CUDASharedAttr>() || !atFileScope(v) || v->isLocalVarDeclOrParm()) return;
    if (v->isStaticDataMember()) {
      if (v->isInline() || v->isConstexpr()) return;
      if (editable(v, "static member '" + v->getQualifiedNameAsString() + "'")) plan.guards.push_back({v, false, false});
      return;
    }
    if (v->isInline()) return;  // one object per program, constructed once
    if (v->isExternallyVisible() && !v->isConstexpr()) {
      if (!editable(v, what)) return;
      if (externDeclaration(v, ctx).empty()) {
        keep(v, what + " has a type that cannot be written in an extern declaration");
        return;
      }
      externGroups[sm.getFileOffset(sm.getExpansionLoc(v->getBeginLoc()))].push_back(v);
      return;
    }
    if ((v->hasInit() && !v->hasConstantInitialization()) || v->needsDestruction(ctx))
      keep(v, what + " is constructed when the program starts: the twins' compile would construct a second copy");
  }

  ASTContext &ctx;
  SourceManager &sm;
  TwinsApartPlan &plan;
  std::map<unsigned, std::vector<const VarDecl *>> externGroups;  // by the declaration's first offset
};

} // namespace

TwinsApartPlan planTwinsApart(ASTContext &ctx) {
  TwinsApartPlan plan;
  Planner planner(ctx, plan);
  MatchFinder finder;
  finder.addMatcher(functionDecl(isDefinition(), unless(isExpansionInSystemHeader())).bind("function"), &planner);
  finder.addMatcher(varDecl(isDefinition(), unless(isExpansionInSystemHeader())).bind("variable"), &planner);
  finder.matchAST(ctx);
  planner.finish();
  return plan;
}

} // namespace ptb

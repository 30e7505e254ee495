#include "TwinsApart.h"

#include "clang/AST/Attr.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/QualTypeNames.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/ASTMatchers/ASTMatchers.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <cstdint>
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

// A template argument as the end of the twins part can write it (every declaration of the translation
// unit visible, at global scope), or "" when it cannot be written.
std::string argumentText(const TemplateArgument &a, const ASTContext &ctx) {
  PrintingPolicy policy = ctx.getPrintingPolicy();
  policy.SuppressTagKeyword = true;
  policy.FullyQualifiedName = true;
  switch (a.getKind()) {
  case TemplateArgument::Type:
    return TypeName::getFullyQualifiedName(a.getAsType(), ctx, policy, /*WithGlobalNsPrefix=*/true);
  case TemplateArgument::Integral: {
    const llvm::APSInt &v = a.getAsIntegral();
    QualType t = a.getIntegralType();
    if (t->isBooleanType()) return v.getBoolValue() ? "true" : "false";
    if (const auto *b = t->getAs<BuiltinType>(); b && b->getKind() == BuiltinType::Int)
      return llvm::toString(v, 10, true); // the common case, written plainly
    std::string type = TypeName::getFullyQualifiedName(t, ctx, policy, true);
    if (v.isUnsigned() || v.isNonNegative())
      return v.getActiveBits() > 64 ? "" : "(" + type + ")" + llvm::toString(v, 10, false) + "ULL";
    if (v.getSignificantBits() > 64) return ""; // wider than a literal can be
    if (v.getSExtValue() == INT64_MIN) return "(" + type + ")(-9223372036854775807LL - 1)";
    return "(" + type + ")(" + llvm::toString(v, 10, true) + "LL)";
  }
  case TemplateArgument::Template: {
    std::string text;
    llvm::raw_string_ostream os(text);
    const TemplateDecl *d = a.getAsTemplate().getAsTemplateDecl();
    if (!d || d->getLinkageInternal() != Linkage::External) return "";
    d->printQualifiedName(os, policy);
    return "::" + text;
  }
  case TemplateArgument::Pack: {
    std::vector<std::string> parts;
    for (const TemplateArgument &e : a.pack_elements()) {
      parts.push_back(argumentText(e, ctx));
      if (parts.back().empty()) return "";
    }
    return parts.empty() ? " " : llvm::join(parts, ", "); // " ": an empty pack, not a failure
  }
  default: // declarations, null pointers, structural values: not written here
    return "";
  }
}

// A variable in device memory whose copy in a second module could differ from the program's: not a
// constant (clang makes a namespace-scope constexpr variable __constant__ implicitly; every module's copy
// holds its value).
bool deviceStorage(const VarDecl *v) {
  auto written = [](const Attr *a) { return a && !a->isImplicit(); };
  if (!written(v->getAttr<CUDADeviceAttr>()) && !written(v->getAttr<CUDAConstantAttr>()) &&
      !v->hasAttr<HIPManagedAttr>())
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
    if (fd->isInlined() || !fd->isExternallyVisible()) return; // weak or internal: a second copy is harmless
    if (fd->isDeleted() || (!fd->getBody() && !isa<CXXMethodDecl>(fd))) return; // no symbol
    if (fd->hasAttr<CUDAGlobalAttr>()) {
      if (fd->getTemplateSpecializationKind() != TSK_Undeclared) return; // template kernels: a stub per unit
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
        v->getTemplateSpecializationKind() != TSK_Undeclared ||
        v->isThisDeclarationADefinition() != VarDecl::Definition)
      return;
    const std::string what = "variable '" + v->getQualifiedNameAsString() + "'";
    if (deviceStorage(v)) {
      keep(v, what + " lives in device memory: a module of the twins' own would have its own copy");
      return;
    }
    if (v->hasAttr<CUDASharedAttr>() || !atFileScope(v) || v->isLocalVarDeclOrParm()) return;
    if (v->isStaticDataMember()) {
      if (v->isInline() || v->isConstexpr()) return;
      if (editable(v, "static member '" + v->getQualifiedNameAsString() + "'"))
        plan.guards.push_back({v, false, false});
      return;
    }
    if (v->isInline()) return; // one object per program, constructed once
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
  std::map<unsigned, std::vector<const VarDecl *>> externGroups; // by the declaration's first offset
};

} // namespace

TemplateTwinPlan planTemplateTwin(const FunctionDecl *kernel, const ASTContext &ctx) {
  TemplateTwinPlan plan;
  const FunctionTemplateDecl *t = kernel->getDescribedFunctionTemplate();
  if (!t) {
    plan.keptBecause = "not a template";
    return plan;
  }
  // The struct is declared in the kernel's namespace (an out-of-line definition's is reopened around it).
  for (const DeclContext *dc = kernel->getDeclContext(); !dc->isTranslationUnit(); dc = dc->getParent()) {
    const auto *ns = dyn_cast<NamespaceDecl>(dc);
    if (!ns || ns->isAnonymousNamespace()) {
      plan.keptBecause = "it is in an anonymous namespace";
      return plan;
    }
    plan.scope = ns->getNameAsString() + "::" + plan.scope;
  }
  for (const FunctionDecl *spec : t->specializations()) {
    if (spec->getTemplateSpecializationKind() == TSK_ExplicitSpecialization) {
      plan.keptBecause = "it has an explicit specialization";
      return plan;
    }
    if (!spec->isDefined()) continue; // named, never instantiated: never launched
    bool nameable = spec->getLinkageInternal() == Linkage::External;
    std::string list;
    for (const TemplateArgument &a : spec->getTemplateSpecializationArgs()->asArray()) {
      if (!nameable) break;
      std::string text = argumentText(a, ctx);
      nameable = !text.empty();
      if (text == " ") continue; // an empty pack
      list += (list.empty() ? "" : ", ") + text;
    }
    if (!nameable) {
      std::string name;
      llvm::raw_string_ostream os(name);
      spec->getNameForDiagnostic(os, ctx.getPrintingPolicy(), true);
      plan.keptBecause = "its instantiation '" + name +
                         "' has a template argument that another translation unit "
                         "cannot name";
      return plan;
    }
    plan.argumentLists.push_back(list);
  }
  std::sort(plan.argumentLists.begin(), plan.argumentLists.end());
  plan.argumentLists.erase(std::unique(plan.argumentLists.begin(), plan.argumentLists.end()), plan.argumentLists.end());
  return plan;
}

namespace {
// Why launch functions declared for `kernel` could not be defined in another translation unit: a
// parameter whose type only this one can name; or "".
std::string localParameterType(const FunctionDecl *kernel) {
  for (const ParmVarDecl *p : kernel->parameters())
    if (p->getType()->getLinkage() != Linkage::External)
      return "the type of its parameter '" + p->getNameAsString() + "' is local to this translation unit";
  return "";
}
} // namespace

std::string staticTwinKeptBecause(const FunctionDecl *kernel) {
  if (kernel->getStorageClass() != SC_Static || kernel->getDescribedFunctionTemplate()) return "not a static kernel";
  if (kernel->isInAnonymousNamespace()) return "it is in an anonymous namespace";
  return localParameterType(kernel);
}

std::string anonymousTwinKeptBecause(const FunctionDecl *kernel, const NamespaceDecl *&ns) {
  ns = dyn_cast<NamespaceDecl>(kernel->getLexicalDeclContext());
  if (!ns || !ns->isAnonymousNamespace() || kernel->getDescribedFunctionTemplate())
    return "it is in an anonymous namespace, and a twin there cannot be declared in one translation unit and "
           "defined in another (only a kernel declared directly in one, not a template, can go apart)";
  for (const DeclContext *dc = ns->getParent(); !dc->isTranslationUnit(); dc = dc->getParent())
    if (const auto *outer = dyn_cast<NamespaceDecl>(dc); !outer || outer->isAnonymousNamespace())
      return "it is in an anonymous namespace inside another one";
  if (ns->getBeginLoc().isMacroID() || ns->getRBraceLoc().isMacroID())
    return "its anonymous namespace is opened or closed by a macro";
  return localParameterType(kernel);
}

std::string qualifiedParameters(const FunctionDecl *kernel, const ASTContext &ctx) {
  PrintingPolicy policy = ctx.getPrintingPolicy();
  policy.SuppressTagKeyword = true;
  policy.FullyQualifiedName = true;
  std::vector<std::string> out;
  for (unsigned i = 0; i < kernel->getNumParams(); ++i) {
    const ParmVarDecl *p = kernel->getParamDecl(i);
    QualType t = TypeName::getFullyQualifiedType(p->getType().getCanonicalType(), ctx, /*WithGlobalNsPrefix=*/true);
    std::string text;
    llvm::raw_string_ostream os(text);
    t.print(os, policy, p->getName().empty() ? "ptb_param" + std::to_string(i) : p->getName());
    out.push_back(text);
  }
  return llvm::join(out, ", ");
}

std::string uniqueSuffix(llvm::StringRef mainFile, llvm::StringRef qualifiedName) {
  llvm::SmallString<256> key(mainFile);
  (void)llvm::sys::fs::make_absolute(key);
  key += '\0';
  key += qualifiedName;
  return llvm::utohexstr(llvm::xxh3_64bits(key.str()), /*LowerCase=*/true);
}

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

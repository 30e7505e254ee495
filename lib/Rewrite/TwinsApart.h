// Twins apart (ptb-transform --twins-apart; docs/generated-code.md, "Twins apart"): a translation unit's
// PTB twins compiled a second time, into a module of their own, so that a program whose launches run the
// original kernels never loads them. The second compile is the same transformed text with PTB_TWINS_PART
// defined; this file finds what that compile must not define again (the host symbols the first compile
// already defines) and why a translation unit cannot be split at all.
#pragma once

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/Basic/SourceLocation.h"

#include "TwinsPart.h"

#include <string>
#include <vector>

namespace ptb {

struct TwinsApartPlan {
  // Why the twins stay in the program's module ("" when they can go), and where.
  std::string keptBecause;
  clang::SourceLocation keptAt;
  // A main-file definition the twins part leaves out: its body (the declaration stays: functions with
  // external linkage, non-template kernels) or the whole definition (out-of-class members, static data
  // members: their declaration in the class stays). Device code is left out of the twins part's host
  // pass only: its device pass compiles the twins, which may call it.
  struct Guard {
    const clang::Decl *decl;
    bool bodyOnly;
    bool hostPassOnly;
  };
  std::vector<Guard> guards;
  // Main-file variable definitions with external linkage, one entry per declaration (`int a, b;` is one):
  // the twins part declares them `extern` instead.
  std::vector<std::vector<const clang::VarDecl *>> madeExtern;
};

// What the twins part of the translation unit of `ctx` must leave out, or why it cannot be made.
TwinsApartPlan planTwinsApart(clang::ASTContext &ctx);

// A template kernel's twin goes apart through a struct of launch functions (`K__ptb_twin<...>`) that
// the program's compile declares and the twins part defines and instantiates explicitly, once for each
// template argument list the kernel was instantiated with. `keptBecause` is "" when it can go.
struct TemplateTwinPlan {
  std::string keptBecause;
  std::string scope;                      // where the struct is, for the instantiations: "" or "a::b::"
  std::vector<std::string> argumentLists; // "float", "3, float, -2"
};
TemplateTwinPlan planTemplateTwin(const clang::FunctionDecl *kernel, const clang::ASTContext &ctx);

// A `static` kernel's twin is static too: it goes apart behind two launch functions with external
// linkage and a name unique to the translation unit, which the program's compile declares and the twins
// part defines. Why it cannot, or "".
std::string staticTwinKeptBecause(const clang::FunctionDecl *kernel);

// A kernel (not a template) in an anonymous namespace: its twin goes apart as a static kernel's, with its
// launch functions declared before that namespace opens, where nothing it declares is visible yet, and
// defined by the twins part after it closes. Why it cannot, or "" with `ns` set to that namespace.
std::string anonymousTwinKeptBecause(const clang::FunctionDecl *kernel, const clang::NamespaceDecl *&ns);

// The kernel's parameters with their types fully qualified and without typedefs ("int* p, float n"),
// to be written where the kernel's own spelling may not resolve.
std::string qualifiedParameters(const clang::FunctionDecl *kernel, const clang::ASTContext &ctx);

// The suffix that makes a kernel's launch functions' names unique: a hash of the main file's absolute
// path and the kernel's qualified name (a static `k` and an anonymous namespace's `k` differ).
std::string uniqueSuffix(llvm::StringRef mainFile, llvm::StringRef qualifiedName);

// The `extern` declaration of `v` (no initializer), or "" when its type cannot be written.
std::string externDeclaration(const clang::VarDecl *v, const clang::ASTContext &ctx);

} // namespace ptb

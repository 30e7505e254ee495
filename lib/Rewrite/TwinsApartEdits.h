// The edits of twins apart (TwinsApart.h says which definitions go apart; docs/generated-code.md, "Twins
// apart"): the guards that leave the plan's definitions out of the twins part, the launch structs and
// launch functions of template, static and anonymous-namespace kernels, and the twins part's own text.
// Internal to lib/Rewrite.
#pragma once

#include "EditContext.h"
#include "TwinsApart.h"

#include <map>
#include <string>
#include <vector>

namespace ptb::rewrite {

using namespace clang;

class TwinsApartEdits : SourceText {
public:
  explicit TwinsApartEdits(EditContext &cx) : SourceText(cx), cx(cx) {}

  // Plans the twins part and adds the guards that leave the plan's definitions out of it.
  // `remark`: say why when the twins stay (only where there are twins: without, nothing is lost).
  void planApart(ASTContext &ctx, bool remark);

  // A template, `static` or anonymous-namespace kernel of the main file whose twin can go apart, through
  // its launch struct or launch functions (TwinsApart.h); a remark at the kernel where it cannot.
  void planLaunchedApart(const Kernel &k);

  // Whether a kernel's twin goes to the twins part: its original is left out of it (a kernel with
  // external linkage, not a template, in the main file), or it is reached through launch functions that
  // the twins part defines (a template, `static` or anonymous-namespace kernel).
  bool twinApart(const Kernel &k) const;

  // What a launch calls instead of the twin when the twin is reached through launch functions (twins
  // apart, a template, `static` or anonymous-namespace kernel): the launch_apart form's function; "" otherwise.
  std::string apartLaunch(const FunctionDecl *fd) const;

  // A PTB clone of a guarded device function is guarded as its original is: `body` is the clone's body
  // (a free function's) or its whole definition (a member's, out of the class).
  std::string guardedClone(const FunctionDecl *original, const std::string &text, bool whole) const;

  // The twins part: the main output again, with PTB_TWINS_PART defined. Empty (with the reason) when the
  // twins stay in the main output's module.
  FileOutput twinsPart(const FileOutput &main) const;

  // A template kernel's launch struct (twins apart): its functions launch the twin, given the original's
  // address; the twins part defines them and instantiates the struct for each of the kernel's template
  // argument lists, the program's compile only declares them.
  std::string launchStruct(const FunctionDecl *fd) const;

  // A static kernel's launch functions, declared and (in the twins part) defined after its twin.
  std::string staticLaunchFunctions(const FunctionDecl *fd) const;

  TwinsApartPlan plan;
  std::map<const FunctionDecl *, TwinsApartPlan::Guard> guarded;  // the plan's guards of functions
  std::map<const FunctionDecl *, TemplateTwinPlan> templateApart; // template kernels whose twins go apart
  std::vector<const FunctionDecl *> templateApartOrder;           // the same, in the order of the kernels
  std::map<const FunctionDecl *, std::string> staticApart; // static and anonymous-namespace kernels apart: their suffix
  unsigned twinsApartCount = 0;

private:
  // Wraps the main file's text [b, e) in `#if keepIf`, with `otherwise` (when not empty) as the #else branch;
  // #line directives keep the original numbering after each directive. The closing edit comes before any
  // other edit at `e` (a twin or a clone inserted after a guarded definition is not inside its guard).
  void guardMain(SourceLocation b, SourceLocation e, const std::string &keepIf, const std::string &otherwise);

  // The end of a guard, after the guarded text: its #else branch when `otherwise` is not empty, its #endif.
  static std::string guardEnd(const std::string &otherwise);

  // What starts a directive at `l`: nothing at the start of a line, else a line break.
  std::string newLineAt(SourceLocation l) const { return sm.getSpellingColumnNumber(l) == 1 ? "" : "\n"; }

  // Just after a declaration's text: its body's '}', or the ';' that ends it. Invalid if not found.
  SourceLocation endOfDeclaration(const Decl *d) const;

  // The condition under which a guarded definition is compiled: in the program's compile, and, for
  // device code, in the twins part's device pass.
  static std::string keepCondition(bool hostPassOnly);

  // A static kernel's launch functions (twins apart): as a launch struct's, with external linkage and a
  // name unique to the translation unit (its twin is static, like the kernel). `params` as written
  // where they are declared. Their heads, and their bodies (which only the twins part compiles).
  struct LaunchFunction {
    std::string head, body;
  };

  std::vector<LaunchFunction> launchFunctions(const FunctionDecl *fd, const std::string &params) const;

  // A kernel in an anonymous namespace: its launch functions are declared before the namespace opens
  // (their parameters' types written fully qualified: a name the namespace declares is not visible
  // there) and defined by the twins part after it closes.
  void declareBeforeAnonymousNamespace(const FunctionDecl *fd, const NamespaceDecl *ns);

  EditContext &cx;
};

} // namespace ptb::rewrite

#include "PtbCloneName.h"

#include "clang/AST/DeclCXX.h"

using namespace clang;

namespace ptb {

std::string ptbCloneName(const FunctionDecl *fd) {
  if (auto *ctor = dyn_cast<CXXConstructorDecl>(fd)) return ctor->getParent()->getNameAsString();
  if (OverloadedOperatorKind op = fd->getOverloadedOperator(); op != OO_None) {
    static const char *const names[] = {
        "",
#define OVERLOADED_OPERATOR(Name, Spelling, Token, Unary, Binary, MemberOnly) #Name,
#include "clang/Basic/OperatorKinds.def"
    };
    auto *m = dyn_cast<CXXMethodDecl>(fd);
    return std::string(m && !m->isStatic() ? "operator" : "freeOperator") + names[op] + "__ptb";
  }
  return fd->getNameAsString() + "__ptb";
}

} // namespace ptb

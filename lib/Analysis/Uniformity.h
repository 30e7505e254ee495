// Is a statement of a kernel reached by all threads of a block together? A conservative answer: "yes"
// only when every condition that controls it depends on block-uniform values alone (blockIdx, gridDim,
// blockDim, kernel parameters, constants, and locals computed only from those under uniform control).
#pragma once

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/ParentMap.h"
#include "clang/AST/Stmt.h"

#include <set>
#include <string>

namespace ptb {

class UniformityAnalysis {
public:
  explicit UniformityAnalysis(const clang::FunctionDecl *fn);

  // Whether every thread of a block that reaches the function reaches `s` (or none does). On "no",
  // `reason` names the first thread-dependent value found.
  bool isReachedUniformly(const clang::Stmt *s, std::string &reason);

  // Whether `e` has the same value in all threads of a block.
  bool isUniform(const clang::Expr *e, std::string &reason) const;

  // The statement that contains `s` in the function's body (null at the top). A parent map of this one
  // body: ASTContext's parent map would walk the whole translation unit, headers included.
  const clang::Stmt *parentOf(const clang::Stmt *s) const { return parents.getParent(s); }

private:
  bool controlledUniformly(const clang::Stmt *s, std::string &reason, bool checkLoopExits);
  void computeVaryingVariables();

  const clang::FunctionDecl *fn;
  clang::ParentMap parents;
  std::set<const clang::ValueDecl *> varying;
};

} // namespace ptb

// Records a function body's SlotFacts (SlotFacts.h) as FunctionFacts' scan meets its nodes; defined in
// SlotFacts.cpp. Internal to lib/Analysis.
#pragma once

#include "SlotFacts.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Stmt.h"
#include "llvm/ADT/StringRef.h"

#include <cstddef>

namespace ptb::analysis {

using namespace clang;

class SlotFactsRecorder {
public:
  SlotFactsRecorder(ASTContext &ctx, SlotFacts &out) : ctx(ctx), out(out) {}
  void call(const CallExpr *c);
  void memberCall(const CXXMemberCallExpr *c);
  void var(const VarDecl *v);
  void declStmt(const DeclStmt *d);
  // After the scan walked lambda `l` (whose body read a built-in variable), `at` problems before it.
  void lambdaReadsBuiltins(const LambdaExpr *l, size_t at);
  void declRef(const DeclRefExpr *e);
  void inlineAsm(const GCCAsmStmt *s, llvm::StringRef text);

private:
  ASTContext &ctx;
  SlotFacts &out;
};

} // namespace ptb::analysis

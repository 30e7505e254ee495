#include "BuiltinVars.h"

using namespace clang;

namespace ptb {

const char *name(BuiltinVar v) {
  switch (v) {
  case BuiltinVar::blockIdx: return "blockIdx";
  case BuiltinVar::gridDim: return "gridDim";
  case BuiltinVar::threadIdx: return "threadIdx";
  case BuiltinVar::blockDim: return "blockDim";
  }
  return "?";
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

} // namespace ptb

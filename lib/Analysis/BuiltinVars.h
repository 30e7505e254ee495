// The four built-in index variables of CUDA (blockIdx, gridDim, threadIdx, blockDim) and how to recognize a
// read of one in the AST.
#pragma once

#include "clang/AST/Expr.h"

#include <optional>

namespace ptb {

enum class BuiltinVar { blockIdx, gridDim, threadIdx, blockDim };
constexpr BuiltinVar kBuiltinVars[] = {BuiltinVar::blockIdx, BuiltinVar::gridDim, BuiltinVar::threadIdx,
                                       BuiltinVar::blockDim};
const char *name(BuiltinVar v);

// Which built-in variable `e` names (a DeclRefExpr to blockIdx/gridDim/threadIdx/blockDim), if any.
std::optional<BuiltinVar> builtinVarOf(const clang::Expr *e);

} // namespace ptb

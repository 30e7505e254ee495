// The facts of one function body that the fuser (lib/Fusion, docs/fuse-kernels.md) reads to copy the
// body for a slot of a fused block: what the copy must edit (the anchors) and what a slot cannot run.
// Gathered by FunctionFacts in its one scan of the body (lambdas written in it included, template
// instantiations not visited); the fuser asks for them through the inventory, never scanning again.
#pragma once

#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ptb {

struct Inventory;

bool isSharedVar(const clang::VarDecl *v); // a __shared__ variable
// __syncthreads and its _count, _and, _or forms: the barriers of the whole block, by the callee's name.
bool isBlockBarrier(llvm::StringRef name);
bool isDynamicShared(const clang::VarDecl *v); // extern __shared__, or an array of unknown size

struct SlotFacts {
  struct Problem {
    clang::SourceLocation loc;
    std::string what; // why a slot cannot run it, after "it " or "the function 'f' it calls "
  };
  std::vector<const clang::CallExpr *> blockBarriers;   // __syncthreads, __syncthreads_count/_and/_or
  std::vector<const clang::CallExpr *> userCalls;       // calls of functions defined outside system headers
                                                        // (not lambdas, not cooperative groups)
  std::vector<const clang::CallExpr *> blockGroupCalls; // cooperative_groups::this_thread_block()
  std::vector<const clang::VarDecl *> blockGroupVars;   // cooperative_groups::thread_block variables it initializes
  std::vector<const clang::DeclStmt *> externShared;    // `extern __shared__ T x[];`, each declared alone
  std::vector<const clang::VarDecl *> fileShared;       // file-scope __shared__ variables it uses, first use first
  std::vector<const clang::DeclRefExpr *> fileSharedUses;
  bool readsBuiltins = false; // threadIdx, blockDim, blockIdx or gridDim
  bool declaresShared = false;
  uint64_t staticSharedBytes = 0; // of the __shared__ variables it declares, sizes known
  bool usesCooperativeGroups = false;
  std::vector<Problem> problems; // in the order they are written
};

// The slot facts of a function of the translation unit that `inv` describes, from the analysis that made
// it (a function it had not read yet is scanned once, now). Valid while that translation unit's AST lives.
const SlotFacts &slotFactsOf(const Inventory &inv, const clang::FunctionDecl *fd);

// Whether a slot's copy of `fd` differs from `fd`: it, or a function it calls (SlotFacts::userCalls,
// transitively), reads a built-in variable, meets at a block barrier, uses cooperative groups or
// __shared__ memory, or has something a slot cannot run. Memoised with the facts.
bool slotDependent(const Inventory &inv, const clang::FunctionDecl *fd);

} // namespace ptb

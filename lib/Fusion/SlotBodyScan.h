// The fuser's body scanner: what the slot copy of one function body must change (its barriers, block
// groups, extern and file-scope __shared__ variables, the calls it may have to send to slot copies) and
// what makes the body unfit for a slot. Its own walk, beside lib/Analysis's kernel scan.
#pragma once

#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"

#include <map>
#include <string>
#include <vector>

namespace ptb {

// The block-barrier builtins (__syncthreads*) and what they become in a slot (named barrier PtbBar over
// PtbThreads).
extern const std::map<std::string, std::string> kSlotBarrierForms;

bool isSharedVar(const clang::VarDecl *v);      // a __shared__ variable
bool isDynamicShared(const clang::VarDecl *v);  // extern __shared__, or an array of unknown size

struct BodyScan {
  struct Problem {
    clang::SourceLocation loc;
    std::string what;
  };
  std::vector<const clang::CallExpr *> barriers;          // __syncthreads* calls
  std::vector<const clang::DeclStmt *> localDynamic;      // extern __shared__ T x[]; in the body
  std::vector<const clang::VarDecl *> globalShared;       // file-scope __shared__ variables it reads (first use order)
  std::vector<const clang::DeclRefExpr *> globalSharedRefs;
  std::vector<const clang::CallExpr *> blockGroups;       // cooperative_groups::this_thread_block() calls
  std::vector<const clang::VarDecl *> blockGroupVars;     // variables declared as cooperative_groups::thread_block
  std::vector<const clang::CallExpr *> userCalls;         // calls of functions defined outside system headers
  bool readsBuiltins = false;                             // threadIdx/blockDim/blockIdx/gridDim
  bool declaresShared = false;
  bool usesCg = false;
  std::vector<Problem> problems;
};

// Scans one function body, the lambdas written in it included (template instantiations are not visited).
BodyScan scanSlotBody(clang::Stmt *body, const clang::SourceManager &sm);

} // namespace ptb

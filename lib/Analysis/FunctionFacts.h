// Facts of one function body, gathered once per function (Analyzer::factsOf, Analyzer.h) and shared by
// every kernel that reaches it: the built-in variables it reads, its barriers, warp-level operations, calls
// (with how each is written, for sending it to a PTB clone), shared variables, returns and blockers. Internal to
// lib/Analysis.
#pragma once

#include "KernelInventory.h"
#include "SlotFacts.h"

#include "clang/AST/ExprCXX.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ptb::analysis {

using namespace clang;

// The definition to read for a called function: the instantiation when it has a body, else the pattern.
const FunctionDecl *definitionOf(const FunctionDecl *fd);

// The pattern (what is written in the source) of a function, for cloning.
const FunctionDecl *patternOf(const FunctionDecl *fd);

// One reach of a barrier/blocker/builtin found in a function body.
struct BarrierHit {
  std::string kind;
  bool blockWide;
  SourceLocation loc;
  // A block barrier in a parking task body (docs/ptb-transform.md, "Parking"): how it is written, for
  // making it a task barrier, or why it cannot be one.
  std::optional<TaskBarrierSite> site;
  std::string unrewritable;
};
// A warp-level collective (shuffle, vote, __syncwarp, a tile's operation, WMMA, warp-collective asm): it
// waits for every non-exited thread its mask names, so a parked thread must never be among them.
struct WarpHit {
  std::string kind;
  SourceLocation loc;
};
struct CallHit {
  CallHit(const FunctionDecl *callee, SourceLocation nameLoc, SourceLocation lparenLoc, SourceLocation callLoc,
          bool hasArgs, bool viaOperatorOrImplicit, bool system = false)
      : callee(callee), nameLoc(nameLoc), lparenLoc(lparenLoc), callLoc(callLoc), hasArgs(hasArgs),
        viaOperatorOrImplicit(viaOperatorOrImplicit), system(system) {}
  const FunctionDecl *callee;                 // declaration with a body, as called (instantiation or plain)
  SourceLocation nameLoc, lparenLoc, callLoc; // nameLoc: the name token, or what identifies an unnamed call
  bool hasArgs;
  bool viaOperatorOrImplicit; // cannot be sent to a clone by a text edit (`why` says why)
  bool system = false;        // defined in a system header (cub, thrust, ...): followed for barriers only
  std::string why;
  std::optional<CloneCallSite> site; // how it is written, for sending it to the callee's clone (none when it
                                     // cannot be)
};

struct FunctionFacts {
  bool direct[4] = {false, false, false, false};
  std::set<std::string> macros[4];
  std::vector<SourceLocation> indexLocs; // locations of blockIdx/gridDim reads
  std::vector<BarrierHit> barriers;
  std::vector<WarpHit> warpOps;
  std::vector<Blocker> blockers;
  std::vector<CallHit> calls;
  std::vector<SharedVariable> shared;
  std::vector<const ReturnStmt *> returns;
  std::vector<const LambdaExpr *> lambdasWithoutDefaultCapture;
  std::string coupling; // the first construct that couples the threads of a block (see Kernel::tasksIndependent)
  SlotFacts slot;       // for the fuser; from the body's own text (not from default arguments it evaluates)
};

} // namespace ptb::analysis

// What to fuse, as the command line or a JSON batch says it: the jobs (one fused output each) and the
// parsers of their pieces (kernel requests, block shapes, ratios; the tuner's output: TunerOutput.h).
// A parser that explains its refusal returns an llvm::Error whose message the tool prints as a diagnostic.
#pragma once

#include "Diagnostics.h"
#include "FusionTypes.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace ptb {

// One problem size a tuning harness measured (its `decide` line) and what ran fastest there: the kernels
// one after the other, in two streams, or a fused candidate (docs/fuse-kernels.md, "Decisions").
struct FusionDecision {
  enum class Choice { sequential, streams, fused };
  std::vector<unsigned long long> tasks; // each kernel's task count (grid.x * grid.y * grid.z), slot order
  Choice choice = Choice::sequential;
  std::vector<unsigned> slots;   // fused: the candidate's ratio
  unsigned minBlocks = 1;        // fused: its blocks per SM (0: the most its register budgets allow)
  std::vector<unsigned> budgets; // fused: its register budgets per kernel (setmaxnreg), or none
  std::string label;             // "2:2/2", "1:2/2@112:32", "sequential" or "streams"
  std::string measured;          // the rest of the line (the measured times), for a comment
  unsigned line = 0, column = 0; // where the decision (its ratio for `fused`) is in the file
};

// Register budgets of a fused candidate (--reg-budget; docs/fuse-kernels.md, "Register budgets"): the
// registers per thread each kernel's slots run with on sm_90a (setmaxnreg), one count per kernel in slot
// order, each a multiple of 8 from 24 to 256.
struct RegisterBudget {
  std::vector<unsigned> slots;     // the ratio they are for; empty: every ratio of the job
  unsigned minBlocks = 0;          // fused blocks per SM asked for; 0: the most the budgets allow
  std::vector<unsigned> registers; // per kernel, slot order
  // One register count per kernel, and a ratio (if any) of one slot count per kernel.
  bool fits(size_t kernels) const { return registers.size() == kernels && (slots.empty() || slots.size() == kernels); }
};

// One fused output: the kernels (in slot order), the ratios to emit, names and where it goes.
struct FusionJob {
  std::vector<FusionKernelRequest> kernels;
  std::vector<std::vector<unsigned>> ratios; // explicit ratios; empty with allRatios
  bool allRatios = false;
  std::vector<unsigned> minBlocks = {1}; // fused blocks per SM to ask for, each ratio (--min-blocks)
  bool plain = true;                     // the ratios x minBlocks candidates without budgets are written
  std::vector<RegisterBudget> budgets;   // candidates with register budgets (--reg-budget), after those
  std::string name;                      // base name of the fused kernels ("" : <k0>__<k1>__fused)
  std::string output;                    // "" : standard output
  // --decisions-from: the candidates are the fused decisions' ratios, and name_launch decides per size.
  std::vector<FusionDecision> decisions;
  std::string decisionsFile;
};

// Every kernel the jobs name, once (a kernel may be in several jobs, or twice in one), in first-use order.
std::vector<FusionKernelRequest> distinctKernels(const std::vector<FusionJob> &jobs);

// Whether `name` can be a fused kernel's base name (--name, "name" in a batch): a C++ identifier, not a
// keyword, not starting with '_', without "__" and not ending in '_' (the tool derives name_launch,
// name_1_2, ...: they must not be reserved either). An error saying why not.
llvm::Error checkFusedName(llvm::StringRef name);

// "128", "32x8", "8x8x4" -> block; "NAME=32x8" or "NAME=256,4096" (with dynamic shared bytes) -> request.
bool parseBlockShape(llvm::StringRef text, unsigned block[3]);
llvm::Expected<FusionKernelRequest> parseKernelRequest(llvm::StringRef text);
// "1:2" -> {1, 2}; every count >= 1.
bool parseRatio(llvm::StringRef text, std::vector<unsigned> &out);
std::string ratioString(const std::vector<unsigned> &slots); // "1:2"
// "1:2/2" -> {1, 2} and 2 blocks per SM ("1:2": 1). A label with register budgets ("1:2/2@112:32") is not
// accepted here.
bool parseCandidateLabel(llvm::StringRef text, std::vector<unsigned> &slots, unsigned &minBlocks);
// The same, also with register budgets: "1:2/2@112:32" -> {1, 2}, 2, {112, 32}; "1:2@112:32" -> minBlocks 0
// (the most the budgets allow); "1:2" -> minBlocks 1, no budgets.
bool parseCandidateLabel(llvm::StringRef text, std::vector<unsigned> &slots, unsigned &minBlocks,
                         std::vector<unsigned> &budgets);
// "112:32" -> {112, 32}: two or more register counts, each a multiple of 8 from 24 to 256 (setmaxnreg's range).
bool parseRegisterCounts(llvm::StringRef text, std::vector<unsigned> &out);
// One --reg-budget item: "112:32" (every ratio of the job) or "1:2[/2]@112:32" (that ratio only).
llvm::Expected<RegisterBudget> parseRegisterBudget(llvm::StringRef text);
// A batch: {"fusions": [{"kernels": [{"name": "k", "block": "32x8", "dynamic_shared": 0}, ...],
//                        "ratio": "1:2" | "ratios": ["1:1", "1:2"] | "all_ratios": true,
//                        "reg_budgets": ["112:32", "1:2@112:32"], "name": "...", "output": "..."}]}
// (docs/fuse-kernels.md). A key not listed here is an error (a misspelt key would be ignored otherwise), and
// so are arrays and objects nested deeper than kMaxConfigNesting (the parser recurses per level).
constexpr unsigned kMaxConfigNesting = 64;
llvm::Expected<std::vector<FusionJob>> parseFusionConfig(llvm::StringRef json);

} // namespace ptb

// The fusion tuner's output (tools/fuse-kernels/tuner/fusion_tuner.cu): its `winner` line, for --ratio-from,
// and its `decide` lines, for --decisions-from. A parser that explains its refusal returns an llvm::Error
// (or fills a Diagnostic) whose message the tool prints as a diagnostic.
#pragma once

#include "Diagnostics.h"
#include "FusionJob.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace ptb {

// The ratio a tuning harness chose: the first line "winner <ratio>[/<min blocks>]" of its output
// ("winner none": none). Without `minBlocks`, a winner with blocks per SM is not a ratio; without `budgets`,
// neither is a winner with register budgets ("winner 1:2/2@112:32").
llvm::Error ratioFromHarnessOutput(llvm::StringRef text, std::vector<unsigned> &out, unsigned *minBlocks = nullptr,
                                   std::vector<unsigned> *budgets = nullptr);
// The candidate label of that line, as written ("1:2", "1:2/2", "1:2/2@112:32"), checked to be one.
llvm::Expected<std::string> winnerFromHarnessOutput(llvm::StringRef text);
// The decisions the tuner printed (fusion_tuner.cu --bench) for `kernels` (slot order), from its lines
//   decide <k0>+<k1> [scale <s>] tasks <t0> <t1>: fused <a:b[/m][@r0:r1]> [(<measured>)]
//   decide <k0>+<k1> [scale <s>] tasks <t0> <t1>: sequential | streams [(<measured>)]
// in file order. Other lines, and decide lines of other kernels, are skipped. An error, located in `file`
// (`error`, false returned): a malformed decide line of these kernels, a ratio that is not one of
// kernels.size() counts, a second decision for the same task counts, no decision for these kernels.
bool decisionsFromHarnessOutput(llvm::StringRef text, const std::string &file, const std::vector<std::string> &kernels,
                                std::vector<FusionDecision> &out, Diagnostic &error);

} // namespace ptb

// The text of the fused kernels: one fused kernel (its slots calling the slot functions) with its
// launcher, and the candidate table a tuning harness reads.
#pragma once

#include "FusionJob.h"
#include "FusionTypes.h"

#include <string>
#include <vector>

namespace ptb {

// The fused kernel `name` with `slots[i]` slots of kernels[i], and its launcher `name`_launch. With register
// budgets (one per kernel; docs/fuse-kernels.md, "Register budgets"), each kernel's slots start with
// setmaxnreg on sm_90a (inc above the launch count, dec below it) and the kernel always names its blocks
// per SM in __launch_bounds__ (ptxas ignores setmaxnreg without them).
std::string emitFusedKernel(const std::vector<SlotKernel> &kernels, const std::vector<unsigned> &slots,
                            const std::string &name, unsigned minBlocks = 1, const std::vector<unsigned> &budgets = {});

// One fused kernel written, as the candidate table lists it.
struct FusedCandidate {
  std::string name;
  std::vector<unsigned> slots;
  unsigned minBlocks = 1;
  std::vector<unsigned> budgets; // registers per thread of each kernel's slots (setmaxnreg), or none
  // "1:2", "1:2/2" with two blocks per SM asked for, "1:2/2@112:32" with register budgets (always with
  // the blocks per SM, which the budgets' launch count depends on).
  std::string label() const;
  // The same fused kernel (ratio, blocks per SM and budgets; the name aside).
  bool sameKernel(const FusedCandidate &o) const {
    return slots == o.slots && minBlocks == o.minBlocks && budgets == o.budgets;
  }
};
// A table of the fused kernels written (for a tuning harness): `base`_candidates[].
std::string emitCandidateTable(const std::vector<SlotKernel> &kernels, const std::string &base,
                               const std::vector<FusedCandidate> &fused);

// The decision table `base`_decisions[] and the launcher `base`_launch that runs, for each launch, what the
// nearest measured size says (fused through `base`_candidates[], two streams, or one after the other).
// `fused` are the candidates written (the fused decisions' ratios); `file` names the decisions' file.
std::string emitDecisionLauncher(const std::vector<SlotKernel> &kernels, const std::string &base,
                                 const std::vector<FusedCandidate> &fused, const std::vector<FusionDecision> &decisions,
                                 const std::string &file);

} // namespace ptb

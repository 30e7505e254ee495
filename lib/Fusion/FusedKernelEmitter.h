// The text of the fused kernels: one fused kernel (its slots calling the slot functions) with its
// launcher, and the candidate table a tuning harness reads.
#pragma once

#include "FusionTypes.h"

#include <string>
#include <vector>

namespace ptb {

// The fused kernel `name` with `slots[i]` slots of kernels[i], and its launcher `name`_launch.
std::string emitFusedKernel(const std::vector<SlotKernel> &kernels, const std::vector<unsigned> &slots,
                            const std::string &name, unsigned minBlocks = 1);

// One fused kernel written, as the candidate table lists it.
struct FusedCandidate {
  std::string name;
  std::vector<unsigned> slots;
  unsigned minBlocks = 1;
  std::string label() const;  // "1:2", or "1:2/2" with two blocks per SM asked for
};
// A table of the fused kernels written (for a tuning harness): `base`_candidates[].
std::string emitCandidateTable(const std::vector<SlotKernel> &kernels, const std::string &base,
                               const std::vector<FusedCandidate> &fused);

} // namespace ptb

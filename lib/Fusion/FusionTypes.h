// What the fuser's steps hand each other (docs/fuse-kernels.md): the kernels the user asks for, each input
// file rewritten with its slot functions, and the kernels ready to be fused. Each chosen kernel gets a
// *slot function* beside it (its body, run by one slot of a fused block: threadIdx/blockDim the slot's,
// blockIdx/gridDim the task's, __syncthreads* on the slot's named barrier, shared memory per slot); the
// fused kernels are assembled from the slot functions of several translation units.
#pragma once

#include "KernelInventory.h"
#include "LocalIncludes.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ptb {

// One kernel to fuse, as the user names it, with the block shape its slots run (the kernel's launch
// block) and the most dynamic shared memory one of its blocks uses (for the feasibility check only).
struct FusionKernelRequest {
  std::string name; // name or qualified name
  unsigned block[3] = {0, 1, 1};
  uint64_t dynamicShared = 0;
  unsigned threads() const { return block[0] * block[1] * block[2]; }
};

// A kernel ready for fusion: what the fused kernel needs to call its slot function.
struct SlotKernel {
  FusionKernelRequest request;
  std::string name, qualifiedName;
  std::string slotFunction; // qualified name of the slot function template
  std::string kernelRef;    // qualified name of the original kernel (fallback launches)
  Location loc;
  std::vector<std::string> paramTypes, paramNames; // types fully qualified (for the fused kernel's signature)
  uint64_t staticShared = 0;                       // bytes of __shared__ variables in the kernel (per slot)
  bool tasksIndependent = false;
};

// One input file rewritten for fusion: its text with the slot functions inserted, and the kernels found.
struct FusionFile {
  std::string path;
  std::string text;
  std::vector<SlotKernel> kernels;
  std::vector<LocalInclude> localIncludes; // quoted #includes found beside the input; offsets in `text`
};

} // namespace ptb

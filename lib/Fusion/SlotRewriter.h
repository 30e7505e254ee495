// The slot rewriter: writes, beside each requested kernel of one translation unit, its slot function
// (and the slot copies of the device functions it calls), or reports why the kernel cannot run in a slot.
#pragma once

#include "FusionTypes.h"
#include "KernelInventory.h"

#include "clang/Frontend/CompilerInstance.h"

#include <vector>

namespace ptb {

// Finds the requested kernels in the main file of `ctx` and writes their slot functions. Kernels that
// cannot be fused are reported as errors (located, through `ci`'s DiagnosticsEngine) with the reason.
// Requests not defined in this file are ignored (another file may hold them). False on error.
bool prepareFusionFile(clang::CompilerInstance &ci, clang::ASTContext &ctx, const Inventory &inventory,
                       const std::vector<FusionKernelRequest> &requests, FusionFile &out);

} // namespace ptb

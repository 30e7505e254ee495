// ptb/twin_params.cuh: the runtime types in the generated code's signatures: ptb::Launch (the last
// parameter of every twin, launch_params.cuh) and ptb::VirtualBlock (the first parameter of a constructor's
// clone). Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include "launch_params.cuh"

namespace ptb {

// The first parameter of the PTB clone of a constructor that reads blockIdx/gridDim (ptb-transform,
// docs/reference/generated-code.md): a constructor cannot be renamed, so its clone is an overload that the
// generated code selects by passing `::ptb::VirtualBlock{}` first.
struct VirtualBlock {};

} // namespace ptb

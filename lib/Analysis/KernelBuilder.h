// Builds the Kernel record of one __global__ function from the facts of its body and of everything it
// calls: built-in variable uses and their call chains, barriers, returns, shared variables, blockers, the
// device functions to clone for the PTB twin and, for a kernel that parks, its task barriers. Internal to
// lib/Analysis.
#pragma once

#include "Analyzer.h"

namespace ptb::analysis {

Kernel buildKernel(Analyzer &a, const FunctionDecl *definition);

} // namespace ptb::analysis

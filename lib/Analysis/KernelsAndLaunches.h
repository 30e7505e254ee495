// Where the kernels and their launches are: the __global__ functions defined in the selected files and
// every launch written there (`<<<>>>`, cudaLaunchKernel and its cousins), found with AST matchers.
// Internal to lib/Analysis.
#pragma once

#include "Analyzer.h"

#include <map>
#include <vector>

namespace ptb::analysis {

struct KernelsAndLaunches {
  std::vector<const FunctionDecl *> kernels; // definitions (patterns for templates), in translation-unit order
  std::map<const FunctionDecl *, std::vector<LaunchSite>> launchesByKernel; // keyed by the kernel's pattern
  std::vector<LaunchSite> otherLaunches; // launches whose kernel is not known (not a __global__ definition)
};

// Searches only the top-level declarations of the selected files (the translation unit's traversal scope
// is narrowed for the search and restored): the CUDA and C++ headers, most of the unit, are not walked.
KernelsAndLaunches findKernelsAndLaunches(Analyzer &a);

} // namespace ptb::analysis

// One job's output, from the files the slot rewriter prepared: which files hold the job's kernels, and the
// whole translation unit written (marker, runtime include, each input's rewritten text, the fused kernels,
// their launchers and the candidate table). Problems come back as diagnostics, in the order found.
#pragma once

#include "Diagnostics.h"
#include "Feasibility.h"
#include "FusionJob.h"
#include "FusionTypes.h"

#include <optional>
#include <string>
#include <vector>

namespace ptb {

// The job's kernels in slot order (each with the job's request) and the files that hold them, each once,
// in the order of first use. Errors: a kernel no file defines, a kernel two files define. False on error.
bool resolveJobKernels(const FusionJob &job, const std::vector<FusionFile> &files, std::vector<SlotKernel> &kernels,
                       std::vector<const FusionFile *> &used, std::vector<Diagnostic> &diagnostics);

// The whole output of one job, `kernels` in slot order. Each fused kernel written adds a note (its threads,
// slots, shared memory and register cap); an infeasible ratio adds an error located at the first kernel,
// and then there is no output. Quoted #includes of files beside an input are pointed at them from the
// directory of job.output (they stay when it goes to standard output).
std::optional<std::string> assembleFusedOutput(const FusionJob &job, const std::vector<const FusionFile *> &files,
                                               const std::vector<SlotKernel> &kernels, const FusionLimits &limits,
                                               const std::string &toolVersion, std::vector<Diagnostic> &diagnostics);

} // namespace ptb

// ptb/ptb.cuh: the PTB runtime (header-only). The names the generated code uses are listed in
// docs/generated-code.md; the rest (policies, SM sets, trace) in docs/runtime.md.
#pragma once
#define PTB_RUNTIME_VERSION 1

#include "device.cuh"
#include "host.cuh"
#include "fused.cuh"
#include "smset.cuh"
#include "trace.cuh"

// ptb/ptb.cuh: the PTB runtime (header-only). The names the generated code uses are listed in
// docs/reference/generated-code.md; the rest (policies, SM sets, trace) in docs/design/runtime.md.
#pragma once
#define PTB_RUNTIME_VERSION 1

#include <cstdint> // came with the runtime before it was split by concept; kept for programs that rely on it

// device side
#include "twin_params.cuh"
#include "barriers.cuh"
#include "run_tasks.cuh"
#include "fused_slots.cuh"
// host side
#include "detail/connections.cuh" // acts when the program is loaded
#include "smset.cuh"
#include "launch_mode.cuh"
#include "tuning.cuh"
#include "policy.cuh"
#include "fallback.cuh"
#include "launch_config.cuh"
#include "launch.cuh"
#include "detail/early_setup.cuh" // acts when the program is loaded, with PTB_EARLY_SETUP=1
#include "runtime_state.cuh"
#include "sm_identity.cuh"
#include "fused.cuh"
#include "trace.cuh"

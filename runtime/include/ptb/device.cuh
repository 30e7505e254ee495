// ptb/device.cuh: the device side of the PTB runtime, kept as one name for what used to be one header: the
// generated code's parameter types, the task barriers, run_tasks, the slots of a fused kernel.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>
#include <cstdint>

#include "barriers.cuh"
#include "fused_slots.cuh"
#include "run_tasks.cuh"
#include "twin_params.cuh"

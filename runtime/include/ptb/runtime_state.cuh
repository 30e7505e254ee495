// ptb/runtime_state.cuh: whether the runtime has set up its state for a device (SM discovery, control
// blocks, pinned memory): what benchmarks and tests print to show which path a launch took (in the
// automatic launch mode a launch that runs its original kernel sets up nothing).
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include <mutex>

#include "detail/runtime.cuh"

namespace ptb {

// Whether the runtime has set itself up for `device` (default: the calling thread's current device).
// False for a device it has not touched, or one it does not know (beyond detail::kMaxDevices).
inline bool runtime_set_up(int device = -1) {
  if (device < 0 && cudaGetDevice(&device) != cudaSuccess) return false;
  if (device < 0 || device >= static_cast<int>(detail::kMaxDevices)) return false;
  detail::Runtime& __r = detail::rt();
  std::lock_guard<std::mutex> __g(__r.__m);
  return __r.devs[device] != nullptr;
}

} // namespace ptb

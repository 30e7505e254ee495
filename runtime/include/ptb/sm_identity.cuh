// ptb/sm_identity.cuh: the SMs of the current device: their %smid values by dense index, their count.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include <mutex>
#include <vector>

#include "detail/device_setup.cuh"
#include "detail/discovery.cuh"
#include "detail/runtime.cuh"

namespace ptb {

// The %smid values the current device reports, by dense index (discovered once per device by running a
// small kernel on every SM; identity if not every SM could be seen). Empty on a CUDA error.
inline std::vector<unsigned> sm_ids() {
  std::vector<unsigned> out;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return out;
  std::lock_guard<std::mutex> __g(detail::rt().__m);
  detail::DeviceState* d = detail::device_locked(dev);
  if (!d) return out;
  detail::discover_locked(*d);
  for (unsigned __i = 0; __i < d->ndense; ++__i) out.push_back(static_cast<unsigned>(d->raw_of[__i]));
  return out;
}
// Number of SMs of the current device (cached).
inline unsigned sm_count() {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return 0;
  std::lock_guard<std::mutex> __g(detail::rt().__m);
  detail::DeviceState* d = detail::device_locked(dev);
  return d ? static_cast<unsigned>(d->sms) : 0;
}

} // namespace ptb

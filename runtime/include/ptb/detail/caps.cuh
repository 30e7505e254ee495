// ptb/detail/caps.cuh: a policy's per-SM caps, computed and written to a device.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>

#include "../smset.cuh"
#include "config.cuh"
#include "device_state.cuh"
#include "discovery.cuh"
#include "policy_state.cuh"

namespace ptb {

namespace detail {

inline void compute_caps_locked(DeviceState& d, const PolicyState& p, unsigned char* out) {
  const unsigned cap = p.per_sm == 0 ? 255u : std::min(p.per_sm, 255u);
  if (p.sms == SmSet::all()) {
    for (unsigned i = 0; i < kMaxSm; ++i) out[i] = static_cast<unsigned char>(cap);
    return;
  }
  discover_locked(d);
  for (unsigned i = 0; i < kMaxSm; ++i) {
    const int k = d.dense_of[i];
    out[i] = static_cast<unsigned char>((k >= 0 && p.sms.contains(static_cast<unsigned>(k))) ? cap : 0u);
  }
}

// Write the policy's caps to device d (allocating them on first use). False on a CUDA error. *grew: some
// SM's cap went up (new workers are useful).
inline bool upload_caps_locked(DeviceState& d, PolicyState& p, bool* grew = nullptr) {
  unsigned char caps[kMaxSm];
  compute_caps_locked(d, p, caps);
  bool fresh = false;
  if (!p.caps[d.dev]) {
    if (cudaMalloc(&p.caps[d.dev], kMaxSm) != cudaSuccess) {
      p.caps[d.dev] = nullptr;
      return false;
    }
    fresh = true;
  }
  if (grew) {
    *grew = false;
    for (unsigned i = 0; i < kMaxSm && !fresh; ++i)
      if (caps[i] > p.last[d.dev][i]) *grew = true;
  }
  std::memcpy(d.staging, caps, kMaxSm);
  if (cudaMemcpyAsync(p.caps[d.dev], d.staging, kMaxSm, cudaMemcpyHostToDevice, d.ctl) != cudaSuccess) return false;
  if (cudaStreamSynchronize(d.ctl) != cudaSuccess) return false;
  std::memcpy(p.last[d.dev], caps, kMaxSm);
  return true;
}

}  // namespace detail

}  // namespace ptb

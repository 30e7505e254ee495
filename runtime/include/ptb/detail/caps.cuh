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

// One byte per %smid: 0 where the policy does not allow the SM, the cap where it allows it and the cap
// applies (p.capped), 255 (no cap) on the other allowed SMs. %smid values the device did not report are
// allowed only under the set of all SMs, and capped only when the cap applies everywhere, as before
// capped subsets existed.
inline void compute_caps_locked(DeviceState& d, const PolicyState& p, unsigned char* out) {
  const unsigned cap = p.per_sm == 0 ? 255u : std::min(p.per_sm, 255u);
  const bool all_sms = p.sms == SmSet::all(), cap_everywhere = p.per_sm == 0 || p.capped == SmSet::all();
  if (all_sms && cap_everywhere) { // no dense index needed (no discovery kernel for an unrestricted policy)
    for (unsigned __i = 0; __i < kMaxSm; ++__i) out[__i] = static_cast<unsigned char>(cap);
    return;
  }
  discover_locked(d);
  for (unsigned __i = 0; __i < kMaxSm; ++__i) {
    const int __k = d.dense_of[__i];
    const bool allowed = all_sms || (__k >= 0 && p.sms.contains(static_cast<unsigned>(__k)));
    const bool capped = cap_everywhere || (__k >= 0 && p.capped.contains(static_cast<unsigned>(__k)));
    out[__i] = static_cast<unsigned char>(!allowed ? 0u : capped ? cap : 255u);
  }
}

// The room of policy p on d (the SMs it allows among the device's, and where its cap applies).
inline PolicyRoom policy_room_locked(const DeviceState& d, const PolicyState& p) {
  const SmSet on = p.sms & SmSet::first(static_cast<unsigned>(d.sms));
  PolicyRoom __r{};
  __r.cap = p.per_sm;
  __r.capped_sms = p.per_sm != 0 ? (on & p.capped).count() : 0u;
  __r.free_sms = on.count() - __r.capped_sms;
  return __r;
}

// Write the policy's caps to device d (allocating them on first use). False on a CUDA error. *grew: some
// SM's cap went up (new workers are useful).
inline bool upload_caps_locked(DeviceState& d, PolicyState& p, bool* grew = nullptr) {
  unsigned char caps[kMaxSm];
  compute_caps_locked(d, p, caps);
  bool fresh = false;
  if (!p.caps[d.dev]) {
    if (d.spare_caps) { // the first policy on d: the bytes after the pool's first page (pool.cuh)
      p.caps[d.dev] = d.spare_caps;
      d.spare_caps = nullptr;
    } else if (cudaMalloc(&p.caps[d.dev], kCapsBytes) != cudaSuccess) {
      p.caps[d.dev] = nullptr;
      return false;
    }
    fresh = true;
  }
  if (grew) {
    *grew = false;
    for (unsigned __i = 0; __i < kMaxSm && !fresh; ++__i)
      if (caps[__i] > p.last[d.dev][__i]) *grew = true;
  }
  const PolicyRoom room = policy_room_locked(d, p);
  std::memcpy(d.staging, caps, kMaxSm);
  std::memcpy(d.staging + kMaxSm, &room, sizeof room);
  if (cudaMemcpyAsync(p.caps[d.dev], d.staging, kCapsBytes, cudaMemcpyHostToDevice, d.ctl) != cudaSuccess) return false;
  if (cudaStreamSynchronize(d.ctl) != cudaSuccess) return false;
  std::memcpy(p.last[d.dev], caps, kMaxSm);
  return true;
}

} // namespace detail

} // namespace ptb

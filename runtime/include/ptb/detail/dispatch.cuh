// ptb/detail/dispatch.cuh: whether a launch runs the twin or the original (launch mode, policies).
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <mutex>

#include "../launch_mode.cuh"
#include "../policy.cuh"
#include "controller_link.cuh"
#include "policy_state.cuh"
#include "runtime.cuh"

namespace ptb {

namespace detail {

// Automatic mode: whether a launch in `stream` with the launch's own policy `given` must run as the twin,
// i.e. whether any policy can confine or yield it: a policy given for the launch or for its stream (any
// Policy the program made, even one that allows every SM today: the program may restrict it at any
// time), or a process policy that restricts now. No lock and no runtime state unless some stream has a
// policy (then one look-up under the lock).
inline bool needs_twin(const Policy& given, cudaStream_t stream) {
  if (given) return true;
  if (process_restricts_word().load(std::memory_order_acquire)) return true;
  if (stream_policy_count().load(std::memory_order_acquire) == 0) return false;
  Runtime& __r = rt();
  std::lock_guard<std::mutex> __g(__r.__m);
  return __r.stream_policies.find(stream) != __r.stream_policies.end();
}

// Whether this launch runs the original kernel (launch mode and, in automatic mode, needs_twin). A process
// that follows a controller (PTB_QOSD, controller_link.cuh) runs twins as PTB_MODE=ptb does; its first launch
// starts the link.
inline bool runs_original(const Policy& given, cudaStream_t stream) {
  const bool linked = controller_linked();
  const int __m = mode_word().load(std::memory_order_relaxed);
  if (__m == kModeOriginal) return true;
  if (__m == kModePtb || linked) return false;
  return !needs_twin(given, stream);
}

} // namespace detail

} // namespace ptb

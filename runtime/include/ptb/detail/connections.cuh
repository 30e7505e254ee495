// ptb/detail/connections.cuh: a process confined from its environment (PTB_SMS or PTB_BLOCKS_PER_SM give a
// process policy that restricts, or PTB_QOSD links it to a controller) asks CUDA for 32 hardware work queues per device
// instead of 8 (CUDA_DEVICE_MAX_CONNECTIONS), before the program's first CUDA call; a value the user set is kept. Part
// of the header-only runtime; include <ptb/ptb.cuh>, not this file.
//
// Why: CUDA maps streams onto a device's work queues (connections, 8 unless the variable says otherwise)
// in the order they are created; streams that share a queue share its order too. A launch whose workers
// all landed outside its policy's SMs needs new workers from the monitor thread (monitor.cuh), which
// launches them in one of the runtime's resume streams. When that stream shares a queue with a user
// stream whose next kernel waits for the stranded launch (its successor in a graph or a stream), the new
// workers queue behind that kernel, and the launch has only its last worker, on an SM outside the set,
// running its tasks one range at a time (close.cuh, leave(): the spill). Measured on the H100
// (docs/results/progress-under-policy.md, "Resume workers behind a user's kernel"): a graph case of the stress test
// took 90 ms for a 0.7 ms launch chain with one queue, 0.09 of its bound with 8 or 32 queues; another took 230 ms in 3
// of 8 replays with 8 queues, none in 8 with 32. Why not always: 32 queues cost a program's first launch 31-65 us more
// than 8 (bench/programs' sobel_once, two runs), also when nothing is confined. A program that makes its policies in
// code (ptb::Policy) sets the variable itself before its first CUDA call, as test/gpu/stress/stress.cu and
// bench/colocate do (docs/user/guide.md).
#pragma once
#include <cstdlib>

#include "../smset.cuh"
#include "policy_state.cuh"

namespace ptb {

namespace detail {

constexpr const char* kConnections = "32"; // CUDA's largest value

// Initialized when the program is loaded, before main and so before its CUDA calls (CUDA reads the
// variable when it creates a device's context; a context created earlier, by another static initializer,
// keeps its own value). Confined from the environment: the process policy that PTB_SMS and
// PTB_BLOCKS_PER_SM give restricts (as the automatic launch mode reads them: process_policy_from_env).
inline const bool connections_requested = [] {
  if (std::getenv("CUDA_DEVICE_MAX_CONNECTIONS")) return false; // the user's value is kept
  SmSet sms;
  unsigned per_sm = 0;
  process_policy_from_env(sms, per_sm);
  if (!restricts(sms, per_sm) && qosd_setting().empty()) return false; // PTB_QOSD: controller_link.cuh
#if defined(_WIN32)
  return _putenv_s("CUDA_DEVICE_MAX_CONNECTIONS", kConnections) == 0;
#else
  return setenv("CUDA_DEVICE_MAX_CONNECTIONS", kConnections, 0) == 0;
#endif
}();

} // namespace detail

} // namespace ptb

// ptb/detail/dispatch.cuh: whether a launch runs the twin or the original (launch mode, policies).
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>

#include "../launch_mode.cuh"
#include "../policy.cuh"
#include "controller_link.cuh"
#include "host_stamps.cuh"
#include "last_error.cuh"
#include "policy_state.cuh"
#include "runtime.cuh"
#include "short_launches.h"

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

// Whether this launch runs the original kernel (launch mode and, in automatic mode, needs_twin). Launches on a
// device that follows a controller (PTB_QOSD, controller_link.cuh; `link`) run twins as PTB_MODE=ptb does.
inline bool runs_original(const Policy& given, cudaStream_t stream, const ControllerLink* link) {
  const int __m = mode_word().load(std::memory_order_relaxed);
  if (__m == kModeOriginal) return true;
  if (__m == kModePtb || link) return false;
  return !needs_twin(given, stream);
}
// The same on the current device; the first launch on a device starts its link.
inline bool runs_original(const Policy& given, cudaStream_t stream) {
  return runs_original(given, stream, link_here());
}

// ---- Short launches as originals (PTB_ORIGINAL_BELOW_US; short_launches.h, docs/design/short-launches.md)

// The budget in microseconds: a launch that follows a controller and is expected to end within it runs as its
// original kernel while the controller allows every SM. Unset or 0: off (every such launch runs as a twin).
inline double original_below_us() {
  static const double __v = [] {
    const char* env = std::getenv("PTB_ORIGINAL_BELOW_US");
    if (!env || !*env) return 0.0;
    char* end = nullptr;
    const double us = std::strtod(env, &end);
    if (*end != '\0' || !(us >= 0) || us > 1e9) {
      std::fprintf(stderr,
                   "ptb: PTB_ORIGINAL_BELOW_US=%s is not a number of microseconds; every launch that "
                   "follows the controller runs as a twin\n",
                   env);
      return 0.0;
    }
    return us;
  }();
  return __v;
}

struct TimedLaunch {
  const void* kernel = nullptr;
  std::uint64_t blocks = 0;
  cudaEvent_t begin = nullptr, end = nullptr;
};
struct ShortDispatch {
  std::mutex __m;
  ShortLaunches table{original_below_us()};
  std::deque<TimedLaunch> pending; // timed launches in launch order, their events not read yet
};
inline ShortDispatch& short_dispatch() {
  static ShortDispatch* __s = new ShortDispatch(); // never destroyed: its events may outlive CUDA's teardown
  return *__s;
}

// Reads the timed launches that have ended (oldest first, a few at a time) into the table. Under __m.
inline void harvest_locked(ShortDispatch& __d) {
  for (unsigned __n = 0; __n < 4 && !__d.pending.empty(); ++__n) {
    TimedLaunch& __t = __d.pending.front();
    const cudaError_t __q = cudaEventQuery(__t.end);
    if (__q == cudaErrorNotReady) break;
    float ms = 0;
    if (__q == cudaSuccess && cudaEventElapsedTime(&ms, __t.begin, __t.end) == cudaSuccess)
      __d.table.observe(__t.kernel, __t.blocks, 1000.0 * ms);
    else
      __d.table.forget(__t.kernel, __t.blocks);
    (void)cudaEventDestroy(__t.begin);
    (void)cudaEventDestroy(__t.end);
    __d.pending.pop_front();
  }
}

// One launch's dispatch: the form, and whether it is timed (the two events around it).
struct Dispatch {
  bool original = false;
  bool timed = false;
  const void* kernel = nullptr;
  std::uint64_t blocks = 0;
};

// Whether a launch that would run as a twin only because its device follows a controller (`link`) may run as
// its original when it is short: the budget is set, the mode is automatic, the controller allows every SM with
// no cap now (the link's policy does not restrict), and neither the launch nor its stream has a policy of
// its own, and the stream is not being captured (a graph replays its nodes long after this decision).
inline bool short_dispatch_applies(const Policy& given, cudaStream_t stream, const ControllerLink* link) {
  if (original_below_us() <= 0 || given || !link) return false;
  if (mode_word().load(std::memory_order_relaxed) != kModeAutomatic) return false;
  if (link->restricts_now()) return false;
  if (stream_policy_count().load(std::memory_order_acquire) != 0) {
    Runtime& __r = rt();
    std::lock_guard<std::mutex> __g(__r.__m);
    if (__r.stream_policies.find(stream) != __r.stream_policies.end()) return false;
  }
  const LastErrorGuard guard;
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  const bool capturing = cudaStreamIsCapturing(stream, &cs) != cudaSuccess || cs != cudaStreamCaptureStatusNone;
  guard.drop_ours();
  return !capturing;
}

inline Dispatch dispatch(const Policy& given, cudaStream_t stream, const void* original, dim3 grid) {
  host_stamp("dispatch");
  Dispatch __d;
  ControllerLink* const __link = link_here();
  __d.original = runs_original(given, stream, __link);
  if (__d.original || !short_dispatch_applies(given, stream, __link)) return __d;
  __d.kernel = original;
  __d.blocks = static_cast<std::uint64_t>(grid.x) * grid.y * grid.z;
  ShortDispatch& __s = short_dispatch();
  std::lock_guard<std::mutex> __g(__s.__m);
  {
    const LastErrorGuard guard;
    harvest_locked(__s);
    guard.drop_ours();
  }
  const ShortLaunches::Plan __p = __s.table.plan(original, __d.blocks);
  __d.original = __p.form == ShortLaunches::Form::original;
  __d.timed = __p.timed;
  if (__d.original) { // counted with the link's policy's launches: the controller reads BE's rate from them
    Runtime& __r = rt();
    std::lock_guard<std::mutex> __g2(__r.__m);
    ++__link->policy_state()->launches;
  }
  return __d;
}

// Times a launch the table asked for: an event before it (the constructor) and after it (finish). A launch that
// failed, or events that could not be made, are not observed. The program's last error is left as it was.
class TimedScope {
public:
  TimedScope(const Dispatch& __d, cudaStream_t stream) : d_(__d), stream_(stream) {
    if (!d_.timed) return;
    const LastErrorGuard guard;
    if (cudaEventCreate(&t_.begin) != cudaSuccess || cudaEventCreate(&t_.end) != cudaSuccess ||
        cudaEventRecord(t_.begin, stream_) != cudaSuccess)
      give_up();
    guard.drop_ours();
  }
  TimedScope(const TimedScope&) = delete;
  TimedScope& operator=(const TimedScope&) = delete;
  ~TimedScope() { finish(false); }
  void finish(bool launched) {
    if (!d_.timed || done_) return;
    done_ = true;
    if (!t_.begin) return;
    const LastErrorGuard guard;
    if (!launched || cudaEventRecord(t_.end, stream_) != cudaSuccess) {
      give_up();
    } else {
      t_.kernel = d_.kernel;
      t_.blocks = d_.blocks;
      ShortDispatch& __s = short_dispatch();
      std::lock_guard<std::mutex> __g(__s.__m);
      __s.pending.push_back(t_);
    }
    guard.drop_ours();
  }

private:
  void give_up() {
    if (t_.begin) (void)cudaEventDestroy(t_.begin);
    if (t_.end) (void)cudaEventDestroy(t_.end);
    t_.begin = t_.end = nullptr;
    ShortDispatch& __s = short_dispatch();
    std::lock_guard<std::mutex> __g(__s.__m);
    __s.table.forget(d_.kernel, d_.blocks);
  }
  Dispatch d_;
  cudaStream_t stream_;
  TimedLaunch t_;
  bool done_ = false;
};

} // namespace detail

} // namespace ptb

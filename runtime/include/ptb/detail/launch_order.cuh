// ptb/detail/launch_order.cuh: launches under one restricting policy run in the order they were made, also
// when they come from several streams: at most two at once, and one at a time after a launch that can take
// all of the policy's room (issue 10: a launch whose workers all find the policy's SMs taken by other
// streams' launches is stranded, and the hardware does not keep it waiting, so without an order it could
// wait for the other streams' whole chains).
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

namespace ptb {

namespace detail {

// Two, not one, where the first leaves room: kernels of two streams that wait for each other (a kernel
// spinning until a kernel launched after it in another stream sets a flag, as
// test/gpu/multi_stream_concurrent.cu does) still run together. CUDA does not promise that kernels of
// different streams run at the same time, but programs rely on it; one launch at a time made that program
// wait for its 1 s time-out under every policy (H100; docs/results/progress-under-policy.md). After a launch that fills
// the policy's room, the next one waits for it: beside it, it would find no room anyway, and stranded it would wait for
// the host while the launch after it took the room (two at once failed the stress test's bound so).
// So a launch needs the launches made one, two and three before it: they are remembered by their number
// n modulo 3.
constexpr unsigned kRemembered = 3;

// Per policy and device: the last three launches made under the policy while it restricted (stream and
// an event recorded after each). Touched under the runtime's lock.
struct LaunchOrder {
  struct Made {
    cudaStream_t stream = nullptr;
    cudaEvent_t done = nullptr;
    bool recorded = false; // `done` holds the end of this launch
    bool fills = false;    // it can take every place the policy allows (see fills_policy_locked)
  };
  Made made[kRemembered];
  unsigned long long n = 0; // launches made so far
};

// Before launch n in stream s: wait for launch n-1 if it fills the policy's room, and for launches n-2 and
// n-3, each where it was made in another stream. Launch n-2 itself waited for n-4 and n-5, and n-3 for
// n-5 and n-6, so launch n starts after every launch up to n-2 has ended: at most two run at once. (A
// launch stranded beside the other one can still wait longer than the two take: measured on the H100,
// docs/results/progress-under-policy.md.) Every wait points from a launch to one made before it, as every dependency in
// CUDA does, so the waits cannot close a cycle among kernels and copies (docs/results/progress-under-policy.md,
// "Launches under one policy run in turn").
inline void order_before_locked(const LaunchOrder& __o, cudaStream_t s) {
  const auto wait_for = [&](unsigned back) {
    if (__o.n < back) return;
    const LaunchOrder::Made& __m = __o.made[(__o.n - back) % kRemembered];
    if (__m.recorded && __m.stream != s) (void)cudaStreamWaitEvent(s, __m.done, 0);
  };
  if (__o.n >= 1 && __o.made[(__o.n - 1) % kRemembered].fills) wait_for(1);
  wait_for(2);
  wait_for(3);
}

// After launch n was made in s: record its end. (Launch n+3 reuses the event; no launch after it waits
// for launch n any more.)
inline void order_after_locked(LaunchOrder& __o, cudaStream_t s, bool fills) {
  LaunchOrder::Made& __m = __o.made[__o.n % kRemembered];
  ++__o.n;
  __m.stream = s;
  __m.fills = fills;
  __m.recorded = false;
  if (!__m.done && cudaEventCreateWithFlags(&__m.done, cudaEventDisableTiming) != cudaSuccess) {
    __m.done = nullptr;
    return;
  }
  __m.recorded = cudaEventRecord(__m.done, s) == cudaSuccess;
}

} // namespace detail

} // namespace ptb

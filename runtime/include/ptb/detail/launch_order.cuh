// ptb/detail/launch_order.cuh: launches under one restricting policy run one after another in the order
// they were made, also when they come from several streams (issue 10: a launch whose workers all find the
// policy's SMs taken by another stream's launch is stranded, and the hardware does not keep it waiting).
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

namespace ptb {

namespace detail {

// Per policy and device: the stream of the last launch made under the policy while it restricted, and an
// event recorded after it. Touched under the runtime's lock.
struct LaunchOrder {
  cudaStream_t last = nullptr;
  bool recorded = false;  // `done` holds the end of the last launch
  cudaEvent_t done = nullptr;
};

// Before a launch in stream s: if the last launch under the policy was made in another stream, s waits
// for it to end. Every such wait points from a launch to one made before it, as every dependency in CUDA
// does, so the waits cannot close a cycle among kernels and copies (docs/runtime.md, "Launches under one
// policy run in turn").
inline void order_before_locked(LaunchOrder& o, cudaStream_t s) {
  if (o.recorded && s != o.last) (void)cudaStreamWaitEvent(s, o.done, 0);
}

// After the launch was made in s: its end becomes what the next launch in another stream waits for. (One
// event record per launch, also while all launches come from one stream: the first launch from a second
// stream must find the end of the one before it.)
inline void order_after_locked(LaunchOrder& o, cudaStream_t s) {
  o.last = s;
  if (!o.done && cudaEventCreateWithFlags(&o.done, cudaEventDisableTiming) != cudaSuccess) {
    o.done = nullptr;
    o.recorded = false;
    return;
  }
  o.recorded = cudaEventRecord(o.done, s) == cudaSuccess;
}

}  // namespace detail

}  // namespace ptb

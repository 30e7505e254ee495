// ptb/qos/apply.cuh: what ties the QoS controllers (ptb/qos/*.h, plain C++) to a GPU: an LS request's
// latency measured on the device (RequestTimer: a cudaEvent pair per request, read without waiting) and
// an allocation applied to BE's policy (apply_to_be). It includes every controller (feedback.h,
// static_partition.h, gspace.h), so that a program includes this one header. docs/design/qos.md has the whole
// picture.
//
//   ptb::Policy be = ptb::Policy::create();            // BE's launches run under it (LaunchConfig::policy
//                                                       // or ptb::set_stream_policy)
//   ptb::qos::RequestTimer timer;  ptb::qos::LatencyLog log;
//   ptb::qos::EpochLoop loop(ctl, log, {be_progress, ptb::qos::apply_to_be(be), [&] { timer.poll(log); }}, epoch);
//   ...  timer.begin(ls_stream); <the request's launches in ls_stream>; timer.end(ls_stream);
#pragma once
#include <cuda_runtime.h>

#include <deque>
#include <functional>
#include <mutex>
#include <vector>

#include "../policy.cuh"
#include "../smset.cuh"
#include "controller.h"
#include "epoch_loop.h"
#include "feedback.h"
#include "gspace.h"
#include "static_partition.h"

namespace ptb::qos {

// BE gets SMs [ls, ls + be), LS keeps [0, ls) free of BE, [ls + be, total) stay idle. The SMs move in
// whole steps at the low end, so a step of 2 moves whole TPCs (SMs 2i and 2i+1) when `ls` stays even.
// An allocation with a shared subset (a.shared > 0, G-Space) caps BE at a.shared_cap workers on SMs
// [ls, ls + shared) and leaves its other SMs uncapped; a cap of 0 there takes those SMs out of BE's set
// (they are LS's alone). Otherwise per_sm caps BE on all its SMs. (be_placement in controller.h.)
inline void apply_allocation(const Policy& be, const Allocation& a, unsigned per_sm = 0) {
  const BePlacement p = be_placement(a, per_sm);
  be.set(p.sms, p.per_sm, p.capped);
}
inline std::function<void(const Allocation&)> apply_to_be(Policy be, unsigned per_sm = 0) {
  return [be, per_sm](const Allocation& a) { apply_allocation(be, a, per_sm); };
}

// The latency of LS requests, from the GPU's own clock: begin(stream) before a request's first launch,
// end(stream) after its last, both in the request's stream; poll(log) adds the latency (microseconds) of
// every request whose end has passed on the device and returns how many. Events are reused. Any thread
// may call begin/end; poll is meant for the epoch loop's thread (it never waits for the device).
class RequestTimer {
public:
  RequestTimer() = default;
  RequestTimer(const RequestTimer&) = delete;
  RequestTimer& operator=(const RequestTimer&) = delete;
  ~RequestTimer() {
    for (auto& p : open_) release(p);
    for (auto& p : done_) release(p);
    for (cudaEvent_t e : free_) cudaEventDestroy(e);
  }

  cudaError_t begin(cudaStream_t s) {
    std::lock_guard<std::mutex> __g(m_);
    Pair p{event(), event()};
    if (!p.a || !p.b) return cudaErrorMemoryAllocation;
    const cudaError_t e = cudaEventRecord(p.a, s);
    if (e == cudaSuccess)
      open_.push_back(p);
    else
      release(p);
    return e;
  }
  cudaError_t end(cudaStream_t s) {
    std::lock_guard<std::mutex> __g(m_);
    if (open_.empty()) return cudaErrorInvalidResourceHandle; // end without begin
    Pair p = open_.front(); // requests end in the order they began (one LS client, or per stream in order)
    open_.pop_front();
    const cudaError_t e = cudaEventRecord(p.b, s);
    if (e == cudaSuccess)
      done_.push_back(p);
    else
      release(p);
    return e;
  }
  size_t poll(LatencyLog& log) {
    std::lock_guard<std::mutex> __g(m_);
    size_t n = 0;
    while (!done_.empty()) {
      Pair p = done_.front();
      if (cudaEventQuery(p.b) != cudaSuccess) break; // not yet (cudaErrorNotReady: nothing to clear)
      float ms = 0;
      if (cudaEventElapsedTime(&ms, p.a, p.b) == cudaSuccess) {
        log.add(1000.0 * ms);
        ++n;
      }
      done_.pop_front();
      release(p);
    }
    return n;
  }

private:
  struct Pair {
    cudaEvent_t a = nullptr, b = nullptr;
  };
  cudaEvent_t event() {
    if (!free_.empty()) {
      cudaEvent_t e = free_.back();
      free_.pop_back();
      return e;
    }
    cudaEvent_t e = nullptr;
    return cudaEventCreate(&e) == cudaSuccess ? e : nullptr;
  }
  void release(const Pair& p) {
    if (p.a) free_.push_back(p.a);
    if (p.b) free_.push_back(p.b);
  }
  std::mutex m_;
  std::deque<Pair> open_, done_;
  std::vector<cudaEvent_t> free_;
};

} // namespace ptb::qos

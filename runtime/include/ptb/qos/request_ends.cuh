// ptb/qos/request_ends.cuh: the ends of latency-sensitive (LS) requests in flight, as cudaEvents recorded
// in their streams (a pool of events, reused), and when each began (for the age of the oldest). Controllers
// that act while a request is in flight use it: the request gate (request_gate.cuh) and the manager driver
// (manager_driver.cuh). Not thread-safe: the caller's lock guards it.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <vector>

namespace ptb::qos {

class RequestEnds {
public:
  using Time = std::chrono::steady_clock::time_point;

  RequestEnds() = default;
  RequestEnds(const RequestEnds&) = delete;
  RequestEnds& operator=(const RequestEnds&) = delete;
  ~RequestEnds() {
    for (cudaEvent_t e : free_) cudaEventDestroy(e);
    for (const Open& __o : open_) cudaEventDestroy(__o.event);
  }

  // A request began at `t` (optional: for oldest()). Requests are recorded in the order they began.
  void began(Time t) { unended_.push_back(t); }

  // Records the end of a request whose last launch is in `s` (the oldest one began() and not yet recorded;
  // one that did not call began() counts from now). On an error nothing is recorded and the caller counts
  // the request as finished now (a failed request must not hold anything for ever).
  cudaError_t record(cudaStream_t s) {
    Time begun = std::chrono::steady_clock::now();
    if (!unended_.empty()) {
      begun = unended_.front();
      unended_.pop_front();
    }
    cudaEvent_t e = nullptr;
    if (!free_.empty()) {
      e = free_.back();
      free_.pop_back();
    } else if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess) {
      return cudaErrorMemoryAllocation;
    }
    const cudaError_t __r = cudaEventRecord(e, s);
    if (__r != cudaSuccess) {
      free_.push_back(e);
      return __r;
    }
    open_.push_back(Open{e, begun});
    return cudaSuccess;
  }

  // How many recorded ends the device has passed since the last call. Requests of several streams finish
  // in any order, so every open event is looked at; one that reports an error (not "not ready") counts as
  // passed.
  unsigned take_passed() {
    unsigned n = 0;
    for (size_t __i = 0; __i < open_.size();) {
      if (cudaEventQuery(open_[__i].event) != cudaErrorNotReady) {
        free_.push_back(open_[__i].event);
        open_[__i] = open_.back();
        open_.pop_back();
        ++n;
      } else {
        ++__i;
      }
    }
    return n;
  }

  // When the oldest request in flight (begun and not recorded yet, or recorded and not passed) began;
  // Time::max() when none is.
  Time oldest() const {
    Time t = unended_.empty() ? Time::max() : unended_.front();
    for (const Open& __o : open_) t = std::min(t, __o.begun);
    return t;
  }

private:
  struct Open {
    cudaEvent_t event;
    Time begun;
  };
  std::vector<Open> open_;
  std::vector<cudaEvent_t> free_;
  std::deque<Time> unended_; // when the requests that began but have no end recorded yet began
};

} // namespace ptb::qos

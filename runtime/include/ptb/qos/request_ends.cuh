// ptb/qos/request_ends.cuh: the ends of latency-sensitive (LS) requests in flight, as cudaEvents recorded
// in their streams (a pool of events, reused). Policies that act while a request is in flight use it: the
// request gate (request_gate.cuh) and bench/colocate's Tacker manager. Not thread-safe: the caller's lock
// guards it.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace ptb::qos {

class RequestEnds {
public:
  RequestEnds() = default;
  RequestEnds(const RequestEnds&) = delete;
  RequestEnds& operator=(const RequestEnds&) = delete;
  ~RequestEnds() {
    for (cudaEvent_t e : free_) cudaEventDestroy(e);
    for (cudaEvent_t e : open_) cudaEventDestroy(e);
  }

  using Time = std::chrono::steady_clock::time_point;

  // Records the end of a request whose last launch is in `s` and which began at `begun` (for oldest()). On
  // an error nothing is recorded and the caller counts the request as finished now (a failed request must
  // not hold anything for ever).
  cudaError_t record(cudaStream_t s, Time begun = Time{}) {
    cudaEvent_t e = nullptr;
    if (!free_.empty()) {
      e = free_.back();
      free_.pop_back();
    } else if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess) {
      return cudaErrorMemoryAllocation;
    }
    const cudaError_t r = cudaEventRecord(e, s);
    if (r != cudaSuccess) {
      free_.push_back(e);
      return r;
    }
    open_.push_back(e);
    begun_.push_back(begun);
    return cudaSuccess;
  }

  // How many recorded ends the device has passed since the last call. Requests of several streams finish
  // in any order, so every open event is looked at; one that reports an error (not "not ready") counts as
  // passed.
  unsigned take_passed() {
    unsigned n = 0;
    for (size_t i = 0; i < open_.size();) {
      if (cudaEventQuery(open_[i]) != cudaErrorNotReady) {
        free_.push_back(open_[i]);
        open_[i] = open_.back();
        open_.pop_back();
        begun_[i] = begun_.back();
        begun_.pop_back();
        ++n;
      } else {
        ++i;
      }
    }
    return n;
  }

  // When the oldest request still open began (Time::max() when none is open).
  Time oldest() const {
    Time t = Time::max();
    for (const Time& b : begun_) t = std::min(t, b);
    return t;
  }

private:
  std::vector<cudaEvent_t> open_, free_;
  std::vector<Time> begun_;  // begun_[i]: when the request of open_[i] began
};

}  // namespace ptb::qos

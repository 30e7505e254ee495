// ptb/qos/request_gate.cuh: time-sharing between a latency-sensitive (LS) service and best-effort (BE)
// work (issue 15; docs/design/qos-request-gate.md). While at least one LS request is in flight, BE's
// policy holds `during` (default: no SM, BE pauses where it is), optionally with a cap of `during_per_sm`
// workers on each of its SMs (G-Space's caps while requests run: BE keeps a few workers beside LS); when
// the last one has finished on the device, BE gets `between` back (default: every SM, no cap). The
// spatial controllers (static partition, G-Space, feedback) cannot keep an LS service whose kernels spread
// over the whole GPU near its solo latency without taking the whole GPU from BE (bench/colocate,
// docs/results/colocate.md); the gate gives LS the whole GPU only while it has work. With a cap, BE keeps more of its
// throughput and LS's requests run slower beside it: 1.8-2x in their median beside memory- or
// tensor-bound BE, 7x beside a compute-bound one (H100: docs/results/colocate.md, runs 8 and 12).
//
//   ptb::Policy be = ptb::Policy::create();  ptb::set_stream_policy(be_stream, be);
//   ptb::qos::RequestGate gate(be);
//   // each LS request: gate.begin(); <its launches in stream s>; gate.end(s);
//
// begin() has `during` applied when it is the first request in flight (Policy::set: the runtime's lock
// and one small copy to the device), by a thread of the gate's own while the request launches; end(s)
// records an event in s, and another thread of the gate's polls the events (every `poll_us`) and applies
// `between` when the last request in flight has passed its event. BE's workers leave an SM after their current task
// (ptb::Tuning's check interval), so the first kernel of a request that finds the GPU full waits about one BE task. A
// task takes longer the more workers share its SM (a compute-bound task with 8 workers on its SM takes 8 times its time
// alone), so `between_per_sm` caps BE's workers per SM between requests: a BE kernel whose throughput saturates with a
// few blocks per SM keeps most of it, and the task a request waits for is that much shorter.
//
// Which state BE should have is decided under the gate's lock and applied (Policy::set) outside it, one
// thread at a time, newest decision last (policy_applier.cuh). So an LS request's begin() never waits for
// the poller's Policy::set of `between` (when it did, the LS client's wait in begin() had a
// p99 of 43-261 us, docs/results/colocate.md), nor for its own: the applier's thread applies `during`
// while the request launches (when begin() applied it, the wait's p99 was 32-71 us).
//
// A pause can block LS: CUDA maps streams onto a few hardware queues (CUDA_DEVICE_MAX_CONNECTIONS, default
// 8), and a BE launch paused in one of them holds every command queued behind it there, an LS request's
// included; that request then never finishes and never ends the pause (seen on the H100). So
// the gate gives BE `between` back while some request has been in flight for longer than `hold_limit_us`
// (default 20 ms), and counts it (releases()). BE's floor: the gate also gives BE `between` back when it
// has held BE for `hold_limit_us` without a break (an LS service that is never idle), so BE never waits
// longer than that. After a release the gate holds again once no request in flight is older than the
// limit and BE has had at least a tenth of it. (A release must not last until LS is idle,
// which an overloaded LS service never is: LS then lost the GPU for good; docs/results/colocate.md.)
// Set CUDA_DEVICE_MAX_CONNECTIONS=32 before the first CUDA call so that LS's streams do not share BE's
// queue (the runtime does so itself only for a process confined from its environment:
// detail/connections.cuh).
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "../policy.cuh"
#include "../smset.cuh"
#include "policy_applier.cuh"
#include "request_ends.cuh"

namespace ptb::qos {

class RequestGate {
public:
  explicit RequestGate(Policy be, SmSet during = SmSet::none(), unsigned during_per_sm = 0,
                       SmSet between = SmSet::all(), unsigned poll_us = 10, unsigned hold_limit_us = 20000,
                       unsigned between_per_sm = 0)
      : applier_(be), during_(during), between_(between), poll_(poll_us), hold_limit_(hold_limit_us),
        during_per_sm_(during_per_sm), between_per_sm_(between_per_sm) {
    poller_ = std::thread([this] { poll_loop(); });
  }
  RequestGate(const RequestGate&) = delete;
  RequestGate& operator=(const RequestGate&) = delete;
  // Waits for no request: a request still in flight keeps BE at `during` until `between` is applied here.
  ~RequestGate() {
    stop_ = true;
    poller_.join();
    {
      std::lock_guard<std::mutex> __g(m_);
      if (in_flight_ > 0 && !released_) applier_.want(between_, between_per_sm_);
    }
    applier_.apply();
  }

  // Before a request's first launch.
  void begin() {
    {
      std::lock_guard<std::mutex> __g(m_);
      const auto now = std::chrono::steady_clock::now();
      ends_.began(now);
      if (in_flight_++ == 0) {
        applier_.want(during_, during_per_sm_);
        ++yields_;
        released_ = false;
        held_since_ = now;
      }
    }
    applier_.apply_soon(); // the request launches while BE's yield goes to the device
  }
  // After the request's last launch, in its stream. On an error the request counts as finished now.
  cudaError_t end(cudaStream_t s) {
    cudaError_t __r;
    {
      std::lock_guard<std::mutex> __g(m_);
      __r = ends_.record(s);
      if (__r != cudaSuccess) finish_locked();
    }
    applier_.apply();
    return __r;
  }

  // How many times BE yielded (a first request in flight, or the gate holding again after a release), how
  // many times the hold limit gave BE its SMs back (a request or BE held too long), and requests in flight now.
  unsigned long long yields() const {
    std::lock_guard<std::mutex> __g(m_);
    return yields_;
  }
  unsigned long long releases() const {
    std::lock_guard<std::mutex> __g(m_);
    return releases_;
  }
  unsigned in_flight() const {
    std::lock_guard<std::mutex> __g(m_);
    return in_flight_;
  }

private:
  void finish_locked() {
    if (in_flight_ > 0 && --in_flight_ == 0 && !released_) applier_.want(between_, between_per_sm_);
  }
  void poll_loop() {
    while (!stop_.load(std::memory_order_relaxed)) {
      std::this_thread::sleep_for(std::chrono::microseconds(poll_));
      {
        std::lock_guard<std::mutex> __g(m_);
        for (unsigned n = ends_.take_passed(); n > 0; --n) finish_locked();
        if (in_flight_ > 0) {
          const auto now = std::chrono::steady_clock::now();
          const auto limit = std::chrono::microseconds(hold_limit_);
          const bool stuck = now - ends_.oldest() > limit;
          if (!released_ && (stuck || now - held_since_ > limit)) {
            // a request held too long (BE's launches must be able to drain: the top of this file), or BE
            // held too long (its floor)
            applier_.want(between_, between_per_sm_);
            released_ = true;
            released_at_ = now;
            ++releases_;
          } else if (released_ && !stuck && now - released_at_ > limit / 10) {
            applier_.want(during_, during_per_sm_); // the gate holds again
            released_ = false;
            held_since_ = now;
            ++yields_;
          }
        }
      }
      applier_.apply();
    }
  }

  PolicyApplier applier_;
  SmSet during_, between_;
  unsigned poll_, hold_limit_;
  unsigned during_per_sm_;  // cap on BE's workers per SM of `during` (0: none)
  unsigned between_per_sm_; // cap on BE's workers per SM of `between` (0: none): shorter BE tasks in flight
  mutable std::mutex m_;
  unsigned in_flight_ = 0;
  unsigned long long yields_ = 0, releases_ = 0;
  bool released_ = false;                          // the hold limit gave BE `between` back meanwhile
  RequestEnds::Time held_since_{}, released_at_{}; // when the gate last applied `during`, and `between` by the limit
  RequestEnds ends_;
  std::atomic<bool> stop_{false};
  std::thread poller_;
};

} // namespace ptb::qos

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
//   ptb::qos::RequestGate gate(be);  // or with ptb::qos::RequestGateOptions (below): during, caps, limits
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
// included; that request then never finishes and never ends the pause (seen on the H100). So the gate gives BE
// `between` back when some request has been in flight for longer than `stuck_limit_us` (default 20 ms) and BE
// held as long, for a tenth of that limit, the request still in flight or not. BE's floor: the gate also gives BE
// `between` back when it has held BE for `hold_limit_us` (default 200 ms) without a break (an LS service that is
// never idle), for a tenth of that limit. Both count in releases(). `between_after_us`: BE gets `between` only
// once LS has stayed idle that long (0: at once), so that requests which follow one another closely are one
// hold. The decision is ptb-qosd's (qos/gate_state.h: GateState; why each rule: docs/design/qos-request-gate.md);
// here the age of the oldest request in flight stands for "no progress", as the gate sees requests, not their
// kernels. Set CUDA_DEVICE_MAX_CONNECTIONS=32 before the first CUDA call so that LS's streams do not share BE's
// queue (the runtime does so itself only for a process confined from its environment: detail/connections.cuh).
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "../policy.cuh"
#include "../smset.cuh"
#include "gate_state.h"
#include "policy_applier.cuh"
#include "request_ends.cuh"

namespace ptb::qos {

// What BE has while requests are in flight and between them, and the gate's limits (request_gate.cuh's top).
struct RequestGateOptions {
  SmSet during = SmSet::none();    // BE's SMs while a request is in flight
  unsigned during_per_sm = 0;      // cap on BE's workers per SM of `during` (0: none)
  SmSet between = SmSet::all();    // BE's SMs between requests
  unsigned between_per_sm = 0;     // cap on BE's workers per SM of `between` (0: none): shorter BE tasks in flight
  unsigned poll_us = 10;           // how often the gate looks at the requests' ends
  unsigned stuck_limit_us = 20000; // a request in flight longer than this gives BE `between` (a shared queue)
  unsigned hold_limit_us = 200000; // BE held longer than this without a break gets `between` (BE's floor)
  unsigned between_after_us = 0;   // BE gets `between` once LS has been idle this long (0: at once)
};

class RequestGate {
public:
  explicit RequestGate(Policy __be, RequestGateOptions __o = {})
      : applier_(__be), o_(__o),
        state_(to_ns(__o.stuck_limit_us), to_ns(__o.hold_limit_us), to_ns(__o.between_after_us)) {
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
      if (state_.want() == GateState::Want::during) applier_.want(o_.between, o_.between_per_sm);
    }
    applier_.apply();
  }

  // Before a request's first launch.
  void begin() {
    {
      std::lock_guard<std::mutex> __g(m_);
      const auto __now = std::chrono::steady_clock::now();
      ends_.began(__now);
      ++in_flight_;
      decide_locked(__now);
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
  // many times a limit gave BE its SMs back (a request in flight or BE held too long), and requests in flight now.
  unsigned long long yields() const {
    std::lock_guard<std::mutex> __g(m_);
    return state_.yields();
  }
  unsigned long long releases() const {
    std::lock_guard<std::mutex> __g(m_);
    return state_.releases();
  }
  unsigned in_flight() const {
    std::lock_guard<std::mutex> __g(m_);
    return in_flight_;
  }

private:
  static std::uint64_t to_ns(unsigned __us) { return std::uint64_t(__us) * 1000u; }
  static std::uint64_t to_ns(RequestEnds::Time __t) {
    return std::uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(__t.time_since_epoch()).count());
  }
  // GateState's decision for now; BE's policy changes when the decision does.
  void decide_locked(RequestEnds::Time __now) {
    std::uint64_t __stuck = 0; // the age of the oldest request in flight
    if (in_flight_ > 0) {
      const RequestEnds::Time __oldest = ends_.oldest();
      if (__oldest < __now) __stuck = to_ns(__now) - to_ns(__oldest);
    }
    const GateState::Want __before = state_.want();
    const GateState::Want __w = state_.step(to_ns(__now), in_flight_ > 0, __stuck);
    if (__w == __before) return;
    if (__w == GateState::Want::during)
      applier_.want(o_.during, o_.during_per_sm);
    else
      applier_.want(o_.between, o_.between_per_sm);
  }
  void finish_locked() {
    if (in_flight_ > 0) --in_flight_;
    decide_locked(std::chrono::steady_clock::now());
  }
  void poll_loop() {
    while (!stop_.load(std::memory_order_relaxed)) {
      std::this_thread::sleep_for(std::chrono::microseconds(o_.poll_us));
      {
        std::lock_guard<std::mutex> __g(m_);
        for (unsigned __n = ends_.take_passed(); __n > 0; --__n)
          if (in_flight_ > 0) --in_flight_;
        decide_locked(std::chrono::steady_clock::now());
      }
      applier_.apply();
    }
  }

  PolicyApplier applier_;
  const RequestGateOptions o_;
  mutable std::mutex m_;
  unsigned in_flight_ = 0;
  GateState state_; // the decision (ptb-qosd's): holding, released by a limit, or BE between requests
  RequestEnds ends_;
  std::atomic<bool> stop_{false};
  std::thread poller_;
};

} // namespace ptb::qos

// ptb/qos/manager_driver.cuh: the GPU side of Tacker's fuse-or-reorder manager (manager.h; docs/design/qos-manager.md):
// a thread that launches two BE jobs (BeJobs) as FuseOrReorderManager decides, times the
// launches to teach its models, and yields BE when an LS request begins that the launches in flight would
// delay past its target. bench/colocate's `manager` configurations run it.
//
// One dispatcher thread keeps up to two BE launches in flight (kDepth), in BE's stream (under BE's
// ptb::Policy: the jobs' launches are twins, the fused launch is fuse-kernels' PTB kernel), so the GPU does
// not wait for the host between launches (with one launch in flight, the manager's BE was 0.31-0.32 of
// solo on bench/colocate's pair-memory against the gate's 0.40-0.41: launches of 12-400 us, and a host
// that saw each end up to ~60 us late). It times each launch with a cudaEvent pair; the times teach the
// manager's models (launches that were yielded are not observed), after the next launch has been made (a
// refit takes up to a few ms of host time). Before each launch it asks decide() with the headroom:
// infinite while no LS request is in flight, else the target less the LS request's expected time less how
// late it already is, less what the launches in flight are predicted still to take. When an LS request
// begins (begin(), from the LS client) and the launches in flight cannot end within the headroom
// (should_yield: a long or a late launch), BE's policy is set to no SM (the runtime's yield) until the last
// LS request in flight has finished on the device (end(s)); then BE gets every SM back.
//
//   ptb::qos::ManagerDriver driver(jobs, be_stream, be_policy, {target_us, ls_us});
//   driver.start();  // each LS request: driver.begin(); <its launches in stream s>; driver.end(s);
//   driver.stop();
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

#include "../policy.cuh"
#include "../smset.cuh"
#include "manager.h"
#include "policy_applier.cuh"
#include "request_ends.cuh"

namespace ptb::qos {

// The BE work a ManagerDriver launches: two jobs, each a chain of launches that must run in its order.
// Called from the driver's dispatcher thread only (and never at once).
class BeJobs {
public:
  virtual ~BeJobs() = default;
  // The task count of the job's next launch.
  virtual double next_tasks(unsigned job) = 0;
  // The job's next launch, into `s`; the launch after it is next then.
  virtual void launch_next(unsigned job, cudaStream_t s) = 0;
  // Both jobs' next launches as one fused kernel, into `s`; false when the originals ran instead.
  virtual bool launch_next_fused(cudaStream_t s) = 0;
};

struct ManagerDriverConfig {
  double target_us = 0; // the LS p99 target
  double ls_us = 0;     // an LS request's expected time (e.g. its solo p99 at this load)
  // Launches that fit an LS request's headroom run while it is in flight (Tacker's order); false: BE holds
  // while LS is in flight and yields at every request.
  bool reorder = true;
  unsigned between_per_sm = 0; // BE's workers per SM while it is not yielded (0: no cap)
  ManagerConfig manager;       // the decisions' (fuse = false: the jobs' launches one by one)
  // A CUDA call that failed (what, the error); empty: a line on stderr and std::abort().
  std::function<void(const char*, cudaError_t)> on_error;
};

class ManagerDriver {
public:
  using Clock = std::chrono::steady_clock;
  static constexpr unsigned kDepth = 2; // BE launches in flight at most

  struct Stats {
    unsigned long long singles[2] = {0, 0}, fused = 0, fused_fallbacks = 0, holds = 0, yields = 0, late_yields = 0;
    unsigned long long launches() const { return singles[0] + singles[1] + fused + fused_fallbacks; }
  };

  ManagerDriver(BeJobs& jobs, cudaStream_t s, Policy be, ManagerDriverConfig c)
      : jobs_(jobs), s_(s), applier_(be), target_ns_(1e3 * c.target_us), ls_ns_(1e3 * c.ls_us), reorder_(c.reorder),
        between_per_sm_(c.between_per_sm), on_error_(std::move(c.on_error)),
        mgr_(DurationModel(), DurationModel(), c.manager) {
    for (InFlight& __l : q_) {
      check(cudaEventCreate(&__l.start), "cudaEventCreate");
      check(cudaEventCreate(&__l.end), "cudaEventCreate");
    }
  }
  ~ManagerDriver() {
    stop();
    for (InFlight& __l : q_) {
      cudaEventDestroy(__l.start);
      cudaEventDestroy(__l.end);
    }
  }
  ManagerDriver(const ManagerDriver&) = delete;
  ManagerDriver& operator=(const ManagerDriver&) = delete;

  // Learning goes on across start/stop: the models of one run serve the next.
  void start() {
    stop_ = false;
    applier_.want(SmSet::all(), between_per_sm_);
    applier_.apply();
    thread_ = std::thread([this] { loop(); });
  }
  // The launch in flight ends (on every SM) before this returns.
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    applier_.want(SmSet::all());
    applier_.apply();
    check(cudaStreamSynchronize(s_), "cudaStreamSynchronize");
  }

  // Before an LS request's first launch.
  void begin() {
    const ApplyAtExit __applied{applier_, true}; // after the lock is let go, on the applier's thread
    std::lock_guard<std::mutex> __g(m_);
    const auto now = Clock::now();
    if (in_flight_++ == 0) oldest_ = now;
    if (count_ > 0 && !yielded_ && (!reorder_ || should_yield_locked(now, target_ns_ - ls_ns_))) yield_locked();
  }
  // After the request's last launch, in its stream. On an error the request counts as finished now.
  cudaError_t end(cudaStream_t s) {
    const ApplyAtExit __applied{applier_};
    std::lock_guard<std::mutex> __g(m_);
    const cudaError_t __r = ends_.record(s);
    if (__r != cudaSuccess) finish_locked();
    return __r;
  }

  Stats stats() const {
    std::lock_guard<std::mutex> __g(m_);
    return stats_;
  }
  const FuseOrReorderManager& manager() const { return mgr_; }

private:
  static double ns_since(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::nano>(b - a).count();
  }
  void check(cudaError_t e, const char* what) const {
    if (e == cudaSuccess) return;
    if (on_error_) return on_error_(what, e);
    std::fprintf(stderr, "ptb::qos: manager driver: %s: %s\n", what, cudaGetErrorString(e));
    std::abort();
  }
  // BE's policy is decided under m_ and applied after m_ is let go (policy_applier.cuh): an LS request's
  // begin() never waits for the dispatcher's Policy::set (when it did, as the request gate's once did, the
  // host-lag p99 was 347 us under bench/colocate's manager-hold against the gate's 141 us:
  // docs/results/colocate.md).
  struct ApplyAtExit {
    PolicyApplier& a;
    bool soon = false; // on the applier's own thread (begin(): the request launches meanwhile)
    ~ApplyAtExit() { soon ? a.apply_soon() : a.apply(); }
  };
  // The launches in flight, oldest first (q_[(head_ + i) % kDepth], i < count_).
  struct InFlight {
    cudaEvent_t start = nullptr, end = nullptr;
    BeAction action = BeAction::hold;
    unsigned job = 0;
    double tasks[2] = {0, 0}, predicted = 0;
    Clock::time_point started_at{}; // when it was launched, or when the one before it was seen to end
    bool yielded = false, as_planned = true;
  };
  InFlight& front() { return q_[head_]; }
  // The launches in flight, predicted from their starts (the oldest one has run since its started_at, the
  // others have not begun), ns.
  double predicted_in_flight_locked() const {
    double predicted = 0;
    for (unsigned __i = 0; __i < count_; ++__i) predicted += q_[(head_ + __i) % kDepth].predicted;
    return predicted;
  }
  // Whether the launches in flight cannot end within `headroom` (ns).
  bool should_yield_locked(Clock::time_point now, double headroom) const {
    return mgr_.should_yield(ns_since(q_[head_].started_at, now), predicted_in_flight_locked(), headroom);
  }
  // What the launches in flight are predicted still to take, ns.
  double remaining_locked(Clock::time_point now) const {
    const double left = predicted_in_flight_locked() - ns_since(q_[head_].started_at, now);
    return left > 0 ? left : 0;
  }
  // The runtime's yield: BE's policy to no SM until the last LS request in flight has finished.
  void yield_locked() {
    applier_.want(SmSet::none());
    yielded_ = true;
    for (InFlight& __l : q_) __l.yielded = true; // the launches in flight: their times are not learned
    ++stats_.yields;
  }
  void finish_locked() {
    if (in_flight_ > 0 && --in_flight_ == 0 && yielded_) {
      applier_.want(SmSet::all(), between_per_sm_);
      yielded_ = false;
    }
  }
  // What is left of the oldest LS request's target after its expected time and its delay so far.
  double headroom_locked(Clock::time_point now) const {
    if (in_flight_ == 0) return FuseOrReorderManager::kIdle;
    const double elapsed = ns_since(oldest_, now);
    const double h = target_ns_ - (elapsed > ls_ns_ ? elapsed : ls_ns_);
    return h > 0 ? h : 0;
  }
  void loop() {
    while (!stop_.load(std::memory_order_relaxed)) {
      if (step()) continue;
      learn(); // a launch that ended in a round that made none
      std::this_thread::sleep_for(std::chrono::microseconds(2));
    }
  }
  // One round; true when it launched (the next round comes at once, to fill the second place). The lock
  // is held only to read and write the state begin() shares; CUDA launches and the models' refits (up to
  // a few ms for 64 samples) run outside it, and a launch's time is learned after the next launch has been
  // made, while that one runs.
  bool step() {
    const ApplyAtExit __applied{applier_};
    auto now = Clock::now();
    // whether the oldest launch in flight has ended, asked before the lock (q_ is this thread's to change)
    const bool ended = count_ > 0 && cudaEventQuery(front().end) != cudaErrorNotReady;
    {
      std::lock_guard<std::mutex> __g(m_);
      for (unsigned __n = ends_.take_passed(); __n > 0; --__n) { // LS requests that finished on the device
        finish_locked();
        if (in_flight_ > 0) oldest_ = now; // the next request in flight: its delay is not known, count from now
      }
      if (ended) {
        InFlight& f = front();
        float ms = 0;
        check(cudaEventElapsedTime(&ms, f.start, f.end), "cudaEventElapsedTime");
        if (!f.yielded && f.as_planned && !learn_) {
          learn_ = true;
          learn_action_ = f.action;
          learn_job_ = f.job;
          learn_tasks_[0] = f.tasks[0];
          learn_tasks_[1] = f.tasks[1];
          learn_ns_ = 1e6 * ms;
        }
        head_ = (head_ + 1) % kDepth;
        --count_;
        if (count_ > 0) front().started_at = now;
      }
      // a late launch while an LS request waits: the prediction was wrong, take the GPU back
      if (count_ > 0 && in_flight_ > 0 && !yielded_ && should_yield_locked(now, headroom_locked(now))) {
        yield_locked();
        ++stats_.late_yields;
      }
      if (yielded_ || count_ == kDepth) return false; // BE paused for LS, or two launches queued
      if (!reorder_ && in_flight_ > 0) {
        ++holds_;
        return false;
      }
      headroom_ = headroom_locked(now);
      if (headroom_ != FuseOrReorderManager::kIdle && count_ > 0) {
        const double left = headroom_ - remaining_locked(now); // the next launch begins after those in flight
        headroom_ = left > 0 ? left : 0;
      }
    }
    const BeHead heads[2] = {{true, jobs_.next_tasks(0)}, {true, jobs_.next_tasks(1)}};
    const BeDecision d = mgr_.decide(heads, headroom_);
    if (d.action == BeAction::hold) {
      ++holds_;
      learn();
      return false;
    }
    InFlight& __l = q_[(head_ + count_) % kDepth]; // this thread's alone until count_ covers it
    check(cudaEventRecord(__l.start, s_), "cudaEventRecord");
    bool as_planned = true;
    if (d.action == BeAction::fused)
      as_planned = jobs_.launch_next_fused(s_);
    else
      jobs_.launch_next(d.job, s_);
    check(cudaEventRecord(__l.end, s_), "cudaEventRecord");
    {
      std::lock_guard<std::mutex> __g(m_);
      if (d.action == BeAction::fused)
        ++(as_planned ? stats_.fused : stats_.fused_fallbacks);
      else
        ++stats_.singles[d.job];
      stats_.holds = holds_;
      __l.action = d.action;
      __l.job = d.job;
      __l.tasks[0] = heads[0].tasks;
      __l.tasks[1] = heads[1].tasks;
      __l.predicted = d.predicted_ns;
      __l.yielded = yielded_; // made while BE was paused (an LS request began meanwhile): its time is not learned
      __l.as_planned = as_planned;
      __l.started_at = Clock::now();
      ++count_;
      // an LS request that began since the decision: the launches must fit what is left of its headroom
      if (in_flight_ > 0 && !yielded_ &&
          (!reorder_ || should_yield_locked(__l.started_at, headroom_locked(__l.started_at)))) {
        yield_locked();
      }
    }
    learn();
    return true;
  }
  // The last launch's time, to the models (dispatcher thread only, no lock: begin() reads no model).
  void learn() {
    if (!learn_) return;
    learn_ = false;
    if (learn_action_ == BeAction::fused)
      mgr_.observe_fused(learn_tasks_[0], learn_tasks_[1], learn_ns_);
    else
      mgr_.observe_single(learn_job_, learn_tasks_[learn_job_], learn_ns_);
  }

  BeJobs& jobs_;
  cudaStream_t s_;
  PolicyApplier applier_; // BE's policy
  double target_ns_, ls_ns_;
  bool reorder_;
  unsigned between_per_sm_;
  std::function<void(const char*, cudaError_t)> on_error_;
  FuseOrReorderManager mgr_;
  mutable std::mutex m_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  // LS
  unsigned in_flight_ = 0;
  Clock::time_point oldest_{};
  RequestEnds ends_;
  bool yielded_ = false;
  // BE: the launches in flight (read by begin() under m_; changed by the dispatcher under m_)
  InFlight q_[kDepth];
  unsigned head_ = 0, count_ = 0;
  Stats stats_;
  // the dispatcher thread's own
  double headroom_ = 0;
  unsigned long long holds_ = 0;
  bool learn_ = false; // a finished launch whose time the models have not yet had
  BeAction learn_action_ = BeAction::hold;
  unsigned learn_job_ = 0;
  double learn_tasks_[2] = {0, 0}, learn_ns_ = 0;
};

} // namespace ptb::qos

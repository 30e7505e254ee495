// bench/colocate/be_manager.h: the `manager` configuration: ptb::qos::FuseOrReorderManager (Tacker's
// fuse-or-reorder manager, runtime/include/ptb/qos/manager.h) driving the pair's two BE jobs (BePair) beside
// the LS service. Host code on the CUDA runtime; the decisions are the header's.
//
// One dispatcher thread keeps at most one BE launch in flight, in BE's stream (under BE's ptb::Policy: the
// jobs' launches are twins, the fused launch is fuse-kernels' PTB kernel), and times each with a cudaEvent
// pair; the times teach the manager's models (launches that were yielded are not observed), after the
// next launch has been made (a refit takes up to a few ms of host time). Before each
// launch it asks decide() with the headroom: infinite while no LS request is in flight, else the target
// less the LS request's expected time (its solo p99) less how late it already is. When an LS request
// begins (RequestHooks::begin, from the LS client) and the launch in flight cannot end within the
// headroom (should_yield: a long or a late launch), BE's policy is set to no SM (the runtime's yield) until
// the last LS request in flight has finished on the device; then BE gets every SM back.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <ptb/ptb.cuh>
#include <ptb/qos/manager.h>
#include <ptb/qos/policy_applier.cuh>
#include <ptb/qos/request_ends.cuh>

#include "be_programs.h"
#include "ls_client.h"
#include "util.h"

namespace colo {

class BeManager : public RequestHooks {
 public:
  // target_us: the LS p99 target; ls_us: an LS request's expected time (its solo p99 at this load).
  // reorder: launches that fit an LS request's headroom run while it is in flight (Tacker's order); false
  // (the `manager-hold` configuration): BE holds while LS is in flight and yields at every request.
  // between_per_sm: BE's workers per SM while it is not yielded (0: no cap; a `-bK` configuration).
  BeManager(BePair& pair, cudaStream_t s, ptb::Policy be, unsigned* seq, double target_us, double ls_us, bool reorder,
            unsigned between_per_sm = 0)
      : pair_(pair),
        s_(s),
        applier_(be),
        seq_(seq),
        target_ns_(1e3 * target_us),
        ls_ns_(1e3 * ls_us),
        reorder_(reorder),
        between_per_sm_(between_per_sm) {
    CK(cudaEventCreate(&start_));
    CK(cudaEventCreate(&end_));
  }
  ~BeManager() override {
    stop();
    cudaEventDestroy(start_);
    cudaEventDestroy(end_);
  }
  BeManager(const BeManager&) = delete;
  BeManager& operator=(const BeManager&) = delete;

  // Learning goes on across start/stop: the models of one run serve the next.
  void start() {
    stop_ = false;
    for (unsigned j = 0; j < 2; ++j) next_[j] = ++*seq_;
    applier_.want(ptb::SmSet::all(), between_per_sm_);
    applier_.apply();
    th_ = std::thread([this] { loop(); });
  }
  // The launch in flight ends (on every SM) before this returns.
  void stop() {
    stop_ = true;
    if (th_.joinable()) th_.join();
    applier_.want(ptb::SmSet::all());
    applier_.apply();
    CK(cudaStreamSynchronize(s_));
  }

  void begin() override {
    const ApplyAtExit applied{applier_, true};  // after the lock is let go, on the applier's thread
    std::lock_guard<std::mutex> g(m_);
    const auto now = Clock::now();
    if (in_flight_++ == 0) oldest_ = now;
    if (running_ && !yielded_ &&
        (!reorder_ || mgr_.should_yield(ns_since(launched_at_, now), predicted_, target_ns_ - ls_ns_))) {
      yield_locked();
    }
  }
  cudaError_t end(cudaStream_t s) override {
    const ApplyAtExit applied{applier_};
    std::lock_guard<std::mutex> g(m_);
    const cudaError_t r = ends_.record(s);
    if (r != cudaSuccess) finish_locked();
    return r;
  }

  struct Stats {
    unsigned long long singles[2] = {0, 0}, fused = 0, fused_fallbacks = 0, holds = 0, yields = 0, late_yields = 0;
    unsigned long long launches() const { return singles[0] + singles[1] + fused + fused_fallbacks; }
  };
  Stats stats() const {
    std::lock_guard<std::mutex> g(m_);
    return stats_;
  }
  const ptb::qos::FuseOrReorderManager& manager() const { return mgr_; }
  std::string summary() const {
    const Stats s = stats();
    char b[400];
    std::snprintf(b, sizeof b,
                  "manager: %llu launches (wmma %llu, compute %llu, fused %llu [%s], fused that ran the originals %llu), "
                  "holds %llu, yields %llu (late %llu); models: wmma loo %.3f, compute loo %.3f, fused %s (loo %.3f, %zu samples)",
                  s.launches(), s.singles[0], s.singles[1], s.fused, pair_.fused_label().c_str(), s.fused_fallbacks,
                  s.holds, s.yields, s.late_yields, mgr_.job_model(0).confidence().loo_error,
                  mgr_.job_model(1).confidence().loo_error, mgr_.fused_trusted() ? "trusted" : "not trusted",
                  mgr_.fused_model().loo_error(), mgr_.fused_model().samples());
    return b;
  }

 private:
  static double ns_since(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::nano>(b - a).count();
  }
  // BE's policy is decided under m_ and applied after m_ is let go (ptb/qos/policy_applier.cuh): an LS
  // request's begin() never waits for the dispatcher's Policy::set (it did until 2026-11-25, as the
  // request gate's did until 2026-11-24: bench/colocate run 2 of 2026-11-25, host-lag p99 347 us under
  // manager-hold against the gate's 141 us).
  struct ApplyAtExit {
    ptb::qos::PolicyApplier& a;
    bool soon = false;  // on the applier's own thread (begin(): the request launches meanwhile)
    ~ApplyAtExit() { soon ? a.apply_soon() : a.apply(); }
  };
  // The runtime's yield: BE's policy to no SM until the last LS request in flight has finished.
  void yield_locked() {
    applier_.want(ptb::SmSet::none());
    yielded_ = running_yielded_ = true;
    ++stats_.yields;
  }
  void finish_locked() {
    if (in_flight_ > 0 && --in_flight_ == 0 && yielded_) {
      applier_.want(ptb::SmSet::all(), between_per_sm_);
      yielded_ = false;
    }
  }
  // What is left of the oldest LS request's target after its expected time and its delay so far.
  double headroom_locked(Clock::time_point now) const {
    if (in_flight_ == 0) return ptb::qos::FuseOrReorderManager::kIdle;
    const double elapsed = ns_since(oldest_, now);
    const double h = target_ns_ - (elapsed > ls_ns_ ? elapsed : ls_ns_);
    return h > 0 ? h : 0;
  }
  void loop() {
    while (!stop_.load(std::memory_order_relaxed)) {
      step();
      std::this_thread::sleep_for(std::chrono::microseconds(2));
    }
  }
  // One round. The lock is held only to read and write the state begin() shares; CUDA launches and the
  // models' refits (up to a few ms for 64 samples) run outside it, and a launch's time is learned after
  // the next launch has been made, while that one runs.
  void step() {
    const ApplyAtExit applied{applier_};
    auto now = Clock::now();
    // whether the launch in flight has ended, asked before the lock (running_ is this thread's to write)
    const bool ended = running_ && cudaEventQuery(end_) != cudaErrorNotReady;
    {
      std::lock_guard<std::mutex> g(m_);
      for (unsigned n = ends_.take_passed(); n > 0; --n) {  // LS requests that finished on the device
        finish_locked();
        if (in_flight_ > 0) oldest_ = now;  // the next request in flight: its delay is not known, count from now
      }
      if (running_) {
        if (!ended) {
          // a late launch while an LS request waits: the prediction was wrong, take the GPU back
          if (in_flight_ > 0 && !yielded_ &&
              mgr_.should_yield(ns_since(launched_at_, now), predicted_, headroom_locked(now))) {
            yield_locked();
            ++stats_.late_yields;
          }
          return;
        }
        running_ = false;
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, start_, end_));
        if (!running_yielded_ && ran_as_planned_) {
          learn_ = true;
          learn_action_ = running_action_;
          learn_job_ = running_job_;
          learn_tasks_[0] = tasks_[0];
          learn_tasks_[1] = tasks_[1];
          learn_ns_ = 1e6 * ms;
        }
      }
      if (yielded_) return;  // BE is paused for LS: nothing new until it is back
      if (!reorder_ && in_flight_ > 0) {
        ++holds_;
        return;
      }
      headroom_ = headroom_locked(now);
    }
    const ptb::qos::BeHead heads[2] = {{true, double(pair_.job_tasks(0, next_[0]))},
                                       {true, double(pair_.job_tasks(1, next_[1]))}};
    const ptb::qos::BeDecision d = mgr_.decide(heads, headroom_);
    if (d.action == ptb::qos::BeAction::hold) {
      ++holds_;
      learn();
      return;
    }
    CK(cudaEventRecord(start_, s_));
    bool as_planned = true;
    if (d.action == ptb::qos::BeAction::fused) {
      as_planned = pair_.launch_fused(s_, next_[0], next_[1]);
      next_[0] = ++*seq_;
      next_[1] = ++*seq_;
    } else {
      pair_.launch_job(d.job, s_, next_[d.job]);
      next_[d.job] = ++*seq_;
    }
    CK(cudaGetLastError());
    CK(cudaEventRecord(end_, s_));
    {
      std::lock_guard<std::mutex> g(m_);
      if (d.action == ptb::qos::BeAction::fused) ++(as_planned ? stats_.fused : stats_.fused_fallbacks);
      else ++stats_.singles[d.job];
      stats_.holds = holds_;
      running_ = true;
      running_yielded_ = false;
      ran_as_planned_ = as_planned;
      running_action_ = d.action;
      running_job_ = d.job;
      tasks_[0] = heads[0].tasks;
      tasks_[1] = heads[1].tasks;
      predicted_ = d.predicted_ns;
      launched_at_ = Clock::now();
      // an LS request that began since the decision: the launch must fit what is left of its headroom
      if (in_flight_ > 0 && (!reorder_ || mgr_.should_yield(0, predicted_, headroom_locked(launched_at_)))) {
        yield_locked();
      }
    }
    learn();
  }
  // The last launch's time, to the models (dispatcher thread only, no lock: begin() reads no model).
  void learn() {
    if (!learn_) return;
    learn_ = false;
    if (learn_action_ == ptb::qos::BeAction::fused) mgr_.observe_fused(learn_tasks_[0], learn_tasks_[1], learn_ns_);
    else mgr_.observe_single(learn_job_, learn_tasks_[learn_job_], learn_ns_);
  }

  BePair& pair_;
  cudaStream_t s_;
  ptb::qos::PolicyApplier applier_;  // BE's policy
  unsigned* seq_;
  double target_ns_, ls_ns_;
  bool reorder_;
  unsigned between_per_sm_;
  ptb::qos::FuseOrReorderManager mgr_;
  mutable std::mutex m_;
  std::thread th_;
  std::atomic<bool> stop_{false};
  cudaEvent_t start_ = nullptr, end_ = nullptr;
  // LS
  unsigned in_flight_ = 0;
  Clock::time_point oldest_{};
  ptb::qos::RequestEnds ends_;
  bool yielded_ = false;
  // BE: the launch in flight (shared with begin(), under m_)
  bool running_ = false, running_yielded_ = false, ran_as_planned_ = true;
  ptb::qos::BeAction running_action_ = ptb::qos::BeAction::hold;
  unsigned running_job_ = 0;
  double tasks_[2] = {0, 0}, predicted_ = 0;
  Clock::time_point launched_at_{};
  Stats stats_;
  // the dispatcher thread's own
  unsigned next_[2] = {0, 0};  // each job's next launch (its sequence number)
  double headroom_ = 0;
  unsigned long long holds_ = 0;
  bool learn_ = false;  // a finished launch whose time the models have not yet had
  ptb::qos::BeAction learn_action_ = ptb::qos::BeAction::hold;
  unsigned learn_job_ = 0;
  double learn_tasks_[2] = {0, 0}, learn_ns_ = 0;
};

}  // namespace colo

// bench/colocate/be_manager.h: the `manager` configuration: ptb::qos::FuseOrReorderManager (Tacker's
// fuse-or-reorder manager, runtime/include/ptb/qos/manager.h) driving the pair's two BE jobs (BePair) beside
// the LS service. Host code on the CUDA runtime; the decisions are the header's.
//
// One dispatcher thread keeps up to two BE launches in flight (kDepth), in BE's stream (under BE's
// ptb::Policy: the jobs' launches are twins, the fused launch is fuse-kernels' PTB kernel), as the feeder of
// the other configurations does, so the GPU does not wait for the host between launches (with one launch
// in flight, the manager's BE was 0.31-0.32 of solo on pair-memory against the gate's
// 0.40-0.41: launches of 12-400 us, and a host that saw each end up to ~60 us late). It times each launch
// with a cudaEvent pair; the times teach the manager's models (launches that were yielded are not
// observed), after the next launch has been made (a refit takes up to a few ms of host time). Before each
// launch it asks decide() with the headroom: infinite while no LS request is in flight, else the target
// less the LS request's expected time (its solo p99) less how late it already is, less what the launches
// in flight are predicted still to take. When an LS request begins (RequestHooks::begin, from the LS
// client) and the launches in flight cannot end within the headroom (should_yield: a long or a late
// launch), BE's policy is set to no SM (the runtime's yield) until the last LS request in flight has
// finished on the device; then BE gets every SM back.
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
  // fuse = false (`manager-hold-unfused`): the jobs' launches one by one, never the fused kernel.
  BeManager(BePair& pair, cudaStream_t s, ptb::Policy be, unsigned* seq, double target_us, double ls_us, bool reorder,
            unsigned between_per_sm = 0, bool fuse = true)
      : pair_(pair),
        s_(s),
        applier_(be),
        seq_(seq),
        target_ns_(1e3 * target_us),
        ls_ns_(1e3 * ls_us),
        reorder_(reorder),
        between_per_sm_(between_per_sm),
        mgr_(ptb::qos::DurationModel(), ptb::qos::DurationModel(), config(fuse)) {
    for (Launch& l : q_) {
      CK(cudaEventCreate(&l.start));
      CK(cudaEventCreate(&l.end));
    }
  }
  ~BeManager() override {
    stop();
    for (Launch& l : q_) {
      cudaEventDestroy(l.start);
      cudaEventDestroy(l.end);
    }
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
    if (count_ > 0 && !yielded_ && (!reorder_ || should_yield_locked(now, target_ns_ - ls_ns_))) yield_locked();
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
    const char *j0 = pair_.job_name(0), *j1 = pair_.job_name(1);
    char b[480];
    std::snprintf(b, sizeof b,
                  "manager: %llu launches (%s %llu, %s %llu, fused %llu [%s], fused that ran the originals %llu), "
                  "holds %llu, yields %llu (late %llu); models: %s loo %.3f, %s loo %.3f, fused %s (loo %.3f, %zu samples)",
                  s.launches(), j0, s.singles[0], j1, s.singles[1], s.fused, pair_.fused_label().c_str(),
                  s.fused_fallbacks, s.holds, s.yields, s.late_yields, j0, mgr_.job_model(0).confidence().loo_error, j1,
                  mgr_.job_model(1).confidence().loo_error, mgr_.fused_trusted() ? "trusted" : "not trusted",
                  mgr_.fused_model().loo_error(), mgr_.fused_model().samples());
    return b;
  }

 private:
  static ptb::qos::ManagerConfig config(bool fuse) {
    ptb::qos::ManagerConfig c;
    c.fuse = fuse;
    return c;
  }
  static double ns_since(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::nano>(b - a).count();
  }
  // BE's policy is decided under m_ and applied after m_ is let go (ptb/qos/policy_applier.cuh): an LS
  // request's begin() never waits for the dispatcher's Policy::set (when it did, as the request gate's
  // once did, the host-lag p99 was 347 us under manager-hold against the gate's 141 us:
  // docs/results/colocate.md).
  struct ApplyAtExit {
    ptb::qos::PolicyApplier& a;
    bool soon = false;  // on the applier's own thread (begin(): the request launches meanwhile)
    ~ApplyAtExit() { soon ? a.apply_soon() : a.apply(); }
  };
  // The launches in flight, oldest first (q_[(head_ + i) % kDepth], i < count_).
  static constexpr unsigned kDepth = 2;
  struct Launch {
    cudaEvent_t start = nullptr, end = nullptr;
    ptb::qos::BeAction action = ptb::qos::BeAction::hold;
    unsigned job = 0;
    double tasks[2] = {0, 0}, predicted = 0;
    Clock::time_point started_at{};  // when it was launched, or when the one before it was seen to end
    bool yielded = false, as_planned = true;
  };
  Launch& front() { return q_[head_]; }
  // The launches in flight, predicted from their starts (the oldest one has run since its started_at, the
  // others have not begun), ns.
  double predicted_in_flight_locked() const {
    double predicted = 0;
    for (unsigned i = 0; i < count_; ++i) predicted += q_[(head_ + i) % kDepth].predicted;
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
    applier_.want(ptb::SmSet::none());
    yielded_ = true;
    for (Launch& l : q_) l.yielded = true;  // the launches in flight: their times are not learned
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
      if (step()) continue;
      learn();  // a launch that ended in a round that made none
      std::this_thread::sleep_for(std::chrono::microseconds(2));
    }
  }
  // One round; true when it launched (the next round comes at once, to fill the second place). The lock
  // is held only to read and write the state begin() shares; CUDA launches and the models' refits (up to
  // a few ms for 64 samples) run outside it, and a launch's time is learned after the next launch has been
  // made, while that one runs.
  bool step() {
    const ApplyAtExit applied{applier_};
    auto now = Clock::now();
    // whether the oldest launch in flight has ended, asked before the lock (q_ is this thread's to change)
    const bool ended = count_ > 0 && cudaEventQuery(front().end) != cudaErrorNotReady;
    {
      std::lock_guard<std::mutex> g(m_);
      for (unsigned n = ends_.take_passed(); n > 0; --n) {  // LS requests that finished on the device
        finish_locked();
        if (in_flight_ > 0) oldest_ = now;  // the next request in flight: its delay is not known, count from now
      }
      if (ended) {
        Launch& f = front();
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, f.start, f.end));
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
      if (yielded_ || count_ == kDepth) return false;  // BE paused for LS, or two launches queued
      if (!reorder_ && in_flight_ > 0) {
        ++holds_;
        return false;
      }
      headroom_ = headroom_locked(now);
      if (headroom_ != ptb::qos::FuseOrReorderManager::kIdle && count_ > 0) {
        const double left = headroom_ - remaining_locked(now);  // the next launch begins after those in flight
        headroom_ = left > 0 ? left : 0;
      }
    }
    const ptb::qos::BeHead heads[2] = {{true, double(pair_.job_tasks(0, next_[0]))},
                                       {true, double(pair_.job_tasks(1, next_[1]))}};
    const ptb::qos::BeDecision d = mgr_.decide(heads, headroom_);
    if (d.action == ptb::qos::BeAction::hold) {
      ++holds_;
      learn();
      return false;
    }
    Launch& l = q_[(head_ + count_) % kDepth];  // this thread's alone until count_ covers it
    CK(cudaEventRecord(l.start, s_));
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
    CK(cudaEventRecord(l.end, s_));
    {
      std::lock_guard<std::mutex> g(m_);
      if (d.action == ptb::qos::BeAction::fused) ++(as_planned ? stats_.fused : stats_.fused_fallbacks);
      else ++stats_.singles[d.job];
      stats_.holds = holds_;
      l.action = d.action;
      l.job = d.job;
      l.tasks[0] = heads[0].tasks;
      l.tasks[1] = heads[1].tasks;
      l.predicted = d.predicted_ns;
      l.yielded = yielded_;  // made while BE was paused (an LS request began meanwhile): its time is not learned
      l.as_planned = as_planned;
      l.started_at = Clock::now();
      ++count_;
      // an LS request that began since the decision: the launches must fit what is left of its headroom
      if (in_flight_ > 0 && !yielded_ && (!reorder_ || should_yield_locked(l.started_at, headroom_locked(l.started_at)))) {
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
  // LS
  unsigned in_flight_ = 0;
  Clock::time_point oldest_{};
  ptb::qos::RequestEnds ends_;
  bool yielded_ = false;
  // BE: the launches in flight (read by begin() under m_; changed by the dispatcher under m_)
  Launch q_[kDepth];
  unsigned head_ = 0, count_ = 0;
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

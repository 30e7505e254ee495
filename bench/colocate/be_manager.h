// bench/colocate/be_manager.h: the `manager` configuration: ptb::qos::FuseOrReorderManager (Tacker's
// fuse-or-reorder manager, runtime/include/ptb/qos/manager.h) driving the pair's two BE jobs (BePair) beside
// the LS service. Host code on the CUDA runtime; the decisions are the header's.
//
// One dispatcher thread keeps at most one BE launch in flight, in BE's stream (under BE's ptb::Policy: the
// jobs' launches are twins, the fused launch is fuse-kernels' PTB kernel), and times each with a cudaEvent
// pair; the times teach the manager's models (launches that were yielded are not observed). Before each
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

#include "be_programs.h"
#include "ls_client.h"
#include "util.h"

namespace colo {

class BeManager : public RequestHooks {
 public:
  // target_us: the LS p99 target; ls_us: an LS request's expected time (its solo p99 at this load).
  BeManager(BePair& pair, cudaStream_t s, ptb::Policy be, unsigned* seq, double target_us, double ls_us)
      : pair_(pair), s_(s), be_(be), seq_(seq), target_ns_(1e3 * target_us), ls_ns_(1e3 * ls_us) {
    CK(cudaEventCreate(&start_));
    CK(cudaEventCreate(&end_));
  }
  ~BeManager() override {
    stop();
    std::lock_guard<std::mutex> g(m_);
    for (cudaEvent_t e : free_) cudaEventDestroy(e);
    for (const Open& o : open_) cudaEventDestroy(o.ev);
    cudaEventDestroy(start_);
    cudaEventDestroy(end_);
  }
  BeManager(const BeManager&) = delete;
  BeManager& operator=(const BeManager&) = delete;

  // Learning goes on across start/stop: the models of one run serve the next.
  void start() {
    stop_ = false;
    for (unsigned j = 0; j < 2; ++j) next_[j] = ++*seq_;
    th_ = std::thread([this] { loop(); });
  }
  // The launch in flight ends (on every SM) before this returns.
  void stop() {
    stop_ = true;
    if (th_.joinable()) th_.join();
    be_.set(ptb::SmSet::all());
    CK(cudaStreamSynchronize(s_));
  }

  void begin() override {
    std::lock_guard<std::mutex> g(m_);
    const auto now = Clock::now();
    if (in_flight_++ == 0) oldest_ = now;
    if (running_ && !yielded_ &&
        mgr_.should_yield(ns_since(launched_at_, now), predicted_, target_ns_ - ls_ns_)) {
      be_.set(ptb::SmSet::none());
      yielded_ = running_yielded_ = true;
      ++stats_.yields;
    }
  }
  cudaError_t end(cudaStream_t s) override {
    std::lock_guard<std::mutex> g(m_);
    cudaEvent_t e = nullptr;
    if (!free_.empty()) {
      e = free_.back();
      free_.pop_back();
    } else if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess) {
      finish_locked();
      return cudaErrorMemoryAllocation;
    }
    const cudaError_t r = cudaEventRecord(e, s);
    if (r != cudaSuccess) {
      free_.push_back(e);
      finish_locked();
      return r;
    }
    open_.push_back({e});
    return cudaSuccess;
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
  struct Open {
    cudaEvent_t ev;
  };
  static double ns_since(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::nano>(b - a).count();
  }
  void finish_locked() {
    if (in_flight_ > 0 && --in_flight_ == 0 && yielded_) {
      be_.set(ptb::SmSet::all());
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
      {
        std::lock_guard<std::mutex> g(m_);
        step_locked();
      }
      std::this_thread::sleep_for(std::chrono::microseconds(2));
    }
    // the launch in flight: timed if it ends now (stop() waits for it)
  }
  void step_locked() {
    const auto now = Clock::now();
    // LS requests that finished on the device
    for (size_t i = 0; i < open_.size();) {
      if (cudaEventQuery(open_[i].ev) != cudaErrorNotReady) {
        free_.push_back(open_[i].ev);
        open_[i] = open_.back();
        open_.pop_back();
        finish_locked();
        if (in_flight_ > 0) oldest_ = now;  // the next request in flight: its delay is not known, count from now
      } else {
        ++i;
      }
    }
    // the launch in flight
    if (running_) {
      if (cudaEventQuery(end_) == cudaErrorNotReady) {
        // a late launch while an LS request waits: the prediction was wrong, take the GPU back
        if (in_flight_ > 0 && !yielded_ &&
            mgr_.should_yield(ns_since(launched_at_, now), predicted_, headroom_locked(now))) {
          be_.set(ptb::SmSet::none());
          yielded_ = running_yielded_ = true;
          ++stats_.yields;
          ++stats_.late_yields;
        }
        return;
      }
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, start_, end_));
      if (!running_yielded_ && ran_fused_as_planned_) {
        if (running_action_ == ptb::qos::BeAction::fused) mgr_.observe_fused(tasks_[0], tasks_[1], 1e6 * ms);
        else mgr_.observe_single(running_job_, tasks_[running_job_], 1e6 * ms);
      }
      running_ = false;
    }
    if (yielded_) return;  // BE is paused for LS: nothing new until it is back
    const double headroom = headroom_locked(now);
    const ptb::qos::BeHead heads[2] = {{true, double(pair_.job_tasks(0, next_[0]))},
                                       {true, double(pair_.job_tasks(1, next_[1]))}};
    const ptb::qos::BeDecision d = mgr_.decide(heads, headroom);
    if (d.action == ptb::qos::BeAction::hold) {
      ++stats_.holds;
      return;
    }
    tasks_[0] = heads[0].tasks;
    tasks_[1] = heads[1].tasks;
    CK(cudaEventRecord(start_, s_));
    ran_fused_as_planned_ = true;
    if (d.action == ptb::qos::BeAction::fused) {
      ran_fused_as_planned_ = pair_.launch_fused(s_, next_[0], next_[1]);
      ++(ran_fused_as_planned_ ? stats_.fused : stats_.fused_fallbacks);
      next_[0] = ++*seq_;
      next_[1] = ++*seq_;
    } else {
      pair_.launch_job(d.job, s_, next_[d.job]);
      ++stats_.singles[d.job];
      next_[d.job] = ++*seq_;
    }
    CK(cudaGetLastError());
    CK(cudaEventRecord(end_, s_));
    running_ = true;
    running_yielded_ = false;
    running_action_ = d.action;
    running_job_ = d.job;
    predicted_ = d.predicted_ns;
    launched_at_ = Clock::now();
  }

  BePair& pair_;
  cudaStream_t s_;
  ptb::Policy be_;
  unsigned* seq_;
  double target_ns_, ls_ns_;
  ptb::qos::FuseOrReorderManager mgr_;
  mutable std::mutex m_;
  std::thread th_;
  std::atomic<bool> stop_{false};
  cudaEvent_t start_ = nullptr, end_ = nullptr;
  // LS
  unsigned in_flight_ = 0;
  Clock::time_point oldest_{};
  std::vector<Open> open_;
  std::vector<cudaEvent_t> free_;
  bool yielded_ = false;
  // BE
  unsigned next_[2] = {0, 0};  // each job's next launch (its sequence number)
  bool running_ = false, running_yielded_ = false, ran_fused_as_planned_ = true;
  ptb::qos::BeAction running_action_ = ptb::qos::BeAction::hold;
  unsigned running_job_ = 0;
  double tasks_[2] = {0, 0}, predicted_ = 0;
  Clock::time_point launched_at_{};
  Stats stats_;
};

}  // namespace colo

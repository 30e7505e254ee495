// ptb/qos/epoch_loop.h: the loop that runs a controller (any ptb::qos::Controller) epoch after epoch
// (issue 15; docs/design/qos.md): it gathers the LS latencies that finished in the epoch and BE's progress, asks
// the controller for an allocation, and hands it to the caller's `apply` (for BE under a ptb::Policy:
// ptb::qos::apply_to_be in ptb/qos/apply.cuh, which also has RequestTimer, the LS latencies from
// cudaEvents). Plain C++ (a host thread, no CUDA): the unit tests drive step() by hand.
//
//   ptb::qos::LatencyLog log;                 // the LS client adds each request's latency (add)
//   ptb::qos::FeedbackController ctl(cfg);   // any ptb::qos::Controller (feedback.h, static_partition.h, gspace.h)
//   ptb::qos::EpochLoop loop(ctl, log, {be_progress, apply}, std::chrono::milliseconds(2));
//   loop.start();  ...  loop.stop();
//
// One epoch's LS latency is a percentile of the latencies logged in it (`percentile`, default 0.99; the
// target is stated for it), or, with `window` > 0, of the last `window` latencies logged (the epoch's and
// those before it): an epoch of a few milliseconds holds a few LS requests, and its p99 is then their
// largest, above the long-run p99 most of the time (measured: bench/colocate, docs/design/qos.md). BE's rate is the
// growth of `be_progress()` (any count that only grows: tasks done, bytes, iterations) per second of the epoch. An
// epoch in which no LS latency was logged tells the controller the LS service was quiet.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <deque>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "controller.h"

namespace ptb::qos {

// The LS latencies finished since the last epoch; any thread may add (one lock, a vector push).
class LatencyLog {
public:
  void add(double latency) {
    std::lock_guard<std::mutex> __g(m_);
    v_.push_back(latency);
  }
  std::vector<double> take() {
    std::lock_guard<std::mutex> __g(m_);
    std::vector<double> out;
    out.swap(v_);
    return out;
  }

private:
  std::mutex m_;
  std::vector<double> v_;
};

// The p-th quantile (0..1) of `v` by the nearest rank (the smallest value with at least p of the samples
// at or below it); 0 for no samples. Reorders v.
inline double quantile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(std::clamp(p, 0.0, 1.0) * double(v.size())));
  const size_t __k = rank == 0 ? 0 : rank - 1;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(__k), v.end());
  return v[__k];
}

// What one epoch saw and decided (kept for the caller's report: history()).
struct EpochRecord {
  double t = 0;           // seconds since start() (or since the first step())
  EpochSample sample;     // what the controller was given
  size_t ls_requests = 0; // LS latencies logged in the epoch
  Allocation decided;     // the allocation applied after it
  bool saturated = false; // the controller could not take more for LS
};

class EpochLoop {
public:
  using Clock = std::chrono::steady_clock;
  struct Hooks {
    std::function<double()> be_progress;          // only grows; empty: BE's rate is 0
    std::function<void(const Allocation&)> apply; // at start(), then when a decision changes it
    std::function<void()> collect;                // first in each epoch: fill the log (RequestTimer::poll)
    // Twin launches made under BE's policy since it was made (e.g. [be] { return double(be.launches()); });
    // empty: not checked. BE that progresses while none ever ran under its policy is not PTB: reported.
    std::function<double()> be_launches = nullptr;
    // Launches under BE's policy that ran their original kernel instead (e.g. [be] { return
    // double(be.fallbacks()); }, ptb/fallback.cuh); empty: not checked. New ones are reported: that BE work
    // is not confined, whatever the allocation says.
    std::function<double()> be_fallbacks = nullptr; // (initializers: Hooks{a, b, c} stays warning-free)
  };
  static constexpr unsigned kQuietEpochs = 10;

  EpochLoop(Controller& controller, LatencyLog& log, Hooks hooks, std::chrono::microseconds epoch,
            double percentile = 0.99, size_t window = 0)
      : ctl_(controller), log_(log), hooks_(std::move(hooks)), epoch_(epoch), percentile_(percentile), window_(window) {
    last_progress_ = progress();
    applied_ = ctl_.allocation();
  }
  EpochLoop(const EpochLoop&) = delete;
  EpochLoop& operator=(const EpochLoop&) = delete;
  ~EpochLoop() { stop(); }

  // Apply the controller's starting allocation, then run an epoch every `epoch` on a thread of its own.
  void start() {
    if (thread_.joinable()) return;
    running_ = true;
    t0_ = Clock::now();
    last_ = t0_;
    last_progress_ = progress();
    applied_ = ctl_.allocation();
    if (hooks_.apply) hooks_.apply(applied_);
    thread_ = std::thread([this] {
      auto next = Clock::now() + epoch_;
      while (running_.load(std::memory_order_relaxed)) {
        std::this_thread::sleep_until(next);
        next += epoch_;
        const auto now = Clock::now();
        if (next < now) next = now + epoch_; // fell behind (a slow apply): no burst of epochs
        step(now);
      }
    });
  }
  void stop() {
    running_ = false;
    if (thread_.joinable()) thread_.join();
  }

  // One epoch ending at `now`: measure, decide, apply. The thread calls it; tests may call it directly
  // (without start(): the first call measures from construction).
  Allocation step(Clock::time_point now) {
    if (hooks_.collect) hooks_.collect();
    std::vector<double> lat = log_.take();
    const double progress_now = progress();
    const double dt = std::chrono::duration<double>(now - last_).count();
    EpochRecord __r;
    __r.t = std::chrono::duration<double>(now - t0_).count();
    __r.ls_requests = lat.size();
    __r.sample.ls_active = !lat.empty();
    if (window_ > 0) { // the last `window_` latencies, this epoch's last
      recent_.insert(recent_.end(), lat.begin(), lat.end());
      while (recent_.size() > window_) recent_.pop_front();
      if (!lat.empty()) lat.assign(recent_.begin(), recent_.end());
    }
    __r.sample.ls_latency = quantile(lat, percentile_);
    __r.sample.be_rate = dt > 0 ? (progress_now - last_progress_) / dt : 0;
    last_ = now;
    last_progress_ = progress_now;
    __r.decided = ctl_.epoch(__r.sample);
    __r.saturated = ctl_.saturated();
    tell(__r);
    // Only a change is applied: Policy::set takes the runtime's lock and waits for a copy to the device,
    // and an unchanged allocation has nothing to apply.
    if (hooks_.apply && __r.decided != applied_) {
      applied_ = __r.decided;
      hooks_.apply(applied_);
    }
    std::lock_guard<std::mutex> __g(m_);
    history_.push_back(__r);
    return __r.decided;
  }

  // What a user must hear about (bad input, docs/design/qos.md), once per transition: the target out of reach
  // with BE at its floor, and back in reach; LS quiet for kQuietEpochs epochs in a row, and back; BE
  // progressing for kQuietEpochs epochs with no launch under its policy (hooks.be_launches), and BE's
  // launches running under it after such a report; BE's launches falling back to their original kernels
  // (hooks.be_fallbacks). By
  // default one line on stderr ("ptb::qos: ..."); a function that does nothing silences it. Before start().
  void report_to(std::function<void(const std::string&)> f) { report_ = std::move(f); }

  // Every epoch so far (a copy; safe while the loop runs).
  std::vector<EpochRecord> history() const {
    std::lock_guard<std::mutex> __g(m_);
    return history_;
  }

private:
  double progress() const { return hooks_.be_progress ? hooks_.be_progress() : 0; }
  double be_launches() const { return hooks_.be_launches ? hooks_.be_launches() : 0; }
  double be_fallbacks() const { return hooks_.be_fallbacks ? hooks_.be_fallbacks() : 0; }

  // The transitions a user must hear about (report_to).
  void tell(const EpochRecord& __r) {
    char line[200];
    if (__r.saturated != saturated_) {
      saturated_ = __r.saturated;
      if (saturated_)
        std::snprintf(line, sizeof line,
                      "ptb::qos: %s: LS misses its target (%g) with BE at its floor (%u SMs left to BE): the "
                      "target cannot be met by taking SMs from BE",
                      ctl_.name(), __r.sample.ls_latency, __r.decided.be);
      else
        std::snprintf(line, sizeof line, "ptb::qos: %s: LS is within reach of its target again", ctl_.name());
      say(line);
    }
    quiet_ = __r.sample.ls_active ? 0 : quiet_ + 1;
    if (quiet_ == kQuietEpochs) {
      std::snprintf(line, sizeof line, "ptb::qos: %s: no LS request finished in %u epochs (LS quiet or gone)",
                    ctl_.name(), kQuietEpochs);
      say(line);
      was_quiet_ = true;
    } else if (quiet_ == 0 && was_quiet_) {
      std::snprintf(line, sizeof line, "ptb::qos: %s: LS requests finish again", ctl_.name());
      say(line);
      was_quiet_ = false;
    }
    if (hooks_.be_fallbacks) {
      // Told once while they keep coming; told again if they come back after kQuietEpochs epochs without.
      const double f = be_fallbacks();
      if (f > fallbacks_seen_) {
        if (!told_fallbacks_) {
          std::snprintf(line, sizeof line,
                        "ptb::qos: %s: %.0f of BE's launches under its policy ran their original kernels "
                        "(fallbacks: ptb/fallback.cuh): they are not confined by any allocation",
                        ctl_.name(), f - fallbacks_seen_);
          say(line);
          told_fallbacks_ = true;
        }
        fallbacks_seen_ = f;
        no_fallback_epochs_ = 0;
      } else if (told_fallbacks_ && ++no_fallback_epochs_ == kQuietEpochs) {
        told_fallbacks_ = false;
      }
    }
    if (!hooks_.be_launches) return;
    const bool none = be_launches() == 0; // since the policy was made: a BE twin launched earlier counts
    unconfined_ = none && __r.sample.be_rate > 0 ? unconfined_ + 1 : 0;
    if (unconfined_ == kQuietEpochs && !told_unconfined_) {
      std::snprintf(line, sizeof line,
                    "ptb::qos: %s: BE progressed for %u epochs but no PTB launch ran under its policy: its "
                    "kernels are not twins (code ptb-transform did not rewrite?) and no allocation can move them",
                    ctl_.name(), kQuietEpochs);
      say(line);
      told_unconfined_ = true;
    } else if (!none && told_unconfined_) {
      std::snprintf(line, sizeof line, "ptb::qos: %s: BE's launches run under its policy now", ctl_.name());
      say(line);
      told_unconfined_ = false;
    }
  }
  void say(const char* line) {
    if (report_)
      report_(line);
    else
      std::fprintf(stderr, "%s\n", line);
  }

  Controller& ctl_;
  LatencyLog& log_;
  Hooks hooks_;
  std::chrono::microseconds epoch_;
  double percentile_;
  size_t window_;
  std::deque<double> recent_; // with window_ > 0: the last window_ latencies
  std::atomic<bool> running_{false};
  std::thread thread_;
  Clock::time_point t0_ = Clock::now(), last_ = t0_;
  double last_progress_ = 0;
  Allocation applied_; // the last allocation applied (before start(): the controller's starting one)
  std::function<void(const std::string&)> report_; // empty: stderr
  bool saturated_ = false, was_quiet_ = false;     // what was last reported
  unsigned quiet_ = 0;                             // epochs in a row with no LS request
  unsigned unconfined_ = 0;                        // epochs in a row BE progressed with no launch under its policy
  bool told_unconfined_ = false;
  double fallbacks_seen_ = 0; // BE's fallbacks when last looked at (hooks.be_fallbacks)
  bool told_fallbacks_ = false;
  unsigned no_fallback_epochs_ = 0;
  mutable std::mutex m_;
  std::vector<EpochRecord> history_;
};

} // namespace ptb::qos

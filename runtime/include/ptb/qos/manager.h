// ptb/qos/manager.h: Tacker's fuse-or-reorder manager (issue 17, item 2; docs/design/qos-manager.md), the
// fourth QoS controller. Plain C++, no CUDA, like controller.h: the caller launches, times and yields
// (manager_driver.cuh on the GPU); this header decides, and is tested on the CPU (test/unit/QosManagerTest.cpp).
//
// Two BE jobs, each a chain of launches that must run in its order (job 0 and job 1: the two kernels of a
// pair that fuse-kernels fused). Between launches the caller asks decide() what to launch next, given
// each job's next launch (its task count) and the *headroom*: how long BE may hold the GPU before an LS
// request would miss its target (infinite while no LS request is in flight: an arriving request makes the
// caller ask should_yield(), and the runtime's yield takes the GPU back from a launch that cannot end in
// time). The answer, in Tacker's order:
//   1. fused: both jobs have a launch waiting, the fused kernel is predicted to beat the two launches one
//      after the other by the fusion rule's margin (fuse-kernels' "fused only where it wins"), and it
//      fits the headroom;
//   2. else single: the waiting launch predicted shortest among those that fit (a launch passed over
//      `max_passes` times in a row goes first, so no job starves);
//   3. else hold.
// Before a model can be trusted the manager explores, while no LS request is in flight only: each job's
// launches alone until its model holds 2 x `min_samples` and predicts them within `tolerance` (or
// `explore_limit` lone launches did not make it so: the job then takes its turn by the rules above, and
// the other job no longer waits behind its exploration), then the fused kernel until its model is trusted
// (or `explore_limit` fused launches did not make it trusted: fusing is then taken to lose).
//
// The models are ptb/qos/duration_model.h's, learned online from the caller's timings: one DurationModel
// per job (time over task count) and a FusedDurationModel (Tacker's two-segment model in the load ratio).
#pragma once

#include <array>
#include <cstddef>
#include <deque>
#include <limits>
#include <vector>

#include "duration_model.h"

namespace ptb::qos {

// A job's next launch, as the manager sees it.
struct BeHead {
  bool ready = false; // a launch is waiting (false: the job has none, or its previous launch still runs)
  double tasks = 0;   // its task count (the original grid's blocks)
};

enum class BeAction { hold, single, fused };

struct BeDecision {
  BeAction action = BeAction::hold;
  unsigned job = 0;        // single: whose launch
  double predicted_ns = 0; // what the decision bet on (0: nothing known yet)
  const char* why = "";    // for traces: "explore", "explore-fused", "fused", "shortest", "passed-over",
                           // "no-headroom", "empty"
};

struct ManagerConfig {
  double fuse_margin = 0.02;   // fused only when predicted <= (1 - margin) x the two launches in turn
  double tolerance = 0.15;     // a model is trusted within this leave-one-out error (relative)
  size_t min_samples = 4;      // samples before a model is trusted
  unsigned max_passes = 4;     // a waiting launch passed over this often goes first
  unsigned explore_limit = 24; // fused launches tried before fusing is taken to lose; a job's lone
                               // launches explored before its model is taken as it is
  double late = 0.25;          // a launch running past its prediction by this fraction was mispredicted
  bool fuse = true;            // false: never the fused kernel (the manager without its fusion half)
};

class FuseOrReorderManager {
public:
  static constexpr double kIdle = std::numeric_limits<double>::infinity(); // headroom with no LS request

  explicit FuseOrReorderManager(DurationModel job0 = DurationModel(), DurationModel job1 = DurationModel(),
                                ManagerConfig c = {})
      : cfg_(c), jobs_{job0, job1} {}

  // A launch's device time, once it has ended. Launches that were yielded are not observed (their time
  // says nothing of the kernel).
  void observe_single(unsigned job, double tasks, double ns) {
    jobs_[job & 1].observe(tasks, ns);
    ++parts_since_fit_;
  }
  void observe_fused(double tasks0, double tasks1, double ns) {
    if (!(ns > 0)) return;
    fused_samples_.push_back({tasks0, tasks1, ns});
    if (fused_samples_.size() > kFusedWindow) fused_samples_.pop_front();
    ++fused_tries_;
    fit_fused();
  }

  double predict_single(unsigned job, double tasks) const { return jobs_[job & 1].predict(tasks); }
  double predict_fused(double tasks0, double tasks1) const {
    return fused_.predict(tasks0, tasks1, jobs_[0], jobs_[1]);
  }
  bool single_trusted(unsigned job, double tasks) const {
    return jobs_[job & 1].trusted(tasks, cfg_.tolerance, cfg_.min_samples);
  }
  bool fused_trusted() const { return fused_.trusted(cfg_.tolerance, 2 * cfg_.min_samples); }
  // The fusion rule on the models: fused beats the two launches in turn by the margin.
  bool fused_wins(double tasks0, double tasks1) const {
    if (!fused_trusted() || !single_trusted(0, tasks0) || !single_trusted(1, tasks1)) return false;
    const double seq = predict_single(0, tasks0) + predict_single(1, tasks1);
    return predict_fused(tasks0, tasks1) <= (1 - cfg_.fuse_margin) * seq;
  }
  // Fusing has been tried `explore_limit` times without a model to trust: it is not explored further.
  bool fusing_given_up() const { return !fused_trusted() && fused_tries_ >= cfg_.explore_limit; }

  // What to launch next. `heads`: each job's next launch; `headroom_ns`: kIdle while no LS request is in
  // flight, else what is left of the request's target after its predicted remaining time.
  BeDecision decide(const BeHead (&heads)[2], double headroom_ns) {
    if (parts_since_fit_ >= kRefitEvery && !fused_samples_.empty()) fit_fused();
    BeDecision d;
    if (!heads[0].ready && !heads[1].ready) {
      d.why = "empty";
      return d;
    }
    const bool idle = headroom_ns == kIdle;
    // exploration, only while no LS request is in flight: a job whose model is not yet sure first (the
    // fused model is learned on the parts' predictions, so it waits for them)
    if (idle)
      for (unsigned __j = 0; __j < 2; ++__j)
        if (heads[__j].ready && !learned(__j) && explored_[__j] < cfg_.explore_limit) {
          ++explored_[__j];
          return pick_single(__j, heads, "explore");
        }
    const bool both = cfg_.fuse && heads[0].ready && heads[1].ready;
    if (both) {
      const double t0 = heads[0].tasks, t1 = heads[1].tasks;
      if (fused_wins(t0, t1) && predict_fused(t0, t1) <= headroom_ns) {
        passes_[0] = passes_[1] = 0;
        d.action = BeAction::fused;
        d.predicted_ns = predict_fused(t0, t1);
        d.why = "fused";
        return d;
      }
      if (idle && !fused_trusted() && !fusing_given_up() && learned(0) && learned(1)) {
        passes_[0] = passes_[1] = 0;
        d.action = BeAction::fused;
        d.predicted_ns = predict_fused(t0, t1);
        d.why = "explore-fused";
        return d;
      }
    }
    // single launches that fit; a trusted model is needed to bet on a finite headroom
    int best = -1;
    double best_ns = 0;
    for (unsigned __j = 0; __j < 2; ++__j) {
      if (!heads[__j].ready) continue;
      const double p = predict_single(__j, heads[__j].tasks);
      const bool fits = idle || (single_trusted(__j, heads[__j].tasks) && p <= headroom_ns);
      if (!fits) continue;
      if (passes_[__j] >= cfg_.max_passes) return pick_single(__j, heads, "passed-over");
      if (best < 0 || p < best_ns) best = int(__j), best_ns = p;
    }
    if (best < 0) {
      d.why = "no-headroom";
      return d;
    }
    return pick_single(unsigned(best), heads, "shortest");
  }

  // A launch has run `elapsed_ns` of a predicted `predicted_ns` (0: unknown) when an LS request with
  // `headroom_ns` left needs the GPU: whether to take the GPU back from it now (the runtime's yield). Yes
  // when it cannot end within the headroom, and when it is late (the prediction was wrong: what is left
  // of it is not known).
  bool should_yield(double elapsed_ns, double predicted_ns, double headroom_ns) const {
    if (headroom_ns == kIdle) return false;
    if (!(predicted_ns > 0)) return true;
    if (elapsed_ns > (1 + cfg_.late) * predicted_ns) return true;
    const double remaining = predicted_ns > elapsed_ns ? predicted_ns - elapsed_ns : 0;
    return remaining > headroom_ns;
  }

  const DurationModel& job_model(unsigned job) const { return jobs_[job & 1]; }
  const FusedDurationModel& fused_model() const { return fused_; }
  const ManagerConfig& config() const { return cfg_; }

private:
  // A job's model holds twice the samples a trusted one needs (a leave-one-out error of four samples says
  // little) and predicts them within the tolerance.
  bool learned(unsigned __j) const {
    const DurationConfidence c = jobs_[__j].confidence();
    return c.samples >= 2 * cfg_.min_samples && c.loo_error <= cfg_.tolerance;
  }
  // The fused model's inputs are the parts' predicted durations, which move as the parts' models learn: it
  // is fitted again on the fused launches held, through the parts' models of now, after each fused launch
  // and after every kRefitEvery launches of the parts.
  void fit_fused() {
    std::vector<std::array<double, 3>> xs;
    for (const FusedSample& f : fused_samples_)
      xs.push_back({jobs_[0].predict(f.tasks0), f.tasks1 > 0 ? jobs_[1].predict(f.tasks1) : 0, f.ns});
    fused_.assign(xs);
    parts_since_fit_ = 0;
  }
  BeDecision pick_single(unsigned __j, const BeHead (&heads)[2], const char* why) {
    passes_[__j] = 0;
    if (heads[__j ^ 1].ready) ++passes_[__j ^ 1];
    BeDecision d;
    d.action = BeAction::single;
    d.job = __j;
    d.predicted_ns = predict_single(__j, heads[__j].tasks);
    d.why = why;
    return d;
  }

  struct FusedSample {
    double tasks0, tasks1, ns;
  };
  static constexpr size_t kFusedWindow = 64;
  static constexpr unsigned kRefitEvery = 8;

  ManagerConfig cfg_;
  DurationModel jobs_[2];
  std::deque<FusedSample> fused_samples_; // the latest fused launches, as timed
  FusedDurationModel fused_{kFusedWindow};
  unsigned passes_[2] = {0, 0};
  unsigned fused_tries_ = 0;
  // launches made to explore each job alone. Without a bound, in bench/colocate
  // (docs/results/colocate.md) the WMMA job's model stayed above the tolerance (leave-one-out 0.15-0.23 at full
  // occupancy) and the manager launched it alone 2,240 times against the other job's 12 in one window.
  unsigned explored_[2] = {0, 0};
  unsigned parts_since_fit_ = 0;
};

} // namespace ptb::qos

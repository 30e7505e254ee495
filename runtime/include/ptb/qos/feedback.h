// ptb/qos/feedback.h: the decision core of the feedback controller (SMQoS, Algorithms 1-3;
// docs/design/qos-feedback.md): from one epoch's measurements, how many SMs the latency-sensitive (LS) service keeps
// free of best-effort (BE) work, how many BE gets, and how many stay idle. Plain C++, no CUDA: the epoch loop that
// measures and applies the decision (ptb::Policy::set) is separate, and this part is tested on the CPU
// (test/unit/QosFeedbackTest.cpp).
//
// The paper measures IPC against an IPC target; we measure what a user states a target for: the LS
// latency (any unit, the same for the target and the samples; lower is better) and BE's throughput
// (any rate: tasks or bytes per second). Its rules, in those terms:
// - LS misses (the epoch's latency or the running mean above the target): LS takes one step of SMs,
//   an idle one if there is one, else one of BE's (never below BE's floor).
// - LS gives one step back only with headroom in both the epoch and the running mean (each at most
//   target * (1 - headroom)): the paper asks the same of both, more strictly than for taking.
// - The step given back goes to BE while BE is below its best SM count (opt_k) or that count has no
//   upper bound yet; with both bounds found BE takes nothing more, and the SMs stay idle. Taking a step
//   away from BE, or giving it one, and watching its throughput finds the bounds (Algorithm 2).
// Two departures, both found by the simulated runs of the unit test:
// - The running mean is exponentially weighted (weight `mean_weight` per epoch), not the mean over every
//   epoch since the start: after a phase of misses the mean over all epochs stays above the target for
//   as long again, and LS kept taking SMs it no longer needed.
// - "The SMs made no difference" is a change of BE's throughput below `threshold` times the change
//   linear scaling would give (step / SMs), not below a fixed fraction: on a GPU of 132 SMs one SM is
//   0.8% of a compute-bound BE's throughput, under any fixed threshold that would absorb noise. A step
//   is still small against measurement noise on a large GPU: docs/design/qos-feedback.md says what that means.
// - A give-back that the next epoch answers with a miss holds further give-backs for `hold_initial`
//   epochs, doubling with each such miss in a row up to `hold_max`: with the rules above alone, an LS
//   service that just meets its target with headroom at n SMs gave one back every other epoch and missed
//   every other epoch.
// - Epochs in which no LS request finished decide nothing; after `release_after_quiet` of them in a row,
//   LS gives one step back per epoch (an LS service that went away does not hold SMs for ever).
#pragma once

#include <algorithm>

#include "controller.h"
#include "ls_history.h"

namespace ptb::qos {

struct FeedbackConfig {
  unsigned total = 0;                // SMs of the device (ptb::sm_count())
  double target = 0;                 // the LS latency target
  unsigned step = 1;                 // SMs moved at a time: 1, or 2 for a whole TPC
  unsigned ls_initial = 0;           // SMs kept free of BE at the start
  unsigned be_floor = 1;             // BE never has fewer (never starved for good; 0 allows it)
  double headroom = 0.10;            // giving back needs latency <= target * (1 - headroom)
  double threshold = 0.5;            // a BE throughput change below this fraction of linear scaling's: no difference
  double mean_weight = 0.125;        // the running mean's weight of each new epoch
  unsigned release_after_quiet = 10; // epochs with no LS request before LS starts giving SMs back
  unsigned hold_initial = 4;         // epochs without a give-back after one that ended in a miss (doubling)
  unsigned hold_max = 64;
};

class FeedbackController : public Controller {
public:
  explicit FeedbackController(const FeedbackConfig& c) : c_(c) {
    c_.step = std::max(1u, c_.step);
    c_.be_floor = std::min(c_.be_floor, c_.total);
    a_.ls = std::min(c_.ls_initial, c_.total - c_.be_floor);
    a_.be = c_.total - a_.ls;
    opt_k_ = a_.be;
  }

  // One epoch: record it and decide the next allocation.
  Allocation epoch(const EpochSample& s) override {
    learn_best(s); // Algorithm 2: what BE's last move showed
    last_move_ = Move::none;
    be_last_ = a_.be;
    rate_last_ = s.be_rate;
    saturated_ = false;
    if (!s.ls_active) {
      if (ls_.quiet(c_.release_after_quiet) && a_.ls > 0) give_back();
      return a_;
    }
    ls_.active(s.ls_latency, c_.mean_weight);
    const double mean = ls_.mean();
    const bool probed = gave_back_; // the previous epoch gave a step back
    gave_back_ = false;
    if (s.ls_latency > c_.target || mean > c_.target) {
      // the step given back was needed: hold the next give-back, longer each time in a row
      if (probed) ls_.probe_missed(c_.hold_initial, c_.hold_max);
      take_for_ls(); // Algorithm 1, lines 3-4, and Algorithm 3, precondition 1
    } else {
      if (probed) ls_.probe_held(); // the give-back held
      const double limit = c_.target * (1 - c_.headroom);
      if (s.ls_latency <= limit && mean <= limit && a_.ls > 0 && !ls_.holding()) {
        give_back(); // Algorithm 1, line 6; Algorithm 3, precondition 2
        gave_back_ = true;
      }
    }
    return a_;
  }

  const Allocation& allocation() const override { return a_; }
  const char* name() const override { return "feedback"; }
  // BE's best SM count as far as known, and whether each bound of it is found.
  unsigned best_be() const { return opt_k_; }
  bool upper_found() const { return upper_k_; }
  bool lower_found() const { return lower_k_; }
  // The last epoch missed, and nothing was left to take: the target cannot be met with BE at its floor.
  bool saturated() const override { return saturated_; }
  // Forget the LS running mean (a new phase of the LS load, or a new target).
  void reset_mean() { ls_.forget_mean(); }

private:
  enum class Move { none, be_in, be_out };

  void take_for_ls() {
    const unsigned s = c_.step;
    if (a_.idle >= s) {
      a_.idle -= s;
    } else if (a_.be >= c_.be_floor + s) {
      a_.be -= s;
      last_move_ = Move::be_out;
    } else {
      saturated_ = true;
      return;
    }
    a_.ls += s;
  }

  void give_back() {
    const unsigned s = std::min(c_.step, a_.ls);
    a_.ls -= s;
    if (a_.be < opt_k_ || !upper_k_) {
      a_.be += s;
      last_move_ = Move::be_in;
    } else if (!lower_k_ && a_.be >= c_.be_floor + s) {
      // Algorithm 3, line 17: the upper bound is found, not the lower one: BE gives a step too, to find it.
      a_.idle += 2 * s;
      a_.be -= s;
      last_move_ = Move::be_out;
    } else {
      a_.idle += s; // BE gains nothing from it: idle
    }
  }

  // Algorithm 2, after BE moved in the previous epoch from be_last_ (which was the best known count).
  void learn_best(const EpochSample& s) {
    if (last_move_ == Move::none || be_last_ != opt_k_ || (upper_k_ && lower_k_) || rate_last_ <= 0 || be_last_ == 0)
      return;
    // the change that would count: `threshold` of what linear scaling would give for this step
    const double change = c_.threshold * double(a_.be > be_last_ ? a_.be - be_last_ : be_last_ - a_.be) / be_last_;
    if (last_move_ == Move::be_in) {
      if (s.be_rate > rate_last_ * (1 + change)) {
        lower_k_ = true; // more SMs helped: the best count is at least this
        opt_k_ = a_.be;
      } else {
        upper_k_ = true; // more SMs did not help: the best count is the previous one
      }
    } else {
      if (s.be_rate < rate_last_ * (1 - change)) {
        lower_k_ = true; // fewer SMs hurt: the previous count was needed
      } else {
        upper_k_ = true; // fewer SMs did not hurt: the best count is at most this
        opt_k_ = a_.be;
      }
    }
  }

  FeedbackConfig c_;
  Allocation a_;
  Move last_move_ = Move::none;
  unsigned be_last_ = 0;
  double rate_last_ = 0;
  unsigned opt_k_ = 0;
  bool upper_k_ = false, lower_k_ = false, saturated_ = false;
  LsHistory ls_;
  bool gave_back_ = false;
};

} // namespace ptb::qos

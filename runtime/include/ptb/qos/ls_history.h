// ptb/qos/ls_history.h: what an adaptive QoS controller remembers about the latency-sensitive (LS) service
// from one epoch to the next (docs/design/qos.md): the running mean of its latency, how many epochs in a row it
// was quiet, and the hold that follows a move towards BE that the next epoch answered with a miss. The
// feedback controller (feedback.h) and G-Space (gspace.h) keep it alike. Plain C++.
#pragma once

#include <algorithm>

namespace ptb::qos {

class LsHistory {
public:
  // An epoch in which no LS request finished: true once more than `after` of them came in a row.
  bool quiet(unsigned after) { return ++quiet_ > after; }
  // An epoch with LS requests: its latency joins the running mean (exponentially weighted, `weight` per
  // epoch; the first epoch is the mean), and a hold counts one epoch down.
  void active(double latency, double weight) {
    quiet_ = 0;
    mean_ = has_mean_ ? mean_ + weight * (latency - mean_) : latency;
    has_mean_ = true;
    if (hold_ > 0) --hold_;
  }
  double mean() const { return mean_; }
  // Forget the running mean (a new phase of the LS load, or a new target).
  void forget_mean() { has_mean_ = false; }
  // A move towards BE that the next epoch answered with a miss: no such move for `initial` epochs,
  // doubling with each such miss in a row up to `max`.
  void probe_missed(unsigned initial, unsigned max) {
    hold_len_ = hold_len_ ? std::min(2 * hold_len_, max) : initial;
    hold_ = hold_len_;
  }
  // The move held: the next miss after a move starts from `initial` again.
  void probe_held() { hold_len_ = 0; }
  bool holding() const { return hold_ > 0; }

private:
  double mean_ = 0;
  bool has_mean_ = false;
  unsigned quiet_ = 0;
  unsigned hold_ = 0, hold_len_ = 0;
};

} // namespace ptb::qos

// ptb/qos/gspace.h: G-Space yielding (docs/design/qos-gspace.md): BE runs on every SM, but on n of them (the lowest
// ids) it keeps only k workers per SM, and the LS service's kernels run in the room it leaves there. A
// search over (n, k) moves from a given start to neighbouring configurations, driven by each epoch's LS
// latency against the target, towards the configuration that gives BE the most while LS meets its
// target. Plain C++, no CUDA; ptb/qos/apply.cuh applies the allocation (ptb::Policy::set with a cap on a
// subset of SMs).
//
// Which of G-Space's searches (section 4.5: neighbour search, guided neighbour search, scalar
// refinement) and why: the guided search and scalar refinement both steer by the performance maps of
// pairs of micro-benchmarks profiled offline (section 4.4), which we do not have. The neighbour search
// needs only measurements, but it tries all 8 neighbours of a configuration before moving, each try an
// epoch, and the tries towards BE are the ones that break the LS target. So we walk the neighbour
// search's grid one neighbour per epoch, ordered by a model in place of the micro-benchmark maps: the
// BE worker places a configuration yields, n * (max_cap - k). More yielded places are better for LS and
// worse for BE. Each epoch:
// - The LS latency is over the target: move to the neighbour that yields the most (n + step, k - 1 where
//   the grid allows): misses are what the search must leave fast (the neighbour search, in the region
//   that misses, also takes the neighbour best for LS). None yields more: saturated().
// - The epoch and the running mean both have headroom (at most target * (1 - headroom)): probe the
//   neighbour that yields the least less (the smallest step towards BE), unless a hold is on.
// - A probe answered by a miss is undone (back to the configuration it left, which met the target) and
//   holds the next probes for hold_initial epochs, doubling while it keeps happening, as in the feedback
//   controller (feedback.h). Undoing it, rather than taking the step towards LS above, is what lets the
//   hold double: after the larger step towards LS a few probes met the target again, each reset the
//   hold, and the search slid along the edge of the region that meets the target, one miss per cell (a
//   simulated run: 57 misses in 400 epochs; 10 with the undo).
// - Quiet epochs (no LS request finished) decide nothing; after release_after_quiet of them in a row,
//   one step per epoch to the neighbour that yields the least (n - step, k + 1): an LS service that went
//   away gives BE its room back.
// A miss is judged on the epoch alone (the configuration that ran in it), not on the running mean,
// which mixes the configurations before it and made the search keep moving towards LS after a miss.
#pragma once

#include <algorithm>

#include "controller.h"
#include "ls_history.h"

namespace ptb::qos {

struct GSpaceConfig {
  unsigned total = 0;   // SMs of the device (ptb::sm_count())
  double target = 0;    // the LS latency target (same unit as EpochSample::ls_latency)
  unsigned max_cap = 0; // BE's workers per SM at full occupancy (k == max_cap: no yielding); e.g.
                        // cudaOccupancyMaxActiveBlocksPerMultiprocessor of BE's twin
  unsigned n_step = 2;  // n moves in this step: 2 moves whole TPCs
  unsigned start_n = 0; // the starting configuration (profiled or given): n SMs with k BE workers
  unsigned start_k = 0;
  double headroom = 0.10;            // probing towards BE needs latency <= target * (1 - headroom)
  unsigned max_n = 0;                // at most this many SMs capped (0: total - n_step): BE keeps some SMs whole
  double mean_weight = 0.125;        // the running mean's weight of each new epoch
  unsigned release_after_quiet = 10; // quiet epochs before the search starts giving BE its room back
  unsigned hold_initial = 4;         // epochs without a probe after one that ended in a miss (doubling)
  unsigned hold_max = 64;
};

class GSpaceController : public Controller {
public:
  explicit GSpaceController(const GSpaceConfig& c) : c_(c) {
    c_.n_step = std::max(1u, c_.n_step);
    c_.max_cap = std::max(1u, c_.max_cap);
    if (c_.max_n == 0 || c_.max_n > c_.total) c_.max_n = c_.total > c_.n_step ? c_.total - c_.n_step : 0;
    go(canonical({std::min(c_.start_n, c_.max_n), std::min(c_.start_k, c_.max_cap)}));
  }

  Allocation epoch(const EpochSample& s) override {
    saturated_ = false;
    if (!s.ls_active) {
      probed_ = false; // a probe that no LS request answered is not undone later
      if (ls_.quiet(c_.release_after_quiet) && yielded(cur_) > 0) go(most_for_be());
      return a_;
    }
    ls_.active(s.ls_latency, c_.mean_weight);
    const bool probed = probed_; // the previous epoch moved towards BE
    probed_ = false;
    if (s.ls_latency > c_.target) {
      if (probed) { // the probe went too far: back to where it came from, and hold the next one
        ls_.probe_missed(c_.hold_initial, c_.hold_max);
        go(before_probe_);
        return a_;
      }
      const Cell next = most_for_ls();
      if (yielded(next) > yielded(cur_))
        go(next);
      else
        saturated_ = true;
      return a_;
    }
    if (probed) ls_.probe_held(); // the probe held
    const double limit = c_.target * (1 - c_.headroom);
    if (s.ls_latency <= limit && ls_.mean() <= limit && !ls_.holding()) {
      const Cell next = least_towards_be();
      if (!(next == cur_)) {
        before_probe_ = cur_;
        go(next);
        probed_ = true;
      }
    }
    return a_;
  }

  const Allocation& allocation() const override { return a_; }
  bool saturated() const override { return saturated_; }
  const char* name() const override { return "gspace"; }
  // The current configuration: n SMs (the lowest ids) with k BE workers each; n == 0: no yielding.
  unsigned n() const { return cur_.n; }
  unsigned k() const { return cur_.__k; }
  // BE worker places the configuration leaves to LS: n * (max_cap - k).
  unsigned yielded() const { return yielded(cur_); }
  const GSpaceConfig& config() const { return c_; }

private:
  struct Cell {
    unsigned n = 0, __k = 0;
    bool operator==(const Cell& __o) const { return n == __o.n && __k == __o.__k; }
  };

  unsigned yielded(const Cell& x) const { return x.n * (c_.max_cap - x.__k); }
  // Every configuration that yields nothing is one: no SM capped.
  Cell canonical(Cell x) const { return yielded(x) == 0 ? Cell{0, c_.max_cap} : x; }

  void go(const Cell& x) {
    cur_ = x;
    a_ = Allocation{};
    a_.be = c_.total;
    if (yielded(x) > 0) {
      a_.shared = x.n;
      a_.shared_cap = x.__k;
    }
  }

  // The neighbours of the current configuration on the grid n in [0, max_n] by n_step, k in
  // [0, max_cap]: `better(candidate, best)` picks one; the current configuration if there is none.
  template <class Better> Cell pick(Better better) const {
    Cell best = cur_;
    bool found = false;
    for (int dn = -1; dn <= 1; ++dn)
      for (int dk = -1; dk <= 1; ++dk) {
        if (dn == 0 && dk == 0) continue;
        if ((dk < 0 && cur_.__k == 0) || (dk > 0 && cur_.__k == c_.max_cap)) continue;
        unsigned n = cur_.n;
        if (dn < 0) n = n > c_.n_step ? n - c_.n_step : 0;
        if (dn > 0) n = std::min(n + c_.n_step, c_.max_n);
        if (dn != 0 && n == cur_.n) continue; // at the edge of the grid
        const Cell x = canonical({n, static_cast<unsigned>(static_cast<int>(cur_.__k) + dk)});
        if (x == cur_) continue;
        if (!found || better(x, best)) best = x, found = true;
      }
    return best;
  }
  // After a miss: the neighbour that yields the most.
  Cell most_for_ls() const {
    return pick([&](const Cell& a, const Cell& b) { return yielded(a) > yielded(b); });
  }
  // A quiet LS service: the neighbour that yields the least.
  Cell most_for_be() const {
    return pick([&](const Cell& a, const Cell& b) { return yielded(a) < yielded(b); });
  }
  // A probe: of the neighbours that yield less, the one that yields the most; of equals, the one with
  // fewer SMs capped (BE's workers on more SMs at full occupancy).
  Cell least_towards_be() const {
    const unsigned y = yielded(cur_);
    const Cell c = pick([&](const Cell& a, const Cell& b) {
      const unsigned ya = yielded(a), yb = yielded(b);
      if ((ya < y) != (yb < y)) return ya < y;
      return ya != yb ? ya > yb : a.n < b.n;
    });
    return yielded(c) < y ? c : cur_;
  }

  GSpaceConfig c_;
  Cell cur_, before_probe_;
  Allocation a_;
  bool saturated_ = false;
  LsHistory ls_;
  bool probed_ = false;
};

} // namespace ptb::qos

// bench/colocate/controllers.h: the QoS policies under test, each behind one small interface (Loop), so
// that colocate.cu runs them all the same way: a controller in a ptb::qos::EpochLoop whose `apply` hook
// is ptb::qos::apply_to_be(BE's policy).
//
// What exists in runtime/include/ptb/qos decides what is compiled (those headers were written while this
// benchmark was; the benchmark builds with and without them):
//   feedback  ptb::qos::FeedbackController (feedback.h): always.
//   gspace    ptb::qos::GSpaceController (gspace.h; needs controller.h, the common base that EpochLoop
//             then takes): BE on every SM, capped at k workers on n SMs, (n, k) searched from (0, max_cap).
//             Without gspace.h the benchmark prints "gspace: not built".
//   static    k from a profile (colocate.cu): ptb::qos::static_partition_k (static_partition.h: the
//             smallest k, in steps, whose profiled LS latency meets the target) when it exists, else
//             static_k_search below (the same answer by bisection, fewer probes); then a
//             ptb::qos::StaticPartition in the epoch loop (static_partition.h + controller.h), else one
//             Policy::set of SMs [k, total) for BE.
#pragma once
#include <chrono>
#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ptb/qos/apply.cuh>
#include <ptb/qos/feedback.h>

#if __has_include(<ptb/qos/controller.h>)
#include <ptb/qos/controller.h>
#define COLOCATE_HAVE_CONTROLLER_BASE 1
#else
#define COLOCATE_HAVE_CONTROLLER_BASE 0
#endif
#if COLOCATE_HAVE_CONTROLLER_BASE && __has_include(<ptb/qos/gspace.h>)
#include <ptb/qos/gspace.h>
#define COLOCATE_HAVE_GSPACE 1
#else
#define COLOCATE_HAVE_GSPACE 0
#endif
#if __has_include(<ptb/qos/static_partition.h>)
#include <ptb/qos/static_partition.h>
#define COLOCATE_HAVE_STATIC_K 1
#define COLOCATE_HAVE_STATIC_CONTROLLER COLOCATE_HAVE_CONTROLLER_BASE
#else
#define COLOCATE_HAVE_STATIC_K 0
#define COLOCATE_HAVE_STATIC_CONTROLLER 0
#endif

namespace colo {

// A controller running in an epoch loop; start() applies its first allocation.
class Loop {
 public:
  virtual ~Loop() = default;
  virtual void start() = 0;
  virtual void stop() = 0;
  virtual std::vector<ptb::qos::EpochRecord> history() const = 0;
};

template <class Ctl>
class LoopOf : public Loop {
 public:
  LoopOf(Ctl ctl, ptb::qos::LatencyLog& log, ptb::qos::EpochLoop::Hooks hooks, std::chrono::microseconds epoch)
      : ctl_(std::move(ctl)), loop_(ctl_, log, std::move(hooks), epoch) {}
  void start() override { loop_.start(); }
  void stop() override { loop_.stop(); }
  std::vector<ptb::qos::EpochRecord> history() const override { return loop_.history(); }

 private:
  Ctl ctl_;  // before loop_: the loop holds a reference to it
  ptb::qos::EpochLoop loop_;
};

struct LoopParams {
  unsigned total = 0;    // SMs of the device
  double target = 0;     // LS p99 target, microseconds
  unsigned step = 2;     // SMs moved at a time (2: a whole TPC)
  unsigned static_k = 0; // static: SMs kept free of BE
  unsigned max_cap = 0;  // gspace: BE's blocks per SM at full occupancy
  std::chrono::microseconds epoch{4000};
};

inline bool gspace_built() { return COLOCATE_HAVE_GSPACE != 0; }

// The loop for `policy` ("feedback", "gspace", "static"); nullptr where the policy runs without one
// (static before StaticPartition exists) or is not built (gspace before gspace.h exists).
inline std::unique_ptr<Loop> make_loop(const std::string& policy, const LoopParams& p, ptb::qos::LatencyLog& log,
                                       ptb::qos::EpochLoop::Hooks hooks) {
  if (policy == "feedback") {
    ptb::qos::FeedbackConfig c;
    c.total = p.total;
    c.target = p.target;
    c.step = p.step;
    return std::make_unique<LoopOf<ptb::qos::FeedbackController>>(ptb::qos::FeedbackController(c), log,
                                                                  std::move(hooks), p.epoch);
  }
#if COLOCATE_HAVE_GSPACE
  if (policy == "gspace") {
    ptb::qos::GSpaceConfig c;
    c.total = p.total;
    c.target = p.target;
    c.max_cap = p.max_cap;
    c.n_step = p.step;
    c.start_n = 0;  // start from BE everywhere, uncapped: the search walks towards LS as LS misses
    c.start_k = p.max_cap;
    return std::make_unique<LoopOf<ptb::qos::GSpaceController>>(ptb::qos::GSpaceController(c), log,
                                                               std::move(hooks), p.epoch);
  }
#endif
#if COLOCATE_HAVE_STATIC_CONTROLLER
  if (policy == "static")
    return std::make_unique<LoopOf<ptb::qos::StaticPartition>>(ptb::qos::StaticPartition(p.total, p.static_k), log,
                                                               std::move(hooks), p.epoch);
#endif
  (void)log;
  (void)hooks;
  return nullptr;
}

// The smallest k (a multiple of `step`, BE keeping at least `step` SMs) for which the LS p99 measured with
// BE confined to SMs [k, total) is at most `target`, by bisection over k (the LS latency is taken to fall
// as k grows); the largest k when none meets it. `ls_p99_at(k)` runs one short measurement.
inline unsigned static_k_search(unsigned total, double target, const std::function<double(unsigned)>& ls_p99_at,
                                unsigned step) {
  step = step ? step : 1;
  const unsigned n = (total - step) / step;  // candidates 0, step, ..., n * step
  if (ls_p99_at(n * step) > target) return n * step;
  if (ls_p99_at(0) <= target) return 0;
  unsigned lo = 0, hi = n;  // lo misses, hi meets
  while (hi - lo > 1) {
    const unsigned mid = (lo + hi) / 2;
    (ls_p99_at(mid * step) <= target ? hi : lo) = mid;
  }
  return hi * step;
}

// k for the static partition, at most total - step (BE keeps some SMs: a k of `total` would pause BE).
inline unsigned static_partition_k(unsigned total, double target, const std::function<double(unsigned)>& ls_p99_at,
                                   unsigned step) {
  step = step ? step : 1;
#if COLOCATE_HAVE_STATIC_K
  // scans k = 0, step, ... up to the limit; answers the limit when none meets the target
  const unsigned limit = total > step ? total - step : 0;
  return std::min(limit, static_cast<unsigned>(ptb::qos::static_partition_k(limit, target, ls_p99_at, step)));
#else
  return static_k_search(total, target, ls_p99_at, step);
#endif
}

inline const char* static_k_source() {
  return COLOCATE_HAVE_STATIC_K ? "ptb::qos::static_partition_k" : "static_k_search (bench/colocate/controllers.h)";
}

}  // namespace colo

// bench/colocate/controllers.h: the QoS controllers under test, each behind one small interface (Loop), so
// that colocate.cu runs them all the same way: a controller in a ptb::qos::EpochLoop whose `apply` hook
// is ptb::qos::apply_to_be(BE's policy).
//
// The controllers (runtime/include/ptb/qos):
//   feedback  ptb::qos::FeedbackController (feedback.h).
//   gspace    ptb::qos::GSpaceController (gspace.h): BE on every SM, capped at k workers on n SMs, (n, k)
//             searched from (0, max_cap).
//   static    ptb::qos::StaticPartition (static_partition.h) with k from a profile (colocate.cu):
//             ptb::qos::static_partition_k, the smallest k, in steps, whose profiled LS latency meets the
//             target.
#pragma once
#include <chrono>
#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ptb/qos/apply.cuh>  // the controllers, the epoch loop, apply_to_be

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
  LoopOf(Ctl ctl, ptb::qos::LatencyLog& log, ptb::qos::EpochLoop::Hooks hooks, std::chrono::microseconds epoch,
         size_t window)
      : ctl_(std::move(ctl)), loop_(ctl_, log, std::move(hooks), epoch, 0.99, window) {}
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
  size_t window = 0;     // the LS p99 over the last `window` requests (0: one epoch's)
};


// The loop for `policy` ("feedback", "gspace", "static"); nullptr for any other name.
inline std::unique_ptr<Loop> make_loop(const std::string& policy, const LoopParams& p, ptb::qos::LatencyLog& log,
                                       ptb::qos::EpochLoop::Hooks hooks) {
  if (policy == "feedback") {
    ptb::qos::FeedbackConfig c;
    c.total = p.total;
    c.target = p.target;
    c.step = p.step;
    return std::make_unique<LoopOf<ptb::qos::FeedbackController>>(ptb::qos::FeedbackController(c), log,
                                                                  std::move(hooks), p.epoch, p.window);
  }
  if (policy == "gspace") {
    ptb::qos::GSpaceConfig c;
    c.total = p.total;
    c.target = p.target;
    c.max_cap = p.max_cap;
    c.n_step = p.step;
    c.start_n = 0;  // start from BE everywhere, uncapped: the search walks towards LS as LS misses
    c.start_k = p.max_cap;
    return std::make_unique<LoopOf<ptb::qos::GSpaceController>>(ptb::qos::GSpaceController(c), log,
                                                               std::move(hooks), p.epoch, p.window);
  }
  if (policy == "static")
    return std::make_unique<LoopOf<ptb::qos::StaticPartition>>(ptb::qos::StaticPartition(p.total, p.static_k), log,
                                                               std::move(hooks), p.epoch, p.window);
  return nullptr;
}

// k for the static partition, at most total - step (BE keeps some SMs: a k of `total` would pause BE).
inline unsigned static_partition_k(unsigned total, double target, const std::function<double(unsigned)>& ls_p99_at,
                                   unsigned step) {
  step = step ? step : 1;
  // scans k = 0, step, ... up to the limit; answers the limit when none meets the target
  const unsigned limit = total > step ? total - step : 0;
  return std::min(limit, static_cast<unsigned>(ptb::qos::static_partition_k(limit, target, ls_p99_at, step)));
}

}  // namespace colo

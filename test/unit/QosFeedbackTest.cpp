// The feedback controller's decision core (runtime/include/ptb/qos/feedback.h) against simulated GPUs:
// an LS service whose latency depends on the SMs kept free for it, and BE work whose throughput grows
// with its SMs (compute-bound) or stops growing at some count (memory-bound). Each test checks what the
// controller must reach, not the path: LS inside its target with few misses, BE with every SM it can use
// and no more, BE never below its floor, no SM counted twice.
#include "ptb/qos/feedback.h"

#include "QosSimulatedLs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>

namespace {

using ptb::qos::Allocation;
using ptb::qos::EpochSample;
using ptb::qos::FeedbackConfig;
using ptb::qos::FeedbackController;

constexpr unsigned kSms = 132;
constexpr double kTarget = 100; // us

// The simulated LS service (QosSimulatedLs.h), needing `need` SMs free of BE.
struct LsModel {
  unsigned need;
  double operator()(unsigned ls, std::mt19937 &rng) const {
    return qos_test::simulatedLsLatency(kTarget, need, ls, rng);
  }
};

// Runs `epochs` epochs; `need(e)` gives the LS need at epoch e, `rate(be)` BE's throughput. Returns the
// misses in the last `tail` epochs. Checks every allocation's sum and BE's floor on the way.
struct Simulation {
  FeedbackController ctl;
  std::mt19937 rng{12345};
  unsigned misses(unsigned epochs, const std::function<unsigned(unsigned)> &need,
                  const std::function<double(unsigned)> &rate, unsigned tail, unsigned floor = 1) {
    unsigned missed = 0;
    for (unsigned e = 0; e < epochs; ++e) {
      const Allocation a = ctl.allocation();
      EXPECT_EQ(a.ls + a.be + a.idle, kSms) << "epoch " << e;
      EXPECT_GE(a.be, floor) << "epoch " << e;
      const double lat = LsModel{need(e)}(a.ls, rng);
      if (e >= epochs - tail && lat > kTarget) ++missed;
      ctl.epoch({lat, rate(a.be), true});
    }
    return missed;
  }
};

FeedbackConfig config() {
  FeedbackConfig c;
  c.total = kSms;
  c.target = kTarget;
  return c;
}

double computeBound(unsigned be) { return 10.0 * be; }
double memoryBound(unsigned be) { return 10.0 * std::min(be, 40u); }

TEST(QosFeedback, ComputeBoundBeGetsEverySmLsDoesNotNeed) {
  Simulation r{FeedbackController(config())};
  const unsigned missed = r.misses(400, [](unsigned) { return 20u; }, computeBound, 200);
  const Allocation a = r.ctl.allocation();
  EXPECT_GE(a.ls, 19u);
  EXPECT_LE(a.ls, 21u);
  EXPECT_EQ(a.idle, 0u) << "a compute-bound BE takes every SM LS gives back";
  EXPECT_EQ(a.be, kSms - a.ls);
  EXPECT_LE(missed, 20u) << "LS missed its target in " << missed << " of the last 200 epochs";
  EXPECT_TRUE(r.ctl.lower_found());
  EXPECT_FALSE(r.ctl.upper_found());
}

TEST(QosFeedback, MemoryBoundBeGetsItsBestCountAndTheRestStaysIdle) {
  // LS first needs 100 SMs (BE squeezed under its best count of 40), then 10.
  Simulation r{FeedbackController(config())};
  r.misses(300, [](unsigned e) { return e < 150 ? 100u : 10u; }, memoryBound, 0);
  const Allocation a = r.ctl.allocation();
  EXPECT_TRUE(r.ctl.upper_found());
  EXPECT_TRUE(r.ctl.lower_found());
  EXPECT_EQ(r.ctl.best_be(), 40u);
  EXPECT_EQ(a.be, 40u);
  EXPECT_LE(a.ls, 12u);
  EXPECT_GE(a.idle, kSms - 40 - 12) << "SMs that give BE nothing stay idle";
}

TEST(QosFeedback, AnUnreachableTargetTakesEverythingButBesFloor) {
  FeedbackConfig c = config();
  c.be_floor = 4;
  FeedbackController ctl(c);
  for (int e = 0; e < 300; ++e) ctl.epoch({2 * kTarget, computeBound(ctl.allocation().be), true});
  EXPECT_EQ(ctl.allocation().be, 4u);
  EXPECT_EQ(ctl.allocation().ls, kSms - 4);
  EXPECT_TRUE(ctl.saturated());
}

TEST(QosFeedback, ALsServiceThatStopsGivesItsSmsBackAfterTheQuietEpochs) {
  FeedbackConfig c = config();
  c.ls_initial = 60;
  c.release_after_quiet = 5;
  FeedbackController ctl(c);
  EXPECT_EQ(ctl.allocation().ls, 60u);
  for (int e = 0; e < 5; ++e) ctl.epoch({0, computeBound(ctl.allocation().be), false});
  EXPECT_EQ(ctl.allocation().ls, 60u) << "a few quiet epochs keep the reservation";
  for (int e = 0; e < 200; ++e) ctl.epoch({0, computeBound(ctl.allocation().be), false});
  EXPECT_EQ(ctl.allocation().ls, 0u);
  EXPECT_EQ(ctl.allocation().be, kSms);
}

TEST(QosFeedback, WholeTpcStepsKeepEvenCounts) {
  FeedbackConfig c = config();
  c.step = 2;
  Simulation r{FeedbackController(c)};
  for (unsigned e = 0; e < 300; ++e) {
    r.misses(1, [&](unsigned) { return e < 150 ? 37u : 15u; }, computeBound, 0);
    EXPECT_EQ(r.ctl.allocation().ls % 2, 0u) << "epoch " << e;
  }
  EXPECT_GE(r.ctl.allocation().ls, 16u);
  EXPECT_LE(r.ctl.allocation().ls, 18u);
}

TEST(QosFeedback, GivingBackNeedsHeadroomInTheEpochAndTheMean) {
  // A latency at 95% of the target is a hit, but without the 10% headroom: nothing is given back.
  FeedbackConfig c = config();
  c.ls_initial = 30;
  FeedbackController ctl(c);
  for (int e = 0; e < 50; ++e) ctl.epoch({0.95 * kTarget, computeBound(ctl.allocation().be), true});
  EXPECT_EQ(ctl.allocation().ls, 30u);
  // One epoch far over the target lifts the running mean: the good epochs after it still take while the
  // mean is above the target, and give back only once it is under the limit (with weight 1/8: 188 us
  // after the spike, 50 us epochs, 9 epochs to get under 90 us).
  ctl.epoch({10 * kTarget, computeBound(ctl.allocation().be), true});
  EXPECT_EQ(ctl.allocation().ls, 31u);
  unsigned most = 31, first_give_back = 0;
  for (unsigned e = 1; e <= 30; ++e) {
    const unsigned before = ctl.allocation().ls;
    ctl.epoch({0.5 * kTarget, computeBound(ctl.allocation().be), true});
    most = std::max(most, ctl.allocation().ls);
    if (!first_give_back && ctl.allocation().ls < before) first_give_back = e;
  }
  EXPECT_GT(most, 31u) << "a mean over the target counts as a miss";
  EXPECT_GE(first_give_back, 9u);
  EXPECT_LE(first_give_back, 12u);
  EXPECT_LT(ctl.allocation().ls, most);
}

TEST(QosFeedback, AGiveBackThatMissesHoldsTheNextOnesLongerEachTime) {
  // LS needs exactly 20 SMs and has headroom there: without the hold it would probe 19 every other epoch.
  FeedbackConfig c = config();
  c.ls_initial = 20;
  FeedbackController ctl(c);
  std::mt19937 rng(7);
  unsigned misses = 0, probes = 0;
  for (unsigned e = 0; e < 300; ++e) {
    const unsigned ls = ctl.allocation().ls;
    const double lat = LsModel{20}(ls, rng);
    misses += lat > kTarget;
    ctl.epoch({lat, computeBound(ctl.allocation().be), true});
    probes += ctl.allocation().ls < ls;
  }
  EXPECT_LE(misses, 12u) << "each probe below the need costs one miss, and they get rarer";
  EXPECT_LE(probes, 12u);
  EXPECT_GE(ctl.allocation().ls, 19u);
}

} // namespace

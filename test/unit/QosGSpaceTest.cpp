// G-Space yielding's search (runtime/include/ptb/qos/gspace.h) against simulated GPUs: an LS service
// whose latency depends on the BE worker slots the configuration leaves it (it meets the target with
// `need` slots yielded, and misses by up to 60% with fewer), and a compute-bound BE whose throughput is
// the worker slots it keeps. Each test checks what the search must reach, not its path: LS inside its
// target with few misses, BE not squeezed much beyond LS's need, every configuration on the grid.
#include "ptb/qos/gspace.h"

#include "QosSimulatedLs.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>

namespace {

using ptb::qos::Allocation;
using ptb::qos::GSpaceConfig;
using ptb::qos::GSpaceController;

constexpr unsigned kSms = 132, kCap = 8; // an H100, BE at 8 workers per SM
constexpr double kTarget = 100;          // us

GSpaceConfig config(unsigned start_n = 0, unsigned start_k = kCap) {
  GSpaceConfig c;
  c.total = kSms;
  c.target = kTarget;
  c.max_cap = kCap;
  c.start_n = start_n;
  c.start_k = start_k;
  return c;
}

// The simulated LS service (QosSimulatedLs.h), needing `need` worker slots yielded to it.
double lsLatency(unsigned need, unsigned yielded, std::mt19937 &rng) {
  return qos_test::simulatedLsLatency(kTarget, need, yielded, rng);
}

// Runs epochs with LS needing need(e) slots; checks every allocation on the way (BE on every SM, the
// subset on the grid and capped below full occupancy, at least one step of SMs never capped) and that the
// allocation is the configuration the controller reports. Returns the misses in the last `tail` epochs.
struct Simulation {
  GSpaceController ctl;
  std::mt19937 rng{12345};
  unsigned run(unsigned epochs, const std::function<unsigned(unsigned)> &need, unsigned tail = 0) {
    unsigned missed = 0;
    for (unsigned e = 0; e < epochs; ++e) {
      const Allocation a = ctl.allocation();
      EXPECT_EQ(a.ls, 0u) << "epoch " << e;
      EXPECT_EQ(a.be, kSms) << "epoch " << e;
      EXPECT_EQ(a.idle, 0u) << "epoch " << e;
      EXPECT_LE(a.shared, kSms - 2) << "epoch " << e;
      EXPECT_EQ(a.shared % 2, 0u) << "epoch " << e;
      EXPECT_LT(a.shared_cap, kCap) << "epoch " << e;
      if (a.shared == 0) { EXPECT_EQ(a.shared_cap, 0u) << "epoch " << e; }
      EXPECT_EQ(ctl.yielded(), a.shared * (kCap - a.shared_cap)) << "epoch " << e;
      const double lat = lsLatency(need(e), ctl.yielded(), rng);
      if (e >= epochs - tail && lat > kTarget) ++missed;
      ctl.epoch({lat, double(kSms * kCap - ctl.yielded()), true});
    }
    return missed;
  }
};

TEST(QosGSpace, ConvergesToAConfigurationThatMeetsTheTargetAndGivesBeTheRest) {
  Simulation r{GSpaceController(config())}; // start: no yielding, LS misses
  const unsigned missed = r.run(400, [](unsigned) { return 200u; }, 200);
  EXPECT_LE(missed, 12u) << "LS missed its target in " << missed << " of the last 200 epochs";
  EXPECT_GE(r.ctl.yielded(), 200u);
  EXPECT_LE(r.ctl.yielded(), 240u) << "BE gives up at most 20% more than LS needs (n " << r.ctl.n() << " k "
                                   << r.ctl.k() << ")";
  EXPECT_FALSE(r.ctl.saturated());
  EXPECT_STREQ(r.ctl.name(), "gspace");
}

TEST(QosGSpace, AStartThatMissesIsLeftWithinAFewEpochs) {
  // A profiled start (20 SMs at 4 workers: 80 slots) when LS needs 300: the search walks towards LS by
  // the most LS-friendly neighbour each epoch.
  Simulation r{GSpaceController(config(20, 4))};
  unsigned first_hit = 0;
  for (unsigned e = 0; e < 100 && !first_hit; ++e) {
    r.run(1, [](unsigned) { return 300u; });
    if (r.ctl.yielded() >= 300) first_hit = e + 1;
  }
  EXPECT_GT(first_hit, 0u);
  EXPECT_LE(first_hit, 10u);
}

TEST(QosGSpace, GivesBeMoreWhenTheLsLoadDrops) {
  Simulation r{GSpaceController(config(40, 2))};
  r.run(300, [](unsigned) { return 400u; });
  const unsigned heavy = r.ctl.yielded();
  EXPECT_GE(heavy, 400u);
  const unsigned missed = r.run(400, [](unsigned) { return 60u; }, 200);
  EXPECT_GE(r.ctl.yielded(), 60u);
  EXPECT_LE(r.ctl.yielded(), 80u) << "n " << r.ctl.n() << " k " << r.ctl.k();
  EXPECT_LE(missed, 12u);
}

TEST(QosGSpace, AnUnreachableTargetEndsAtTheMostLsFriendlyConfigurationSaturated) {
  GSpaceController ctl(config());
  for (int e = 0; e < 300; ++e) ctl.epoch({2 * kTarget, 1, true});
  EXPECT_TRUE(ctl.saturated());
  EXPECT_EQ(ctl.n(), kSms - 2) << "BE keeps one step of SMs at full occupancy (max_n)";
  EXPECT_EQ(ctl.k(), 0u);
  const Allocation a = ctl.allocation();
  EXPECT_EQ(a.shared, kSms - 2);
  EXPECT_EQ(a.shared_cap, 0u) << "k 0: those SMs are LS's alone";
  // one epoch that meets the target ends the saturation
  ctl.epoch({0.5 * kTarget, 1, true});
  EXPECT_FALSE(ctl.saturated());
}

TEST(QosGSpace, AStatedMaxNBoundsTheSubset) {
  GSpaceConfig c = config();
  c.max_n = 40;
  GSpaceController ctl(c);
  for (int e = 0; e < 100; ++e) ctl.epoch({2 * kTarget, 1, true});
  EXPECT_TRUE(ctl.saturated());
  EXPECT_EQ(ctl.n(), 40u);
  EXPECT_EQ(ctl.k(), 0u);
}

TEST(QosGSpace, QuietEpochsKeepTheConfigurationThenGiveBeItsRoomBack) {
  GSpaceConfig c = config(40, 2);
  c.release_after_quiet = 5;
  GSpaceController ctl(c);
  EXPECT_EQ(ctl.yielded(), 240u);
  for (int e = 0; e < 5; ++e) ctl.epoch({0, 1, false});
  EXPECT_EQ(ctl.n(), 40u) << "a few quiet epochs keep the configuration";
  EXPECT_EQ(ctl.k(), 2u);
  unsigned last = ctl.yielded();
  for (int e = 0; e < 100; ++e) {
    ctl.epoch({0, 1, false});
    EXPECT_LE(ctl.yielded(), last) << "quiet epochs only give back";
    last = ctl.yielded();
  }
  EXPECT_EQ(ctl.yielded(), 0u);
  EXPECT_EQ(ctl.allocation(), (Allocation{0, kSms, 0, 0, 0})) << "no SM capped";
  // the LS service comes back and misses: the search moves towards LS at once
  ctl.epoch({2 * kTarget, 1, true});
  EXPECT_GT(ctl.yielded(), 0u);
}

TEST(QosGSpace, AProbeThatMissesHoldsTheNextOnesLongerEachTime) {
  // LS meets its target with headroom from exactly 160 slots: every probe below costs a miss.
  Simulation r{GSpaceController(config(20, 0))};
  std::mt19937 rng(7);
  unsigned misses = 0, probes = 0;
  for (unsigned e = 0; e < 400; ++e) {
    const unsigned before = r.ctl.yielded();
    const double lat = lsLatency(160, before, rng);
    misses += lat > kTarget;
    r.ctl.epoch({lat, 1, true});
    probes += r.ctl.yielded() < before;
  }
  EXPECT_GE(r.ctl.yielded(), 160u);
  EXPECT_LE(misses, 15u) << "each probe below the need costs one miss, and they get rarer";
  EXPECT_LE(probes, 20u);
}

TEST(QosGSpace, TheStartIsClampedToTheGrid) {
  GSpaceConfig c = config(500, 99); // k at or above full occupancy: no yielding
  GSpaceController a(c);
  EXPECT_EQ(a.yielded(), 0u);
  EXPECT_EQ(a.allocation(), (Allocation{0, kSms, 0, 0, 0}));
  c.start_k = 3; // n beyond max_n: max_n
  GSpaceController b(c);
  EXPECT_EQ(b.n(), kSms - 2);
  EXPECT_EQ(b.k(), 3u);
  EXPECT_EQ(b.allocation(), (Allocation{0, kSms, 0, kSms - 2, 3}));
}

} // namespace

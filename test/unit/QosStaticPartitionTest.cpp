// The static partition (runtime/include/ptb/qos/static_partition.h): the allocation it keeps whatever
// the epochs measure, and static_partition_k, the smallest LS share that met the target in a profile
// (here a simulated LS latency against the SMs kept for LS, including one that is not monotone).
#include "ptb/qos/static_partition.h"

#include <gtest/gtest.h>

#include <vector>

namespace {

using ptb::qos::Allocation;
using ptb::qos::EpochSample;
using ptb::qos::static_partition_k;
using ptb::qos::StaticPartition;

TEST(QosStaticPartition, KeepsItsPartitionWhateverTheEpochsMeasure) {
  StaticPartition p(132, 40);
  const Allocation start = p.allocation();
  EXPECT_EQ(start, (Allocation{40, 92, 0, 0, 0}));
  for (double lat : {10.0, 1000.0, 0.0}) {
    EXPECT_EQ(p.epoch({lat, 5.0, true}), start);
    EXPECT_EQ(p.epoch({0, 0, false}), start);
  }
  EXPECT_EQ(p.allocation(), start);
  EXPECT_FALSE(p.saturated());
  EXPECT_STREQ(p.name(), "static");
}

TEST(QosStaticPartition, MoreSmsThanTheDeviceHasLeaveBeNone) {
  EXPECT_EQ(StaticPartition(132, 500).allocation(), (Allocation{132, 0, 0, 0, 0}));
  EXPECT_EQ(StaticPartition(132, 0).allocation(), (Allocation{0, 132, 0, 0, 0}));
}

// An LS service that needs `need` SMs: 80 us from there on, and 100 us more for each SM short of it.
double latency(unsigned need, unsigned ls) { return ls >= need ? 80.0 : 80.0 + 100.0 * (need - ls); }

TEST(QosStaticPartition, KIsTheSmallestStepWhoseProfiledLatencyMeetsTheTarget) {
  std::vector<unsigned> asked;
  auto profile = [&](unsigned ls) {
    asked.push_back(ls);
    return latency(37, ls);
  };
  EXPECT_EQ(static_partition_k(132, 100, profile, 2), 38u) << "37 SMs are needed: 38 in whole TPCs";
  ASSERT_FALSE(asked.empty());
  EXPECT_EQ(asked.front(), 0u) << "the search starts with no SM kept for LS";
  EXPECT_EQ(asked.back(), 38u);
  for (size_t i = 0; i < asked.size(); ++i) EXPECT_EQ(asked[i], 2 * i) << "upwards, one step at a time";
  EXPECT_EQ(static_partition_k(132, 100, profile, 1), 37u);
  EXPECT_EQ(static_partition_k(132, 100, profile, 5), 40u);
  EXPECT_EQ(static_partition_k(132, 100, [](unsigned ls) { return latency(0, ls); }), 0u) << "LS needs none";
}

TEST(QosStaticPartition, ANonMonotoneProfileGivesTheSmallestKThatMeets) {
  // Meets the target with 20-29 SMs, misses with 30-89 (more SMs hurt this LS service: G-Space 3.2
  // observes such kernels), meets again from 90. A bisection over [0, 132) would ask at 66 (a miss) and
  // never look below 30 on the way to 90.
  auto profile = [](unsigned ls) { return (ls >= 20 && ls < 30) || ls >= 90 ? 80.0 : 150.0; };
  EXPECT_EQ(static_partition_k(132, 100, profile, 2), 20u);
}

TEST(QosStaticPartition, NoShareMeetingTheTargetGivesEverySmWithoutAskingForIt) {
  std::vector<unsigned> asked;
  auto never = [&](unsigned ls) {
    asked.push_back(ls);
    return 1000.0;
  };
  EXPECT_EQ(static_partition_k(132, 100, never, 2), 132u);
  EXPECT_EQ(asked.size(), 66u) << "0, 2, ..., 130";
  EXPECT_EQ(asked.back(), 130u);
  asked.clear();
  EXPECT_EQ(static_partition_k(7, 100, never, 3), 7u);
  EXPECT_EQ(asked, (std::vector<unsigned>{0, 3, 6}));
  EXPECT_EQ(static_partition_k(132, 100, never, 0), 132u) << "a step of 0 is taken as 1";
}

} // namespace

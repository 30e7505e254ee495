// What the QoS controllers share (runtime/include/ptb/qos/controller.h): an Allocation's equality covers
// the shared subset, be_placement (what apply_to_be asks of BE's ptb::Policy) for each kind of
// allocation, and the epoch loop driving each controller through the one interface.
#include "ptb/qos/controller.h"
#include "ptb/qos/epoch_loop.h"
#include "ptb/qos/feedback.h"
#include "ptb/qos/gspace.h"
#include "ptb/qos/static_partition.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using ptb::SmSet;
using ptb::qos::Allocation;
using ptb::qos::be_placement;
using ptb::qos::BePlacement;

TEST(QosController, AllocationsDifferInTheSharedSubsetToo) {
  const Allocation a{0, 132, 0, 40, 2};
  EXPECT_EQ(a, (Allocation{0, 132, 0, 40, 2}));
  EXPECT_NE(a, (Allocation{0, 132, 0, 42, 2}));
  EXPECT_NE(a, (Allocation{0, 132, 0, 40, 3}));
  EXPECT_NE(a, (Allocation{0, 132, 0, 0, 0}));
  EXPECT_NE((Allocation{10, 122, 0}), (Allocation{12, 120, 0}));
}

TEST(QosController, PlacementWithoutASubsetIsBesRangeAndTheCallersCap) {
  const BePlacement p = be_placement({10, 100, 22}, 3);
  EXPECT_EQ(p.sms, SmSet::range(10, 110));
  EXPECT_EQ(p.per_sm, 3u);
  EXPECT_EQ(p.capped, SmSet::all());
  const BePlacement q = be_placement({0, 132, 0});
  EXPECT_EQ(q.sms, SmSet::range(0, 132));
  EXPECT_EQ(q.per_sm, 0u);
}

TEST(QosController, PlacementCapsTheSubsetNextToLsAndOnlyIt) {
  const BePlacement p = be_placement({4, 128, 0, 40, 2}, 7);
  EXPECT_EQ(p.sms, SmSet::range(4, 132));
  EXPECT_EQ(p.per_sm, 2u) << "the subset's cap, not the caller's";
  EXPECT_EQ(p.capped, SmSet::range(4, 44));
  // G-Space's form: BE on every SM, the lowest 40 capped
  const BePlacement g = be_placement({0, 132, 0, 40, 2});
  EXPECT_EQ(g.sms, SmSet::range(0, 132));
  EXPECT_EQ(g.capped.str(), "0-39");
  // a subset larger than BE's SMs is BE's SMs
  EXPECT_EQ(be_placement({0, 20, 112, 40, 1}).capped, SmSet::range(0, 20));
}

TEST(QosController, ACapOfZeroOnTheSubsetTakesItOutOfBesSms) {
  // a policy's per_sm 0 means "no cap": the subset must leave BE's set instead
  const BePlacement p = be_placement({0, 132, 0, 40, 0}, 5);
  EXPECT_EQ(p.sms, SmSet::range(40, 132));
  EXPECT_EQ(p.per_sm, 0u);
  EXPECT_EQ(p.capped, SmSet::all());
  EXPECT_TRUE(be_placement({0, 20, 112, 40, 0}).sms.empty());
}

TEST(QosController, TheEpochLoopDrivesEachControllerThroughTheOneInterface) {
  ptb::qos::FeedbackConfig fc;
  fc.total = 16;
  fc.target = 10;
  ptb::qos::GSpaceConfig gc;
  gc.total = 16;
  gc.target = 10;
  gc.max_cap = 4;
  std::vector<std::unique_ptr<ptb::qos::Controller>> ctls;
  ctls.emplace_back(new ptb::qos::FeedbackController(fc));
  ctls.emplace_back(new ptb::qos::StaticPartition(16, 6));
  ctls.emplace_back(new ptb::qos::GSpaceController(gc));
  std::vector<std::string> names;
  for (auto &c : ctls) {
    ptb::qos::LatencyLog log;
    std::vector<Allocation> applied;
    ptb::qos::EpochLoop loop(*c, log, {nullptr, [&](const Allocation &a) { applied.push_back(a); }, nullptr}, 1ms);
    const auto t0 = ptb::qos::EpochLoop::Clock::now();
    for (int e = 0; e < 3; ++e) {
      log.add(50); // a miss each epoch
      loop.step(t0 + (e + 1) * 1ms);
    }
    names.push_back(c->name());
    const auto h = loop.history();
    ASSERT_EQ(h.size(), 3u);
    EXPECT_EQ(h.back().decided, c->allocation()) << c->name();
    if (names.back() == "static") {
      EXPECT_TRUE(applied.empty()) << "a static partition never changes";
    } else {
      EXPECT_EQ(applied.size(), 3u) << c->name() << ": each miss moved towards LS and was applied";
    }
  }
  EXPECT_EQ(names, (std::vector<std::string>{"feedback", "static", "gspace"}));
}

} // namespace

// The epoch loop of the QoS controllers (runtime/include/ptb/qos/epoch_loop.h): what one epoch hands the
// controller (the percentile of the LS latencies logged in it, BE's rate from its progress count, a quiet
// epoch), that every change of the allocation is applied, and that the thread runs epochs until stopped. The controller
// is the real FeedbackController; the "GPU" is a pair of lambdas.
#include "ptb/qos/epoch_loop.h"
#include "ptb/qos/feedback.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using ptb::qos::Allocation;
using ptb::qos::EpochLoop;
using ptb::qos::FeedbackConfig;
using ptb::qos::FeedbackController;
using ptb::qos::LatencyLog;

FeedbackConfig config(unsigned total, double target) {
  FeedbackConfig c;
  c.total = total;
  c.target = target;
  return c;
}

TEST(QosEpochLoop, QuantileIsTheNearestRank) {
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    const size_t n = 1 + rng() % 300;
    std::vector<double> v(n);
    for (auto &x : v) x = double(rng() % 1000);
    std::vector<double> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    for (double p : {0.0, 0.5, 0.9, 0.99, 1.0}) {
      std::vector<double> w = v;
      const double q = ptb::qos::quantile(w, p);
      // at least p of the samples are <= q, and fewer than p are < q
      const size_t le = size_t(std::upper_bound(sorted.begin(), sorted.end(), q) - sorted.begin());
      const size_t lt = size_t(std::lower_bound(sorted.begin(), sorted.end(), q) - sorted.begin());
      EXPECT_GE(double(le), p * double(n) - 1e-9) << "n " << n << " p " << p;
      EXPECT_LT(double(lt), std::max(1.0, p * double(n))) << "n " << n << " p " << p;
    }
  }
  std::vector<double> none;
  EXPECT_EQ(ptb::qos::quantile(none, 0.99), 0.0);
}

// With a window, an epoch's latency is the quantile over the last `window` requests, not over the epoch's
// few: one slow request among 200 fast ones is not the window's p99, where it is the epoch's.
TEST(QosEpochLoop, AWindowSpansEpochs) {
  FeedbackController ctl(config(132, 100));
  LatencyLog log;
  EpochLoop loop(ctl, log, {nullptr, nullptr, nullptr}, 1ms, 0.99, 200);
  const auto t0 = EpochLoop::Clock::now();
  for (int e = 0; e < 10; ++e) { // 10 epochs of 20 requests of 50 us
    for (int i = 0; i < 20; ++i) log.add(50);
    loop.step(t0 + (e + 1) * 1ms);
  }
  for (int i = 0; i < 9; ++i) log.add(50);
  log.add(900); // one slow request in the 11th epoch
  loop.step(t0 + 11ms);
  loop.step(t0 + 12ms); // a quiet epoch: no latency, whatever the window holds
  auto h = loop.history();
  ASSERT_EQ(h.size(), 12u);
  EXPECT_DOUBLE_EQ(h[9].sample.ls_latency, 50.0);
  EXPECT_DOUBLE_EQ(h[10].sample.ls_latency, 50.0); // the 900 is 1 of the last 200: above the p99's rank
  EXPECT_EQ(h[10].ls_requests, 10u);
  EXPECT_FALSE(h[11].sample.ls_active);
  // Without the window the same epoch's p99 is the slow request.
  FeedbackController ctl2(config(132, 100));
  LatencyLog log2;
  EpochLoop plain(ctl2, log2, {nullptr, nullptr, nullptr}, 1ms, 0.99);
  for (int i = 0; i < 9; ++i) log2.add(50);
  log2.add(900);
  plain.step(t0 + 1ms);
  EXPECT_DOUBLE_EQ(plain.history()[0].sample.ls_latency, 900.0);
}

// Bad input is reported, once per transition: a target out of reach with BE at its floor, and an LS
// service that goes quiet (and each coming back).
TEST(QosEpochLoop, ReportsATargetOutOfReachAndAQuietService) {
  FeedbackConfig c = config(8, 100);
  c.be_floor = 2;
  FeedbackController ctl(c);
  LatencyLog log;
  std::vector<std::string> said;
  EpochLoop loop(ctl, log, {nullptr, nullptr, nullptr}, 1ms);
  loop.report_to([&](const std::string &m) { said.push_back(m); });
  const auto t0 = EpochLoop::Clock::now();
  int e = 0;
  auto epoch = [&](double latency, int requests) {
    for (int i = 0; i < requests; ++i) log.add(latency);
    loop.step(t0 + (++e) * 1ms);
  };
  for (int i = 0; i < 12; ++i) epoch(1000, 5); // 10x the target: LS takes 6 SMs, then BE is at its floor
  ASSERT_EQ(said.size(), 1u);
  EXPECT_NE(said[0].find("cannot be met"), std::string::npos) << said[0];
  EXPECT_NE(said[0].find("feedback"), std::string::npos) << said[0];
  EXPECT_EQ(loop.history().back().decided.be, 2u);
  // within the target: no longer saturated once the running mean is back under it too (about 22 epochs at
  // the default weight of 1/8)
  int good = 0;
  while (said.size() < 2 && good < 60) {
    epoch(50, 5);
    ++good;
  }
  ASSERT_EQ(said.size(), 2u);
  EXPECT_GT(good, 10);
  EXPECT_NE(said[1].find("within reach"), std::string::npos) << said[1];
  for (int i = 0; i < 9; ++i) epoch(0, 0);
  EXPECT_EQ(said.size(), 2u); // 9 quiet epochs: nothing yet
  epoch(0, 0);
  ASSERT_EQ(said.size(), 3u);
  EXPECT_NE(said[2].find("no LS request finished in 10 epochs"), std::string::npos) << said[2];
  for (int i = 0; i < 5; ++i) epoch(0, 0);
  EXPECT_EQ(said.size(), 3u); // once per quiet stretch
  epoch(50, 3);
  ASSERT_EQ(said.size(), 4u);
  EXPECT_NE(said[3].find("finish again"), std::string::npos) << said[3];
}

// BE that progresses while no launch ever ran under its policy is not PTB: said once after kQuietEpochs
// such epochs, and again (once) when its launches do run under the policy; BE that makes no progress, or
// whose launches run under the policy from the start, is never reported.
TEST(QosEpochLoop, ReportsBeWorkThatIsNotPtb) {
  std::mt19937 rng(std::random_device{}());
  const unsigned quiet_first = 1 + rng() % 5; // epochs of no BE progress before it starts (not counted)
  FeedbackController ctl(config(8, 100));
  LatencyLog log;
  double progress = 0, launches = 0;
  std::vector<std::string> said;
  EpochLoop loop(ctl, log, {[&] { return progress; }, nullptr, nullptr, [&] { return launches; }}, 1ms);
  loop.report_to([&](const std::string &m) { said.push_back(m); });
  const auto t0 = EpochLoop::Clock::now();
  int e = 0;
  auto epoch = [&](double work) {
    log.add(50);
    progress += work;
    loop.step(t0 + (++e) * 1ms);
  };
  for (unsigned i = 0; i < quiet_first + 20; ++i) epoch(0); // BE idle: nothing to say
  EXPECT_TRUE(said.empty()) << said[0];
  for (unsigned i = 0; i + 1 < EpochLoop::kQuietEpochs; ++i) epoch(1 + rng() % 100);
  EXPECT_TRUE(said.empty());
  epoch(1 + rng() % 100);
  ASSERT_EQ(said.size(), 1u);
  EXPECT_NE(said[0].find("not twins"), std::string::npos) << said[0];
  for (int i = 0; i < 30; ++i) epoch(1 + rng() % 100);
  EXPECT_EQ(said.size(), 1u); // once
  launches = 1 + rng() % 3;
  epoch(5);
  ASSERT_EQ(said.size(), 2u);
  EXPECT_NE(said[1].find("run under its policy now"), std::string::npos) << said[1];
  for (int i = 0; i < 30; ++i) epoch(1 + rng() % 100);
  EXPECT_EQ(said.size(), 2u);

  // Launches under the policy from the start: never reported, however long BE runs.
  FeedbackController ctl2(config(8, 100));
  double progress2 = 0;
  std::vector<std::string> said2;
  EpochLoop loop2(ctl2, log, {[&] { return progress2; }, nullptr, nullptr, [] { return 7.0; }}, 1ms);
  loop2.report_to([&](const std::string &m) { said2.push_back(m); });
  for (int i = 1; i <= 40; ++i) {
    log.add(50);
    progress2 += 10;
    loop2.step(t0 + i * 1ms);
  }
  EXPECT_TRUE(said2.empty()) << said2[0];
}

TEST(QosEpochLoop, ReportsBeLaunchesThatFellBack) {
  // BE's twins run under its policy, but some of its launches fall back to their original kernels
  // (ptb/fallback.cuh): reported when they start, once while they keep coming, again after a quiet spell.
  std::mt19937 rng(std::random_device{}());
  FeedbackController ctl(config(8, 100));
  LatencyLog log;
  double progress = 0, fallbacks = 0;
  std::vector<std::string> said;
  EpochLoop::Hooks hooks{[&] { return progress; }, nullptr, nullptr, [] { return 5.0; }};
  hooks.be_fallbacks = [&] { return fallbacks; };
  EpochLoop loop(ctl, log, hooks, 1ms);
  loop.report_to([&](const std::string &m) { said.push_back(m); });
  const auto t0 = EpochLoop::Clock::now();
  int e = 0;
  auto epoch = [&](double fell) {
    log.add(50);
    progress += 10;
    fallbacks += fell;
    loop.step(t0 + (++e) * 1ms);
  };
  for (int i = 0; i < 20; ++i) epoch(0);
  EXPECT_TRUE(said.empty()) << said[0];
  const unsigned first = 1 + rng() % 9;
  epoch(first);
  ASSERT_EQ(said.size(), 1u);
  EXPECT_NE(said[0].find(std::to_string(first) + " of BE's launches"), std::string::npos) << said[0];
  for (int i = 0; i < 30; ++i) epoch(1 + rng() % 3); // they keep coming: said once
  EXPECT_EQ(said.size(), 1u);
  for (unsigned i = 0; i < EpochLoop::kQuietEpochs; ++i) epoch(0);
  EXPECT_EQ(said.size(), 1u);
  epoch(2); // back after a quiet spell: said again
  ASSERT_EQ(said.size(), 2u);
  EXPECT_NE(said[1].find("2 of BE's launches"), std::string::npos) << said[1];
}

TEST(QosEpochLoop, OneEpochHandsTheControllerWhatWasLogged) {
  FeedbackController ctl(config(132, 100));
  LatencyLog log;
  double progress = 1000;
  std::vector<Allocation> applied;
  EpochLoop loop(ctl, log, {[&] { return progress; }, [&](const Allocation &a) { applied.push_back(a); }, nullptr}, 1ms,
                 0.99);
  const auto t0 = EpochLoop::Clock::now();
  // 101 requests: 1..100 us and one of 500 us; p99 by nearest rank is the ceil(0.99 * 101) = 100th
  // smallest: 100 us
  for (int i = 1; i <= 100; ++i) log.add(i);
  log.add(500);
  progress += 2000; // BE did 2000 units
  loop.step(t0 + 2ms);
  auto h = loop.history();
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].ls_requests, 101u);
  EXPECT_TRUE(h[0].sample.ls_active);
  EXPECT_DOUBLE_EQ(h[0].sample.ls_latency, 100.0);
  EXPECT_GT(h[0].sample.be_rate, 0.0);
  // within target (100 <= 100): no SM moves, nothing to apply
  EXPECT_EQ(h[0].decided.ls, 0u);
  EXPECT_EQ(h[0].decided.be, 132u);
  EXPECT_TRUE(applied.empty());
  // a missing epoch: LS takes one SM, and that is applied
  log.add(150);
  loop.step(t0 + 4ms);
  ASSERT_EQ(applied.size(), 1u);
  EXPECT_EQ(applied[0].ls, 1u);
  EXPECT_EQ(applied[0].be, 131u);
  // the log was emptied by each epoch: a quiet epoch follows
  loop.step(t0 + 6ms);
  h = loop.history();
  ASSERT_EQ(h.size(), 3u);
  EXPECT_FALSE(h[2].sample.ls_active);
  EXPECT_EQ(h[2].ls_requests, 0u);
  EXPECT_DOUBLE_EQ(h[2].sample.be_rate, 0.0); // no progress in it
}

TEST(QosEpochLoop, BeRateIsProgressPerSecond) {
  FeedbackController ctl(config(16, 10));
  LatencyLog log;
  double progress = 0;
  EpochLoop loop(ctl, log, {[&] { return progress; }, nullptr, nullptr}, 1ms);
  const auto t0 = EpochLoop::Clock::now();
  loop.step(t0); // the first epoch measures from construction: establish a known start
  progress = 50;
  loop.step(t0 + 5ms);
  const auto h = loop.history();
  ASSERT_EQ(h.size(), 2u);
  EXPECT_NEAR(h[1].sample.be_rate, 50 / 0.005, 1e-6);
}

TEST(QosEpochLoop, CollectRunsFirstInEachEpoch) {
  FeedbackController ctl(config(8, 10));
  LatencyLog log;
  int collected = 0;
  EpochLoop loop(ctl, log,
                 {nullptr, nullptr,
                  [&] {
                    ++collected;
                    log.add(20);
                  }},
                 1ms);
  loop.step(EpochLoop::Clock::now());
  EXPECT_EQ(collected, 1);
  const auto h = loop.history();
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].ls_requests, 1u); // what collect logged counted in the same epoch
  EXPECT_EQ(h[0].decided.ls, 1u);  // 20 > 10: a miss
}

TEST(QosEpochLoop, ThreadAppliesTheStartAndRunsEpochsUntilStopped) {
  FeedbackController ctl(config(32, 10));
  LatencyLog log;
  std::atomic<int> applied{0};
  EpochLoop loop(ctl, log, {nullptr, [&](const Allocation &) { ++applied; }, [&] { log.add(50); }}, 1ms);
  loop.start();
  for (int i = 0; i < 200 && loop.history().size() < 5; ++i) std::this_thread::sleep_for(5ms);
  loop.stop();
  const size_t epochs = loop.history().size();
  ASSERT_GE(epochs, 5u);
  // every epoch missed (50 > 10): LS took one SM per epoch, up to BE's floor; each change was applied,
  // after the start's
  EXPECT_EQ(loop.history().back().decided.ls, std::min<unsigned>(unsigned(epochs), 31u));
  EXPECT_EQ(applied.load(), 1 + int(std::min<size_t>(epochs, 31)));
  std::this_thread::sleep_for(10ms);
  EXPECT_EQ(loop.history().size(), epochs); // stopped: no more epochs
}

} // namespace

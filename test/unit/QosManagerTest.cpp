// Unit tests of ptb/qos/manager.h (Tacker's fuse-or-reorder manager) on synthetic BE jobs: two kernels
// whose launch times are known functions of their task counts, with noise, and a fused kernel that wins
// or loses against the two in turn. The manager learns its models from the timings the tests feed back,
// as the GPU driver (bench/colocate) does. Fresh random inputs each run; the seed is printed (set
// PTB_TEST_SEED to repeat a run).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "TestSeed.h"
#include "ptb/qos/manager.h"

namespace {

using ptb::qos::BeAction;
using ptb::qos::BeDecision;
using ptb::qos::BeHead;
using ptb::qos::FuseOrReorderManager;

// Two jobs: job 0 (a GEMM-like kernel) 40 ns a task + 5 us, job 1 (an FMA-like kernel) 9 ns a task + 4 us;
// the fused kernel takes `fused_factor` x the two in turn. Each timing gets +-2% of noise.
struct Gpu {
  std::mt19937 g;
  double fused_factor;
  Gpu(unsigned seed, double factor) : g(seed), fused_factor(factor) {}
  double noise() { return std::uniform_real_distribution<double>(0.98, 1.02)(g); }
  static double t0(double tasks) { return 5000 + 40 * tasks; }
  static double t1(double tasks) { return 4000 + 9 * tasks; }
  double single(unsigned job, double tasks) { return (job == 0 ? t0(tasks) : t1(tasks)) * noise(); }
  double fused(double a, double b) { return fused_factor * (t0(a) + t1(b)) * noise(); }
  double tasks() {
    return std::round(std::exp(std::uniform_real_distribution<double>(std::log(256), std::log(65536))(g)));
  }
};

// What run_idle launched: fused launches (of them, those made to explore the fused kernel, and the step of
// the last one) and single launches.
struct IdleRun {
  int fused = 0, explored = 0, last_fused = -1, singles = 0;
};

// Runs the manager with LS idle (headroom kIdle) for `steps` decisions, feeding back what it launched.
void run_idle(FuseOrReorderManager &m, Gpu &gpu, int steps, IdleRun *run = nullptr) {
  IdleRun local;
  IdleRun &r = run ? *run : local;
  BeHead heads[2] = {{true, gpu.tasks()}, {true, gpu.tasks()}};
  for (int i = 0; i < steps; ++i) {
    const BeDecision d = m.decide(heads, FuseOrReorderManager::kIdle);
    ASSERT_NE(d.action, BeAction::hold) << "step " << i << ": both jobs wait and LS is idle";
    if (d.action == BeAction::fused) {
      m.observe_fused(heads[0].tasks, heads[1].tasks, gpu.fused(heads[0].tasks, heads[1].tasks));
      heads[0].tasks = gpu.tasks();
      heads[1].tasks = gpu.tasks();
      ++r.fused;
      if (std::string(d.why) == "explore-fused") ++r.explored;
      r.last_fused = i;
    } else {
      m.observe_single(d.job, heads[d.job].tasks, gpu.single(d.job, heads[d.job].tasks));
      heads[d.job].tasks = gpu.tasks();
      ++r.singles;
    }
  }
}

TEST(QosManager, HoldsWhenNothingWaits) {
  FuseOrReorderManager m;
  BeHead heads[2] = {};
  const BeDecision d = m.decide(heads, FuseOrReorderManager::kIdle);
  EXPECT_EQ(d.action, BeAction::hold);
  EXPECT_STREQ(d.why, "empty");
}

TEST(QosManager, ExploresEachJobOnlyWhileLsIsIdle) {
  FuseOrReorderManager m;
  BeHead heads[2] = {{true, 1000}, {true, 1000}};
  // an LS request in flight with 50 us of headroom: nothing is known, so nothing is bet on it
  BeDecision d = m.decide(heads, 50e3);
  EXPECT_EQ(d.action, BeAction::hold);
  EXPECT_STREQ(d.why, "no-headroom");
  // LS idle: job 0 is explored first, then job 1 once job 0 has its samples
  d = m.decide(heads, FuseOrReorderManager::kIdle);
  EXPECT_EQ(d.action, BeAction::single);
  EXPECT_EQ(d.job, 0u);
  EXPECT_STREQ(d.why, "explore");
  for (int i = 0; i < 8; ++i) m.observe_single(0, 1000.0 * (i + 1), Gpu::t0(1000.0 * (i + 1)));
  d = m.decide(heads, FuseOrReorderManager::kIdle);
  EXPECT_EQ(d.action, BeAction::single);
  EXPECT_EQ(d.job, 1u);
  EXPECT_STREQ(d.why, "explore");
}

TEST(QosManager, FusesWhenTheFusedKernelWins) {
  Gpu gpu(test_seed("FusesWhenTheFusedKernelWins"), 0.80);
  FuseOrReorderManager m;
  IdleRun r;
  run_idle(m, gpu, 300, &r);
  ASSERT_TRUE(m.fused_trusted()) << "fused samples " << m.fused_model().samples() << ", leave-one-out error "
                                 << m.fused_model().loo_error() << ", job models "
                                 << m.job_model(0).confidence().loo_error << " "
                                 << m.job_model(1).confidence().loo_error;
  // after learning, the fused kernel is chosen for every pair of waiting launches in the trusted range
  BeHead heads[2] = {{true, 4096}, {true, 8192}};
  const BeDecision d = m.decide(heads, FuseOrReorderManager::kIdle);
  EXPECT_EQ(d.action, BeAction::fused);
  EXPECT_STREQ(d.why, "fused");
  const double seq = Gpu::t0(4096) + Gpu::t1(8192);
  EXPECT_NEAR(d.predicted_ns / seq, 0.80, 0.05);
  EXPECT_GT(r.fused, 200) << "singles " << r.singles;
}

// ManagerConfig::fuse = false: the same jobs, a fused kernel that would win, and no fused launch.
TEST(QosManager, NeverFusesWhenFusingIsOff) {
  Gpu gpu(test_seed("NeverFusesWhenFusingIsOff"), 0.70);
  ptb::qos::ManagerConfig c;
  c.fuse = false;
  FuseOrReorderManager m(ptb::qos::DurationModel(), ptb::qos::DurationModel(), c);
  IdleRun run;
  run_idle(m, gpu, 300, &run);
  EXPECT_EQ(run.fused, 0);
  EXPECT_EQ(run.singles, 300);
}

TEST(QosManager, DoesNotFuseWhenFusingLoses) {
  Gpu gpu(test_seed("DoesNotFuseWhenFusingLoses"), 1.10);
  FuseOrReorderManager m;
  IdleRun r;
  run_idle(m, gpu, 300, &r);
  BeHead heads[2] = {{true, 4096}, {true, 8192}};
  EXPECT_FALSE(m.fused_wins(4096, 8192));
  EXPECT_NE(m.decide(heads, FuseOrReorderManager::kIdle).action, BeAction::fused);
  // Exploring the fused kernel stops after at most explore_limit launches. A fused model trusted early, on
  // rough part models, may still pick the fused kernel a few times before its samples show it loses
  // (seen: 2 such launches, seed 2993903691), but fusing stops: none in the last 200 steps.
  EXPECT_LE(r.explored, int(m.config().explore_limit));
  EXPECT_LT(r.last_fused, 100) << r.fused << " fused launches, " << r.explored << " to explore";
  EXPECT_GT(r.singles, 250);
}

TEST(QosManager, ReordersTheShortestLaunchIntoTheHeadroom) {
  Gpu gpu(test_seed("ReordersTheShortestLaunchIntoTheHeadroom"), 1.10);
  FuseOrReorderManager m;
  run_idle(m, gpu, 300);
  // job 0 with 8192 tasks: ~333 us; job 1 with 4096 tasks: ~41 us
  BeHead heads[2] = {{true, 8192}, {true, 4096}};
  // each job alone waiting once: each runs, so neither has been passed over when the tests below start
  const BeHead only0[2] = {{true, 8192}, {false, 0}}, only1[2] = {{false, 0}, {true, 4096}};
  ASSERT_EQ(m.decide(only0, FuseOrReorderManager::kIdle).job, 0u);
  ASSERT_EQ(m.decide(only1, FuseOrReorderManager::kIdle).job, 1u);
  BeDecision d = m.decide(heads, 100e3); // 100 us of headroom: only job 1's launch fits
  EXPECT_EQ(d.action, BeAction::single);
  EXPECT_EQ(d.job, 1u);
  EXPECT_STREQ(d.why, "shortest");
  d = m.decide(heads, 20e3); // 20 us: nothing fits
  EXPECT_EQ(d.action, BeAction::hold);
  EXPECT_STREQ(d.why, "no-headroom");
  d = m.decide(heads, 1e6); // 1 ms: both fit; the shorter first
  EXPECT_EQ(d.action, BeAction::single);
  EXPECT_EQ(d.job, 1u);
}

TEST(QosManager, NoJobStarves) {
  Gpu gpu(test_seed("NoJobStarves"), 1.10);
  FuseOrReorderManager m;
  run_idle(m, gpu, 300);
  // job 1's launches are always the shorter ones; job 0 must still run every max_passes + 1 decisions
  BeHead heads[2] = {{true, 8192}, {true, 1024}};
  int ran0 = 0, longest_wait = 0, wait = 0;
  for (int i = 0; i < 100; ++i) {
    const BeDecision d = m.decide(heads, FuseOrReorderManager::kIdle);
    ASSERT_EQ(d.action, BeAction::single);
    if (d.job == 0) {
      ++ran0;
      wait = 0;
    } else {
      longest_wait = std::max(longest_wait, ++wait);
    }
  }
  EXPECT_GE(ran0, 100 / int(m.config().max_passes + 1));
  EXPECT_LE(longest_wait, int(m.config().max_passes));
}

// A job whose launch times never settle within the tolerance (+-60% of noise) is explored at most
// explore_limit times; the other job is not starved meanwhile (found in bench/colocate: the
// WMMA job's model stayed untrusted at full occupancy and it ran alone for a whole window).
TEST(QosManager, ExplorationOfANoisyJobIsBounded) {
  std::mt19937 g(test_seed("ExplorationOfANoisyJobIsBounded"));
  std::uniform_real_distribution<double> wild(0.4, 1.6);
  auto tasks = [&] {
    return std::round(std::exp(std::uniform_real_distribution<double>(std::log(256), std::log(65536))(g)));
  };
  FuseOrReorderManager m;
  BeHead heads[2] = {{true, tasks()}, {true, tasks()}};
  int launched[2] = {0, 0}; // a fused launch counts for both jobs
  for (int i = 0; i < 400; ++i) {
    const BeDecision d = m.decide(heads, FuseOrReorderManager::kIdle);
    ASSERT_NE(d.action, BeAction::hold) << "step " << i << ": both jobs wait and LS is idle";
    if (d.action == BeAction::fused) {
      m.observe_fused(heads[0].tasks, heads[1].tasks, (Gpu::t0(heads[0].tasks) + Gpu::t1(heads[1].tasks)) * wild(g));
      ++launched[0], ++launched[1];
      heads[0].tasks = tasks();
      heads[1].tasks = tasks();
      continue;
    }
    ++launched[d.job];
    const double ns = d.job == 0 ? Gpu::t0(heads[0].tasks) * wild(g) : Gpu::t1(heads[1].tasks);
    m.observe_single(d.job, heads[d.job].tasks, ns);
    heads[d.job].tasks = tasks();
  }
  // at most 24 lone launches explore job 0, then the jobs take turns (a launch passed over 4 times goes
  // first); without the bound job 0 ran alone all along (job 1: 0 launches)
  EXPECT_GE(launched[1], 400 / 5) << "job 0 " << launched[0] << ", job 1 " << launched[1] << "; job 0's model: loo "
                                  << m.job_model(0).confidence().loo_error;
}

TEST(QosManager, YieldsWhenALaunchCannotEndInTimeOrIsLate) {
  FuseOrReorderManager m;
  const double kIdle = FuseOrReorderManager::kIdle;
  EXPECT_FALSE(m.should_yield(10e3, 100e3, kIdle)); // no LS request: never
  EXPECT_TRUE(m.should_yield(10e3, 100e3, 50e3));   // 90 us left, 50 us of headroom
  EXPECT_FALSE(m.should_yield(80e3, 100e3, 50e3));  // 20 us left
  EXPECT_TRUE(m.should_yield(130e3, 100e3, 50e3));  // late: 30% past its prediction
  EXPECT_TRUE(m.should_yield(1e3, 0, 50e3));        // nothing known of it
}

} // namespace

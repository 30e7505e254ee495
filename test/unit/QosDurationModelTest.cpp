// Unit tests of ptb/qos/duration_model.h on synthetic launch timings: a known line, known staircases
// (blocks per SM, waves of slots), noise, drift, degenerate inputs, and the fused kernel's two-segment
// model. The inputs are fresh random numbers each run; the seed is printed (set PTB_TEST_SEED to repeat a
// run). The bounds are several times what the noise alone gives, so a failure is the model's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "TestSeed.h"
#include "ptb/qos/duration_model.h"

namespace {

using ptb::qos::DurationForm;
using ptb::qos::DurationModel;
using ptb::qos::FusedDurationModel;

constexpr unsigned kSms = 132, kSlots = 8 * 132;

// Task counts as a scheduler sees them: half log-uniform in [1, 64 x SMs] (small grids), half uniform.
double draw_tasks(std::mt19937 &g) {
  std::uniform_real_distribution<double> u(0, 1);
  const double hi = 64.0 * kSms;
  const double n = u(g) < 0.5 ? std::exp(u(g) * std::log(hi)) : 1 + u(g) * (hi - 1);
  return std::max(1.0, std::round(n));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Feed `n` launches of `truth` (with relative noise `sigma`) in order, predicting before observing;
// returns the relative errors of the predictions after `warmup` observations.
template <class Truth>
std::vector<double> run_online(DurationModel &m, Truth truth, double sigma, int n, int warmup, std::mt19937 &g) {
  std::normal_distribution<double> noise(0, sigma);
  std::vector<double> err;
  for (int i = 0; i < n; ++i) {
    const double tasks = draw_tasks(g), ns = truth(tasks) * (1 + noise(g));
    if (i >= warmup) err.push_back(std::fabs(m.predict(tasks) - ns) / ns);
    m.observe(tasks, ns);
  }
  return err;
}

// Relative errors of predictions at fresh task counts against the noiseless truth.
template <class Truth> std::vector<double> holdout(const DurationModel &m, Truth truth, std::mt19937 &g, int n = 200) {
  std::vector<double> err;
  for (int i = 0; i < n; ++i) {
    const double tasks = draw_tasks(g);
    err.push_back(std::fabs(m.predict(tasks) - truth(tasks)) / truth(tasks));
  }
  return err;
}

TEST(QosDurationModel, RecoversALine) {
  std::mt19937 g(test_seed("RecoversALine"));
  const double a = std::uniform_real_distribution<double>(3e3, 20e3)(g); // launch ramp, ns
  const double b = std::uniform_real_distribution<double>(20, 200)(g);   // ns per task
  auto truth = [&](double n) { return a + b * n; };
  DurationModel m(kSms, kSlots);
  const std::vector<double> online = run_online(m, truth, 0.01, 60, 8, g);
  const std::vector<double> fresh = holdout(m, truth, g);
  EXPECT_LT(median(online), 0.03);
  EXPECT_LT(median(fresh), 0.01);
  EXPECT_LT(*std::max_element(fresh.begin(), fresh.end()), 0.08);
  const ptb::qos::DurationFit line = m.fit(DurationForm::line);
  EXPECT_TRUE(line.ok);
  EXPECT_NEAR(line.b, b, 0.03 * b);
  EXPECT_GT(line.r2, 0.99);
  EXPECT_NE(m.confidence().form, DurationForm::constant);
  EXPECT_NE(m.confidence().form, DurationForm::sm_waves); // a line is not a staircase
}

TEST(QosDurationModel, FindsTheStaircaseOfBlocksPerSm) {
  // A compute-bound kernel: each SM runs its blocks' work one after another, t = a + c ceil(n / SMs).
  std::mt19937 g(test_seed("FindsTheStaircaseOfBlocksPerSm"));
  const double a = std::uniform_real_distribution<double>(2e3, 6e3)(g);
  const double c = std::uniform_real_distribution<double>(5e3, 30e3)(g); // one block's time alone
  auto truth = [&](double n) { return a + c * std::ceil(n / kSms); };
  DurationModel m(kSms, kSlots);
  const std::vector<double> online = run_online(m, truth, 0.01, 80, 8, g);
  EXPECT_EQ(m.confidence().form, DurationForm::sm_waves) << ptb::qos::form_name(m.confidence().form);
  const std::vector<double> fresh = holdout(m, truth, g);
  EXPECT_LT(median(online), 0.03);
  EXPECT_LT(median(fresh), 0.01);
  EXPECT_LT(*std::max_element(fresh.begin(), fresh.end()), 0.05);
  // A line cannot follow the first steps (every grid under one block per SM takes the same time).
  const ptb::qos::DurationFit line = m.fit(DurationForm::line);
  EXPECT_GT(line.max_error, 0.1);
  EXPECT_GT(line.loo_error, 3 * m.confidence().loo_error);
}

TEST(QosDurationModel, FindsWavesOfSlots) {
  std::mt19937 g(test_seed("FindsWavesOfSlots"));
  const double a = std::uniform_real_distribution<double>(2e3, 6e3)(g);
  const double c = std::uniform_real_distribution<double>(20e3, 80e3)(g); // one wave
  auto truth = [&](double n) { return a + c * std::ceil(n / kSlots); };
  DurationModel m(kSms, kSlots);
  run_online(m, truth, 0.01, 80, 8, g);
  const DurationForm f = m.confidence().form;
  EXPECT_TRUE(f == DurationForm::place_waves || f == DurationForm::mixed) << ptb::qos::form_name(f);
  const std::vector<double> fresh = holdout(m, truth, g);
  EXPECT_LT(median(fresh), 0.01);
  EXPECT_LT(*std::max_element(fresh.begin(), fresh.end()), 0.05);
}

TEST(QosDurationModel, ALineWithWaveStepsNeedsTheMixedForm) {
  // A memory-bound kernel with a tail per wave: t = a + b n + c ceil(n / slots).
  std::mt19937 g(test_seed("ALineWithWaveStepsNeedsTheMixedForm"));
  const double a = 4e3, b = std::uniform_real_distribution<double>(30, 60)(g), c = b * kSlots * 0.3;
  auto truth = [&](double n) { return a + b * n + c * std::ceil(n / kSlots); };
  DurationModel m(kSms, kSlots);
  run_online(m, truth, 0.005, 80, 8, g);
  EXPECT_EQ(m.confidence().form, DurationForm::mixed) << ptb::qos::form_name(m.confidence().form);
  EXPECT_LT(median(holdout(m, truth, g)), 0.01);
}

TEST(QosDurationModel, FindsAKnee) {
  // Blocks that wait on latency: every grid up to the knee takes the same time, then a line.
  std::mt19937 g(test_seed("FindsAKnee"));
  const double a = std::uniform_real_distribution<double>(10e3, 40e3)(g);
  const double k = std::uniform_real_distribution<double>(300, 2000)(g);
  const double b = std::uniform_real_distribution<double>(10, 40)(g);
  auto truth = [&](double n) { return a + b * std::max(0.0, n - k); };
  DurationModel m(kSms, kSlots);
  run_online(m, truth, 0.01, 80, 8, g);
  EXPECT_EQ(m.confidence().form, DurationForm::knee) << ptb::qos::form_name(m.confidence().form);
  EXPECT_NEAR(m.fit(DurationForm::knee).k, k, 0.25 * k);
  const std::vector<double> fresh = holdout(m, truth, g);
  EXPECT_LT(median(fresh), 0.01);
  EXPECT_LT(*std::max_element(fresh.begin(), fresh.end()), 0.08);
  EXPECT_GT(m.fit(DurationForm::line).loo_error, 1.5 * m.confidence().loo_error);
}

TEST(QosDurationModel, NoiseSetsTheErrorAndTheConfidence) {
  std::mt19937 g(test_seed("NoiseSetsTheErrorAndTheConfidence"));
  const double sigma = std::uniform_real_distribution<double>(0.03, 0.08)(g);
  auto truth = [&](double n) { return 5e3 + 40.0 * n; };
  DurationModel m(kSms, kSlots);
  const std::vector<double> online = run_online(m, truth, sigma, 64, 8, g);
  // The median |N(0, sigma)| is 0.67 sigma; a model that follows the noise does worse.
  EXPECT_LT(median(online), 1.2 * sigma);
  EXPECT_LT(median(holdout(m, truth, g)), 0.7 * sigma);
  const ptb::qos::DurationConfidence c = m.confidence();
  EXPECT_EQ(c.samples, 64u);
  EXPECT_GT(c.loo_error, 0.6 * sigma); // the leave-one-out error says how noisy the kernel is
  EXPECT_LT(c.loo_error, 1.6 * sigma);
  EXPECT_EQ(m.trusted(1000, 2 * sigma), true);
  EXPECT_EQ(m.trusted(1000, 0.5 * sigma), false);          // too noisy for that tolerance
  EXPECT_EQ(m.trusted(c.max_tasks + 1, 2 * sigma), false); // extrapolation
}

TEST(QosDurationModel, TheWindowFollowsADrift) {
  std::mt19937 g(test_seed("TheWindowFollowsADrift"));
  const double slow = std::uniform_real_distribution<double>(1.5, 3.0)(g);
  DurationModel m(kSms, kSlots, 32);
  run_online(m, [](double n) { return 5e3 + 40.0 * n; }, 0.01, 64, 0, g);
  auto after = [&](double n) { return slow * (5e3 + 40.0 * n); }; // e.g. BE now shares its SMs
  const std::vector<double> err = run_online(m, after, 0.01, 64, 0, g);
  EXPECT_GT(median(std::vector<double>(err.begin(), err.begin() + 8)), 0.2); // the drift is seen
  EXPECT_LT(median(std::vector<double>(err.begin() + 40, err.end())), 0.03); // and forgotten
  EXPECT_LT(median(holdout(m, after, g)), 0.02);
}

TEST(QosDurationModel, DegenerateInputs) {
  std::mt19937 g(test_seed("DegenerateInputs"));
  DurationModel m(kSms, kSlots);
  EXPECT_EQ(m.predict(100), 0);
  EXPECT_FALSE(m.trusted(100));
  m.observe(100, 0); // ignored
  m.observe(100, -5);
  m.observe(-1, 1e3);
  EXPECT_EQ(m.confidence().samples, 0u);
  // One task count only (a BE program that always launches the same grid): the mean, trusted there.
  std::normal_distribution<double> noise(0, 0.02);
  const double t = std::uniform_real_distribution<double>(1e5, 1e6)(g);
  double sum = 0;
  for (int i = 0; i < 16; ++i) {
    const double ns = t * (1 + noise(g));
    sum += ns;
    m.observe(65536, ns);
  }
  EXPECT_EQ(m.confidence().form, DurationForm::constant);
  EXPECT_NEAR(m.predict(65536), sum / 16, 0.01 * t);
  EXPECT_TRUE(m.trusted(65536));
  EXPECT_FALSE(m.trusted(32768));
  DurationModel one(kSms, kSlots);
  one.observe(10, 1234);
  EXPECT_DOUBLE_EQ(one.predict(10), 1234);
  EXPECT_DOUBLE_EQ(one.predict(1e6), 1234);
  // Never below half the fastest launch held, also where a line extrapolates below zero.
  DurationModel steep(kSms, kSlots);
  for (int n = 1000; n <= 2000; n += 100) steep.observe(n, 1e3 * (n - 900));
  EXPECT_NEAR(steep.predict(1), 0.5e5, 1);
  EXPECT_NEAR(steep.predict(950), 0.5e5, 1);
  EXPECT_NEAR(steep.predict(960), 0.6e5, 1);
}

TEST(QosDurationModel, ModelsByKey) {
  ptb::qos::DurationModels<const void *> models;
  static int k1, k2;
  models.at(&k1, kSms, kSlots).observe(10, 100);
  models.at(&k1, 1, 1).observe(10, 100); // the same model: the shape given first stays
  models.at(&k2, kSms, kSlots).observe(10, 1000);
  EXPECT_EQ(models.size(), 2u);
  ASSERT_NE(models.find(&k1), nullptr);
  EXPECT_EQ(models.find(&k1)->sms(), kSms);
  EXPECT_EQ(models.find(&k1)->confidence().samples, 2u);
  EXPECT_DOUBLE_EQ(models.find(&k1)->predict(10), 100);
  EXPECT_DOUBLE_EQ(models.find(&k2)->predict(10), 1000);
  EXPECT_EQ(models.find(nullptr), nullptr);
}

// Tacker's curve: part A's time with part B alongside up to the break, then part B running on alone.
struct TwoSegments {
  double c0, s1, brk, s2;
  double f(double r) const { return c0 + s1 * r + (s2 - s1) * std::max(0.0, r - brk); }
};

TEST(QosFusedDurationModel, RecoversTheTwoSegments) {
  std::mt19937 g(test_seed("RecoversTheTwoSegments"));
  std::uniform_real_distribution<double> u(0, 1);
  const TwoSegments truth{1.0, 0.1 + 0.2 * u(g), 0.6 + 0.8 * u(g), 0.9 + 0.2 * u(g)};
  FusedDurationModel m;
  EXPECT_DOUBLE_EQ(m.predict(100, 50), 150); // before any sample: sequential
  std::normal_distribution<double> noise(0, 0.01);
  std::vector<double> err;
  for (int i = 0; i < 60; ++i) {
    // half of the ratios below the break, half above: both slopes are determined by the data
    const double xa = std::exp(std::log(5e4) + u(g) * std::log(100.0));
    const double r = u(g) < 0.5 ? 0.05 + (truth.brk - 0.05) * u(g) : truth.brk + (3 - truth.brk) * u(g);
    const double ns = xa * truth.f(r) * (1 + noise(g));
    if (i >= 12) err.push_back(std::fabs(m.predict(xa, r * xa) - ns) / ns);
    m.observe(xa, r * xa, ns);
  }
  EXPECT_LT(median(err), 0.03);
  ASSERT_TRUE(m.has_break());
  EXPECT_NEAR(m.inflection(), truth.brk, 0.15 * truth.brk);
  EXPECT_NEAR(m.slope_before(), truth.s1, 0.08);
  EXPECT_NEAR(m.slope_after(), truth.s2, 0.08);
  EXPECT_TRUE(m.trusted());
  // At a fixed load ratio the duration is proportional to part A's (Tacker's second observation).
  EXPECT_NEAR(m.predict(2e5, 2e5) / m.predict(1e5, 1e5), 2.0, 1e-9);
  for (double r : {0.1, 0.5, 1.0, 2.0, 2.9})
    EXPECT_NEAR(m.predict(1e5, r * 1e5), 1e5 * truth.f(r), 0.03 * 1e5 * truth.f(r)) << "r " << r;
}

TEST(QosFusedDurationModel, ALineWhereThereIsNoBreak) {
  std::mt19937 g(test_seed("ALineWhereThereIsNoBreak"));
  std::uniform_real_distribution<double> u(0, 1);
  const double s = 0.3 + 0.5 * u(g);
  FusedDurationModel m;
  std::normal_distribution<double> noise(0, 0.01);
  for (int i = 0; i < 40; ++i) {
    const double xa = 1e5 * (1 + u(g)), r = 3 * u(g);
    m.observe(xa, r * xa, xa * (1 + s * r) * (1 + noise(g)));
  }
  EXPECT_FALSE(m.has_break());
  EXPECT_NEAR(m.slope_before(), s, 0.05);
}

TEST(QosFusedDurationModel, FromTaskCountsThroughThePartsModels) {
  std::mt19937 g(test_seed("FromTaskCountsThroughThePartsModels"));
  std::uniform_real_distribution<double> u(0, 1);
  DurationModel a(kSms, kSlots), b(kSms, kSlots);
  auto ta = [](double n) { return 3e3 + 60.0 * n; };
  auto tb = [](double n) { return 3e3 + 25.0 * n; };
  for (int i = 0; i < 24; ++i) {
    const double n = draw_tasks(g);
    a.observe(n, ta(n));
    b.observe(n, tb(n));
  }
  const TwoSegments truth{1.0, 0.15, 1.0, 1.0};
  FusedDurationModel m;
  EXPECT_NEAR(m.predict(1000, 0, a, b), ta(1000), 0.02 * ta(1000)); // no B tasks: part A alone
  for (int i = 0; i < 40; ++i) {
    const double na = 500 + u(g) * 8000, nb = u(g) * 16000;
    m.observe(na, nb, a, b, ta(na) * truth.f(tb(nb) / ta(na)));
  }
  const double na = 4000, nb = 12000;
  const double want = ta(na) * truth.f(tb(nb) / ta(na));
  EXPECT_NEAR(m.predict(na, nb, a, b), want, 0.03 * want);
}

} // namespace

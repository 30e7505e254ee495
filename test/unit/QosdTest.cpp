// ptb-qosd's logic without a GPU (lib/Qosd, runtime/include/ptb/qos/gate_state.h): the configuration (located
// errors, overrides, a policy's required keys), the gate's hold limits with a fake clock, and the daemon on a
// real segment in a temporary directory with LS and BE processes faked by writing their entries: what it
// publishes when LS is busy or idle, the latencies it measures (busy periods and C-API requests), the
// entries of dead processes freed, a clean stop, the statistics and the Prometheus text.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "Daemon.h"
#include "QosdConfig.h"
#include "Report.h"
#include "TempDir.h"
#include "TestSeed.h"

namespace shm = ptb::qos::shm;
using ptb::qosd::Config;

namespace {

constexpr std::uint64_t kUs = 1000, kMs = 1000 * kUs;

TEST(QosdConfig, FileAndOverrides) {
  Config c;
  std::string error;
  ASSERT_TRUE(ptb::qosd::parseConfigText("# a comment\npolicy = feedback\n\ntarget_p99_us = 1500.5  # inline\n"
                                         "lease_ms=80\nsafe_sms = 100-131\n",
                                         "q.conf", c, error))
      << error;
  EXPECT_EQ(c.policy, "feedback");
  EXPECT_DOUBLE_EQ(c.targetP99Us, 1500.5);
  EXPECT_EQ(c.leaseMs, 80u);
  EXPECT_EQ(c.safeSms, "100-131");
  EXPECT_EQ(ptb::qosd::setKey(c, "policy", "gate"), "");
  EXPECT_EQ(c.policy, "gate");
  EXPECT_EQ(ptb::qosd::checkConfig(c), "");
}

TEST(QosdConfig, ErrorsAreLocated) {
  struct Case {
    const char *text;
    const char *want; // the start of the message
  } cases[] = {
      {"policy = gate\nbogus = 1\n", "f.conf:2:1: error: unknown key 'bogus'"},
      {"policy = fast\n", "f.conf:1:10: error: policy: 'fast' is not one of gate"},
      {"  poll_us = -3\n", "f.conf:1:13: error: poll_us: '-3' is not a whole number"},
      {"poll_us = 0\n", "f.conf:1:11: error: poll_us: must be at least 1"},
      {"lease_ms\n", "f.conf:1:1: error: expected 'key = value'"},
      {"= 3\n", "f.conf:1:1: error: expected a key before '='"},
      {"during_sms = 5-x\n", "f.conf:1:14: error: during_sms: '5-x' is not an SM set"},
      {"target_p99_us =\n", "f.conf:1:16: error: 'target_p99_us' has no value"},
      {"hold_limit_us = 99999999999\n", "f.conf:1:17: error: hold_limit_us: '99999999999' is too large"},
  };
  for (const Case &k : cases) {
    Config c;
    std::string error;
    EXPECT_FALSE(ptb::qosd::parseConfigText(k.text, "f.conf", c, error)) << k.text;
    EXPECT_EQ(error.rfind(k.want, 0), 0u) << "got: " << error;
  }
  Config c;
  ASSERT_EQ(ptb::qosd::setKey(c, "policy", "feedback"), "");
  EXPECT_EQ(ptb::qosd::checkConfig(c), "policy feedback needs target_p99_us");
  ASSERT_EQ(ptb::qosd::setKey(c, "policy", "static"), "");
  EXPECT_EQ(ptb::qosd::checkConfig(c), "policy static needs be_sms (BE's SMs, at least 1)");
  EXPECT_EQ(ptb::qosd::setKey(c, "nope", "1"), "unknown key 'nope'");
}

// A cap on BE during requests is said (measured harmful); nothing else in a plain configuration is.
TEST(QosdConfig, CapDuringRequestsIsWarned) {
  Config c;
  EXPECT_TRUE(ptb::qosd::configWarnings(c).empty());
  ASSERT_EQ(ptb::qosd::setKey(c, "during_sms", "99-131"), "");
  EXPECT_TRUE(ptb::qosd::configWarnings(c).empty()); // BE on some SMs during requests, no cap
  ASSERT_EQ(ptb::qosd::setKey(c, "during_per_sm", "2"), "");
  ASSERT_EQ(ptb::qosd::configWarnings(c).size(), 1u);
  EXPECT_EQ(ptb::qosd::configWarnings(c)[0].rfind("during_per_sm caps BE", 0), 0u);
  ASSERT_EQ(ptb::qosd::setKey(c, "during_sms", "none"), "");
  EXPECT_TRUE(ptb::qosd::configWarnings(c).empty()); // no SMs during requests: the cap applies nowhere
  ASSERT_EQ(ptb::qosd::setKey(c, "during_sms", "0-131"), "");
  ASSERT_EQ(ptb::qosd::setKey(c, "policy", "static"), "");
  EXPECT_TRUE(ptb::qosd::configWarnings(c).empty()); // not the gate: during_* unused
  ASSERT_EQ(ptb::qosd::setKey(c, "between_sms", "none"), "");
  EXPECT_TRUE(ptb::qosd::configWarnings(c).empty()); // not the gate: between_sms unused
  ASSERT_EQ(ptb::qosd::setKey(c, "policy", "gate"), "");
  ASSERT_EQ(ptb::qosd::setKey(c, "during_sms", "none"), "");
  ASSERT_EQ(ptb::qosd::configWarnings(c).size(), 1u); // BE would run only when a limit releases it
  EXPECT_EQ(ptb::qosd::configWarnings(c)[0].rfind("between_sms is none", 0), 0u);
  EXPECT_NE(ptb::qosd::setKey(c, "between_sms", "8-x"), "");
}

TEST(QosdGate, HoldsWhileBusyWithBothLimits) {
  using Want = ptb::qos::GateState::Want;
  ptb::qos::GateState g(20 * kMs, 20 * kMs);
  std::uint64_t t = 1000 * kMs;
  EXPECT_EQ(g.step(t, false, 0), Want::between);
  EXPECT_EQ(g.step(t += kMs, true, 0), Want::during); // LS work began
  EXPECT_EQ(g.yields(), 1u);
  EXPECT_EQ(g.step(t += 5 * kMs, true, 5 * kMs), Want::during);
  EXPECT_EQ(g.step(t += kMs, false, 0), Want::between); // idle
  // A stream without progress for longer than the limit: BE gets its SMs back for a tenth of the limit, then
  // the gate holds again, the stream still stuck, and releases again only after another whole limit held.
  EXPECT_EQ(g.step(t += kMs, true, 0), Want::during);
  EXPECT_EQ(g.step(t += 21 * kMs, true, 21 * kMs), Want::between);
  EXPECT_EQ(g.releases(), 1u);
  EXPECT_EQ(g.step(t += kMs, true, 22 * kMs), Want::between);    // within a tenth of the limit
  EXPECT_EQ(g.step(t += 2 * kMs, true, 24 * kMs), Want::during); // still stuck: held again all the same
  EXPECT_EQ(g.step(t += 5 * kMs, true, 29 * kMs), Want::during); // stuck, but held for 5 ms only
  EXPECT_EQ(g.step(t += kMs, true, kMs), Want::during);          // progress again
  EXPECT_EQ(g.releases(), 1u);
  EXPECT_EQ(g.step(t += kMs, false, 0), Want::between); // idle
  EXPECT_EQ(g.step(t += kMs, true, 0), Want::during);
  // BE's floor: held for the limit without a break while LS never idles (but progresses).
  for (int __i = 0; __i < 20; ++__i) EXPECT_EQ(g.step(t += kMs, true, kMs), Want::during) << __i;
  EXPECT_EQ(g.step(t += kMs, true, kMs), Want::between);
  EXPECT_EQ(g.step(t += kMs, true, kMs), Want::between); // within a tenth of the limit
  EXPECT_EQ(g.step(t += 2 * kMs, true, kMs), Want::during);
  EXPECT_EQ(g.releases(), 2u);
}

TEST(QosdGate, StuckAndHoldLimitsApart) {
  using Want = ptb::qos::GateState::Want;
  using Release = ptb::qos::GateState::Release;
  ptb::qos::GateState g(20 * kMs, 200 * kMs); // the controller's defaults
  std::uint64_t t = 1000 * kMs;
  EXPECT_EQ(g.step(t, true, 0), Want::during);
  // A long busy period with progress (a service's queue): held past the stuck limit, no release.
  for (int i = 0; i < 150; ++i) ASSERT_EQ(g.step(t += kMs, true, kMs), Want::during) << i;
  EXPECT_EQ(g.releases(), 0u);
  EXPECT_EQ(g.last_release(), Release::none);
  // A stream stuck past the stuck limit: released; held again a tenth of the stuck limit after.
  EXPECT_EQ(g.step(t += kMs, true, 21 * kMs), Want::between);
  EXPECT_EQ(g.last_release(), Release::stuck);
  EXPECT_EQ(g.step(t += kMs, true, kMs), Want::between);
  EXPECT_EQ(g.step(t += 2 * kMs, true, kMs), Want::during);
  // Held for the hold limit without a break: released for a tenth of it (20 ms), not of the stuck limit.
  unsigned held = 0;
  while (g.step(t += kMs, true, kMs) == Want::during) ++held;
  EXPECT_EQ(held, 200u);
  EXPECT_EQ(g.last_release(), Release::held);
  EXPECT_EQ(g.releases(), 2u);
  unsigned rest = 0; // looks after the release's, 1 ms apart
  while (g.step(t += kMs, true, kMs) == Want::between) ++rest;
  EXPECT_EQ(rest, 20u);
}

// A stream stuck for good (BE's own workers on every SM can be what keeps LS's kernels off the GPU): the gate
// alternates, held for the stuck limit, released for a tenth of it, so that BE never keeps the GPU from LS for
// longer than that. (Until 2026-11-29 the release lasted as long as the stream stayed stuck: 0.6 s and 1.2 s on the
// H200 beside BE launches of 37 ms.)
TEST(QosdGate, StuckStreamAlternates) {
  using Want = ptb::qos::GateState::Want;
  ptb::qos::GateState g(20 * kMs, 200 * kMs);
  std::uint64_t t = 1000 * kMs, stuck = 0;
  EXPECT_EQ(g.step(t, true, 0), Want::during);
  unsigned between = 0, longest = 0, run = 0;
  for (int __i = 0; __i < 1100; ++__i) { // 1.1 s of looks, 1 ms apart, the stream never progresses
    const bool __b = g.step(t += kMs, true, stuck += kMs) == Want::between;
    between += __b;
    run = __b ? run + 1 : 0;
    longest = run > longest ? run : longest;
  }
  EXPECT_EQ(longest, 3u) << "a release lasts a tenth of the stuck limit (looks 1 ms apart)";
  EXPECT_GE(g.releases(), 45u);
  EXPECT_LE(g.releases(), 50u);
  EXPECT_LE(between, 150u) << "BE had " << between << " of 1100 ms";
}

TEST(QosdGate, BetweenAfterHoldsThroughShortIdleGaps) {
  using Want = ptb::qos::GateState::Want;
  ptb::qos::GateState g(20 * kMs, 20 * kMs, 200 * kUs);
  std::uint64_t t = 1000 * kMs;
  EXPECT_EQ(g.step(t, false, 0), Want::between); // idle from the start: nothing to hold
  EXPECT_EQ(g.step(t += kUs, true, 0), Want::during);
  // A gap shorter than between_after (the next request was queued): the same hold, no new yield.
  EXPECT_EQ(g.step(t += kMs, false, 0), Want::during);
  EXPECT_EQ(g.step(t += 150 * kUs, false, 0), Want::during);
  EXPECT_EQ(g.step(t += kUs, true, 0), Want::during);
  EXPECT_EQ(g.yields(), 1u);
  // Idle for between_after: BE gets `between`; the gap counts from the first idle look.
  EXPECT_EQ(g.step(t += kMs, false, 0), Want::during);
  EXPECT_EQ(g.step(t += 199 * kUs, false, 0), Want::during);
  EXPECT_EQ(g.step(t += kUs, false, 0), Want::between);
  EXPECT_EQ(g.step(t += kMs, false, 0), Want::between);
  EXPECT_EQ(g.step(t += kUs, true, 0), Want::during);
  EXPECT_EQ(g.yields(), 2u);
  // BE's floor still holds when the gaps never reach between_after: released after the hold limit.
  unsigned during = 0;
  for (int __i = 0; __i < 40 && g.releases() == 0; ++__i) {
    during += g.step(t += kMs, true, 0) == Want::during;
    during += g.step(t += 100 * kUs, false, 0) == Want::during;
  }
  EXPECT_EQ(g.releases(), 1u);
  EXPECT_EQ(g.want(), Want::between);
  EXPECT_GE(during, 30u); // held for about the 20 ms limit first (each round is 1.1 ms, two looks)
}

class QosdDaemon : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(tmp.path.empty());
    dir = tmp.path;
    bool taken = false;
    ASSERT_EQ(shm::create_or_take(shm::segment_path(dir, "GPU-t"), 132, "GPU-t", map, taken), shm::Status::ok);
  }
  shm::Segment &seg() { return *map; }
  std::unique_ptr<ptb::qosd::Daemon> daemon(Config c) {
    return std::make_unique<ptb::qosd::Daemon>(c, seg(), 132, [this](const std::string &line) { log.push_back(line); });
  }
  shm::PolicyValue read() {
    shm::PolicyValue p, s;
    std::uint64_t seq = 0;
    EXPECT_TRUE(shm::read_published(seg(), p, s, seq));
    return p;
  }
  TempDir tmp{"ptb-qosd-daemon"};
  std::string dir;
  shm::Mapping map;
  std::vector<std::string> log;
};

TEST_F(QosdDaemon, GateFollowsLsMarks) {
  std::mt19937 rng(test_seed("QosdDaemon.GateFollowsLsMarks"));
  Config c;
  c.policy = "gate";
  c.betweenPerSm = 2;
  auto d = daemon(c);
  std::uint64_t t = 5000 * kMs;
  d->start(t);
  EXPECT_EQ(seg().controller.lease_ns.load(), 50 * kMs);
  EXPECT_TRUE(read().sms == ptb::SmSet::all());
  EXPECT_EQ(read().per_sm, 2u);
  EXPECT_EQ(shm::get_text(seg().stats.policy_name), "gate");
  // A live LS process (this one) marks launches on two streams; the device's writes are faked here.
  shm::LsClient &ls = seg().ls[3];
  ls.pid.store(static_cast<std::uint64_t>(getpid()));
  std::vector<double> periods;
  for (int request = 0; request < 30; ++request) {
    const unsigned stream = rng() % 2;
    const unsigned launches = 1 + rng() % 5;
    ls.streams[stream].submitted.fetch_add(launches);
    d->step(t += 20 * kUs);
    EXPECT_TRUE(read().sms.empty()) << "request " << request << ": BE not told to leave";
    const std::uint64_t busyUs = 100 + rng() % 3000;
    for (std::uint64_t u = 0; u < busyUs; u += 200) d->step(t += 200 * kUs);
    EXPECT_TRUE(read().sms.empty());
    ls.streams[stream].completed.store(ls.streams[stream].submitted.load()); // the device finished
    d->step(t += 20 * kUs);
    EXPECT_TRUE(read().sms == ptb::SmSet::all()) << "request " << request << ": BE not given its SMs back";
    d->step(t += 5 * kMs);
  }
  d->step(t += 10 * kMs); // statistics are refreshed every 10 ms
  EXPECT_LE(log.size(), 3u) << "the gate's yields and give-backs are counted, not logged";
  EXPECT_EQ(seg().stats.yields.load(), 30u);
  EXPECT_EQ(seg().stats.ls_requests.load(), 30u);
  EXPECT_GT(seg().stats.ls_p99_ns.load(), 100 * kUs);
  EXPECT_EQ(seg().stats.ls_clients.load(), 1u);
  EXPECT_EQ(seg().stats.policy_changes.load(), 60u);
  EXPECT_NE(seg().controller.heartbeat_ns.load(), 0u);
  // The text forms.
  const std::string prom = ptb::qosd::prometheus(seg(), t);
  EXPECT_NE(prom.find("ptb_qosd_yields_total{gpu=\"GPU-t\"} 30\n"), std::string::npos) << prom;
  EXPECT_NE(prom.find("# TYPE ptb_qosd_ls_latency_seconds summary"), std::string::npos);
  EXPECT_NE(ptb::qosd::statusText(seg(), t).find("policy gate"), std::string::npos);
}

// An LS stream stuck for good: the gate releases BE for a tenth of the stuck limit every stuck limit held (about 45
// times a second); the log says the first release and then, at most once a second, how many it did not log.
TEST_F(QosdDaemon, StuckStreamReleasesAreLoggedOnceASecond) {
  Config c;
  c.policy = "gate";
  auto d = daemon(c);
  std::uint64_t t = 5000 * kMs;
  d->start(t);
  shm::LsClient &ls = seg().ls[1];
  ls.pid.store(static_cast<std::uint64_t>(getpid()));
  ls.streams[0].submitted.fetch_add(1); // never completed
  unsigned between = 0, longest = 0, run = 0;
  for (int i = 0; i < 2500; ++i) { // 2.5 s, 1 ms apart
    d->step(t += kMs);
    const bool b = !read().sms.empty();
    between += b;
    run = b ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  d->step(t += 10 * kMs);
  EXPECT_LE(longest, 3u) << "a release outlasted a tenth of the stuck limit";
  EXPECT_GE(seg().stats.releases.load(), 100u);
  unsigned releaseLines = 0, countLines = 0;
  for (const std::string &line : log) {
    releaseLines += line.find("the gate's stuck limit") != std::string::npos;
    countLines += line.find("not logged") != std::string::npos;
  }
  EXPECT_EQ(releaseLines, 1u);
  EXPECT_EQ(countLines, 2u); // after the first second and the second
  EXPECT_LE(between, 2500u / 6) << "BE had " << between << " of 2500 ms";
}

// between_sms: the SMs left out of BE's set while LS is idle stay free (LS's first blocks start there at once);
// BE still gets no SM while LS has work in flight.
TEST_F(QosdDaemon, GateBetweenSmsLeavesSmsFree) {
  Config c;
  c.policy = "gate";
  ASSERT_EQ(ptb::qosd::setKey(c, "between_sms", "8-131"), "");
  c.betweenPerSm = 3;
  auto d = daemon(c);
  std::uint64_t t = 5000 * kMs;
  d->start(t);
  ptb::SmSet want;
  ASSERT_TRUE(ptb::SmSet::parse("8-131", want));
  EXPECT_TRUE(read().sms == want) << read().sms.str();
  EXPECT_EQ(read().per_sm, 3u);
  shm::LsClient &ls = seg().ls[0];
  ls.pid.store(static_cast<std::uint64_t>(getpid()));
  ls.streams[0].submitted.fetch_add(2);
  d->step(t += 20 * kUs);
  EXPECT_TRUE(read().sms.empty()) << "BE not told to leave while LS has work";
  ls.streams[0].completed.store(2);
  d->step(t += 20 * kUs);
  EXPECT_TRUE(read().sms == want) << "BE given " << read().sms.str() << " when LS went idle";
}

// decisions_file: one line per published policy, stamped with the controller's clock, in order; the gate's yields
// and give-backs named by LS's state; the stop with the safe state.
TEST_F(QosdDaemon, DecisionsFileRecordsEveryPublish) {
  std::mt19937 rng(test_seed("QosdDaemon.DecisionsFileRecordsEveryPublish"));
  Config c;
  c.policy = "gate";
  const std::string path = dir + "/decisions.tsv";
  std::vector<std::uint64_t> stamps; // when each publish is expected: start, then each request's begin and end
  {
    auto d = daemon(c);
    std::FILE *file = std::fopen(path.c_str(), "a");
    ASSERT_NE(file, nullptr) << path;
    d->recordDecisions(file, path);
    std::uint64_t t = 7000 * kMs;
    d->start(t);
    stamps.push_back(t);
    shm::LsClient &ls = seg().ls[0];
    ls.pid.store(static_cast<std::uint64_t>(getpid()));
    const int requests = 5 + static_cast<int>(rng() % 10);
    for (int r = 0; r < requests; ++r) {
      ls.streams[0].submitted.fetch_add(1);
      d->step(t += 30 * kUs + rng() % 1000);
      stamps.push_back(t);
      d->step(t += 400 * kUs);
      ls.streams[0].completed.store(ls.streams[0].submitted.load());
      d->step(t += 30 * kUs + rng() % 1000);
      stamps.push_back(t);
      d->step(t += 2 * kMs);
    }
    d->stop();
  }
  std::ifstream in(path);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_EQ(line.rfind("# ptb-qosd ", 0), 0u) << line;
  std::vector<std::string> whys;
  std::vector<std::uint64_t> seen;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::uint64_t stamp = 0, seq = 0;
    std::string sms, cap, why;
    ASSERT_TRUE(f >> stamp >> seq >> sms >> cap) << line;
    std::getline(f >> std::ws, why);
    seen.push_back(stamp);
    whys.push_back(why);
    EXPECT_EQ(seq % 2, 0u) << "a sequence caught mid-publish: " << line;
  }
  ASSERT_EQ(whys.size(), stamps.size() + 1) << "one line a publish, and the stop";
  EXPECT_EQ(whys.front(), "start");
  EXPECT_EQ(whys.back(), "stopped: the safe state");
  for (size_t i = 1; i + 1 < whys.size(); ++i) EXPECT_EQ(whys[i], i % 2 ? "LS busy" : "LS idle") << i;
  for (size_t i = 0; i < stamps.size(); ++i) EXPECT_EQ(seen[i], stamps[i]) << i;
}

// between_after_us from the configuration: a request queued behind the last one keeps BE out; BE comes back
// once LS stayed idle that long.
TEST_F(QosdDaemon, GateBetweenAfterKeepsBackToBackRequestsOneHold) {
  Config c;
  ASSERT_EQ(ptb::qosd::setKey(c, "between_after_us", "300"), "");
  auto d = daemon(c);
  std::uint64_t t = 5000 * kMs;
  d->start(t);
  shm::LsClient &ls = seg().ls[0];
  ls.pid.store(static_cast<std::uint64_t>(getpid()));
  for (int request = 0; request < 3; ++request) { // three requests 100 us apart
    ls.streams[0].submitted.fetch_add(1);
    d->step(t += 5 * kUs);
    EXPECT_TRUE(read().sms.empty()) << request;
    d->step(t += kMs);
    ls.streams[0].completed.store(ls.streams[0].submitted.load());
    d->step(t += 5 * kUs);
    d->step(t += 95 * kUs);
    EXPECT_TRUE(read().sms.empty()) << request << ": BE given its SMs back within between_after_us";
  }
  d->step(t += 250 * kUs);
  EXPECT_TRUE(read().sms == ptb::SmSet::all()) << "BE not given its SMs back after between_after_us";
  d->step(t += 10 * kMs);
  EXPECT_EQ(seg().stats.yields.load(), 1u);
  EXPECT_EQ(seg().stats.policy_changes.load(), 2u);
}

TEST_F(QosdDaemon, CApiRequestsGiveLatencies) {
  Config c;
  auto d = daemon(c);
  std::uint64_t t = 7000 * kMs;
  d->start(t);
  shm::LsClient &ls = seg().ls[0];
  ls.pid.store(static_cast<std::uint64_t>(getpid()));
  for (std::uint64_t n = 1; n <= 5; ++n) {
    ls.requests_begun.store(n);
    ls.request_begin_ns[n % shm::kRequestRing].store(t);
    d->step(t += 10 * kUs);
    EXPECT_TRUE(read().sms.empty()); // a request in flight is LS work
    t += n * kMs;
    ls.requests_done.store(n);
    d->step(t);
    EXPECT_TRUE(read().sms == ptb::SmSet::all());
  }
  d->step(t += 10 * kMs);
  EXPECT_EQ(seg().stats.ls_requests.load(), 5u);
  EXPECT_EQ(seg().stats.ls_max_ns.load(), 5 * kMs + 10 * kUs); // request 5: begun, 10 us to the next poll, then 5 ms
}

TEST_F(QosdDaemon, DeadClientsAreFreedAndStopIsSaid) {
  Config c;
  auto d = daemon(c);
  std::uint64_t t = 9000 * kMs;
  d->start(t);
  // A child that exits: its pid is gone once reaped by waitpid.
  const pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  seg().ls[5].pid.store(static_cast<std::uint64_t>(child));
  seg().ls[5].streams[0].submitted.store(7); // it died with work in flight
  seg().be[2].pid.store(static_cast<std::uint64_t>(child));
  seg().be[4].pid.store(static_cast<std::uint64_t>(getpid())); // alive
  seg().be[6].pid.store(static_cast<std::uint64_t>(child));    // a pid not seen here, but beating: kept
  seg().be[6].heartbeat_ns.store(shm::now_ns());
  d->step(t += 20 * kUs);
  EXPECT_EQ(seg().ls[5].pid.load(), 0u);
  EXPECT_EQ(seg().ls[5].streams[0].submitted.load(), 0u);
  EXPECT_EQ(seg().be[2].pid.load(), 0u);
  EXPECT_EQ(seg().be[4].pid.load(), static_cast<std::uint64_t>(getpid()));
  EXPECT_EQ(seg().be[6].pid.load(), static_cast<std::uint64_t>(child));
  EXPECT_TRUE(read().sms == ptb::SmSet::all()) << "a dead LS process must not hold BE";
  ASSERT_EQ(log.size() >= 2, true);
  bool said = false;
  for (const auto &line : log) said = said || line.find("LS process " + std::to_string(child) + " is gone") == 0;
  EXPECT_TRUE(said);
  d->stop();
  EXPECT_EQ(seg().controller.stopped.load(), 1u);
  EXPECT_TRUE(shm::controller_gone(seg(), t));
}

// be_share split: the live BE entries get equal, disjoint parts of BE's SMs, in entry order, and a BE
// process that goes away gives its part back at the next poll. shared: every entry gets the whole policy.
TEST_F(QosdDaemon, SplitDividesBeSmsAmongLiveProcesses) {
  Config c;
  c.policy = "static";
  c.beSms = 66;
  c.beShare = "split";
  auto d = daemon(c);
  std::uint64_t t = 100 * kMs;
  d->start(t);
  const std::uint64_t me = static_cast<std::uint64_t>(getpid());
  seg().be[1].pid.store(me);
  d->step(t += 20 * kUs);
  EXPECT_EQ(seg().be[1].slice.load(), 0u) << "one BE process: all of BE's SMs";
  seg().be[3].pid.store(me);
  seg().be[7].pid.store(me);
  d->step(t += 20 * kUs);
  EXPECT_EQ(seg().be[1].slice.load(), shm::slice_word(0, 3));
  EXPECT_EQ(seg().be[3].slice.load(), shm::slice_word(1, 3));
  EXPECT_EQ(seg().be[7].slice.load(), shm::slice_word(2, 3));
  EXPECT_EQ(seg().stats.be_parts.load(), 3u);
  const shm::PolicyValue policy = read();
  ASSERT_EQ(policy.sms.str(), "66-131");
  ptb::SmSet all_parts;
  unsigned total = 0;
  for (unsigned e : {1u, 3u, 7u}) {
    const shm::PolicyValue mine = shm::slice_of(policy, seg().be[e].slice.load(), 132);
    EXPECT_EQ(mine.sms.count(), 22u) << e;
    EXPECT_TRUE((mine.sms & all_parts).empty()) << "parts are disjoint";
    all_parts = all_parts | mine.sms;
    total += mine.sms.count();
  }
  EXPECT_TRUE(all_parts == policy.sms);
  EXPECT_EQ(total, 66u);
  EXPECT_EQ(shm::slice_of(policy, seg().be[1].slice.load(), 132).sms.str(), "66-87");
  seg().be[3].pid.store(0); // gone (reaped)
  d->step(t += 20 * kUs);
  EXPECT_EQ(seg().be[1].slice.load(), shm::slice_word(0, 2));
  EXPECT_EQ(seg().be[7].slice.load(), shm::slice_word(1, 2));
  const std::string status = ptb::qosd::statusText(seg(), t);
  EXPECT_NE(status.find("split in 2 parts"), std::string::npos) << status;
  EXPECT_NE(status.find("    BE pid " + std::to_string(me) + ": SMs 66-98 (part 1 of 2);"), std::string::npos)
      << status;
  EXPECT_NE(status.find(": SMs 99-131 (part 2 of 2);"), std::string::npos) << status;
  seg().ls[2].pid.store(me);
  seg().ls[2].launches.store(5);
  seg().ls[2].streams[0].submitted.store(5);
  seg().ls[2].streams[0].completed.store(4);
  EXPECT_NE(ptb::qosd::statusText(seg(), t).find("    LS pid " + std::to_string(me) + ": busy; 5 launches marked"),
            std::string::npos);
  seg().ls[2].streams[0].completed.store(5);
  EXPECT_NE(ptb::qosd::statusText(seg(), t).find(": idle; 5 launches marked"), std::string::npos);
  seg().ls[2].pid.store(0);
  // shared: the same entries, the whole policy each.
  Config shared = c;
  shared.beShare = "shared";
  auto d2 = daemon(shared);
  d2->start(t += kMs);
  d2->step(t += 20 * kUs);
  EXPECT_EQ(seg().be[1].slice.load(), 0u);
  EXPECT_EQ(seg().be[7].slice.load(), 0u);
  EXPECT_EQ(seg().stats.be_parts.load(), 0u);
  seg().be[1].pid.store(0);
  seg().be[7].pid.store(0);
}

TEST_F(QosdDaemon, StaticAndSafeStates) {
  Config c;
  c.policy = "static";
  c.beSms = 40;
  c.safeSms = "120-131";
  c.safePerSm = 1;
  auto d = daemon(c);
  d->start(100 * kMs);
  shm::PolicyValue p, s;
  std::uint64_t seq = 0;
  ASSERT_TRUE(shm::read_published(seg(), p, s, seq));
  EXPECT_EQ(p.sms.str(), "92-131");
  EXPECT_EQ(s.sms.str(), "120-131");
  EXPECT_EQ(s.per_sm, 1u);
  // The default safe state: the highest quarter.
  Config dflt;
  dflt.policy = "off";
  auto d2 = daemon(dflt);
  EXPECT_EQ(d2->safeState().sms.str(), "99-131");
  EXPECT_TRUE(d2->publishedPolicy().sms == ptb::SmSet::all());
  // off gives BE every SM with no cap, whatever the gate's keys say, LS busy or not.
  Config off;
  off.policy = "off";
  off.betweenPerSm = 2;
  auto d3 = daemon(off);
  std::uint64_t t = 200 * kMs;
  log.clear();
  d3->start(t);
  EXPECT_EQ(read().per_sm, 0u);
  ASSERT_FALSE(log.empty());
  EXPECT_EQ(log.front(), "BE: SMs 0-131 (start)") << "the GPU's SMs, not every id the runtime knows";
  seg().ls[0].pid.store(static_cast<std::uint64_t>(getpid()));
  seg().ls[0].streams[0].submitted.fetch_add(1);
  d3->step(t += 20 * kUs);
  EXPECT_EQ(read().per_sm, 0u);
  EXPECT_TRUE(read().sms == ptb::SmSet::all());
  seg().ls[0].streams[0].completed.store(seg().ls[0].streams[0].submitted.load());
  d3->step(t += 20 * kUs);
  EXPECT_EQ(read().per_sm, 0u);
  seg().ls[0].pid.store(0);
}

// The usage text's keys (configKeys) are the keys docs/reference/ptb-qosd.md documents, no more, no less.
TEST(QosdConfig, UsageAndReferenceListEveryKey) {
  std::set<std::string> usage;
  for (const std::string &item : ptb::qosd::configKeys()) {
    const std::string key = item.substr(0, item.find(' '));
    Config scratch;
    EXPECT_EQ(ptb::qosd::setKey(scratch, key, "x").find("unknown key"), std::string::npos) << key;
    usage.insert(key);
  }
  std::ifstream doc(std::string(PTB_SOURCE_DIR) + "/docs/reference/ptb-qosd.md");
  ASSERT_TRUE(doc.good());
  std::set<std::string> documented;
  std::string line;
  bool inTable = false;
  while (std::getline(doc, line)) {
    if (line.rfind("| key | default | meaning |", 0) == 0) {
      inTable = true;
      continue;
    }
    if (!inTable) continue;
    if (line.empty() || line[0] != '|') break;
    if (line.rfind("| `", 0) == 0) documented.insert(line.substr(3, line.find('`', 3) - 3));
  }
  EXPECT_EQ(usage, documented);
  EXPECT_GE(usage.size(), 18u);
}

TEST_F(QosdDaemon, FeedbackMovesSmsOnMisses) {
  Config c;
  c.policy = "feedback";
  c.targetP99Us = 1000;
  c.step = 2;
  auto d = daemon(c);
  std::uint64_t t = 100 * kMs;
  d->start(t);
  EXPECT_EQ(read().sms.count(), 132u);
  shm::LsClient &ls = seg().ls[0];
  ls.pid.store(static_cast<std::uint64_t>(getpid()));
  // LS busy periods of 3 ms (over the 1 ms target) for 20 epochs: LS must get SMs.
  for (int e = 0; e < 20; ++e) {
    ls.streams[0].submitted.fetch_add(1);
    d->step(t += 10 * kUs);
    d->step(t += 3 * kMs);
    ls.streams[0].completed.store(ls.streams[0].submitted.load());
    d->step(t += 10 * kUs);
  }
  EXPECT_LT(read().sms.count(), 132u);
  EXPECT_FALSE(read().sms.contains(0)) << "LS keeps the low SMs";
}

// LS starved: its work stays in flight for epochs (BE on every SM under MPS: no busy period ever ends). The
// time it has been busy counts, so feedback and G-Space take SMs from BE instead of seeing LS idle.
TEST_F(QosdDaemon, FeedbackAndGSpaceReactToLsThatNeverFinishes) {
  for (const char *policy : {"feedback", "gspace"}) {
    Config c;
    c.policy = policy;
    c.targetP99Us = 1000;
    auto d = daemon(c);
    std::uint64_t t = 100 * kMs;
    d->start(t);
    const shm::PolicyValue first = read();
    shm::LsClient &ls = seg().ls[0];
    ls.pid.store(static_cast<std::uint64_t>(getpid()));
    ls.streams[0].submitted.fetch_add(1);                  // never completed
    for (int i = 0; i < 200; ++i) d->step(t += 100 * kUs); // 20 ms: 10 epochs
    const shm::PolicyValue now = read();
    EXPECT_FALSE(now == first) << policy << ": BE kept " << now.sms.count() << " SMs, cap " << now.per_sm;
    EXPECT_TRUE(now.sms.count() < first.sms.count() || now.per_sm < first.per_sm || first.per_sm == 0) << policy;
    ls.streams[0].completed.store(ls.streams[0].submitted.load());
    ls.pid.store(0);
  }
}

} // namespace

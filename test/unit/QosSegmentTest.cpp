// The segment ptb-qosd shares with its BE and LS clients (runtime/include/ptb/qos/segment.h): created with
// owner and group permissions, refused when forged (magic, version, size, links, special files, a file
// others may write), one controller at a time, a taken-over segment keeps its clients, and a reader never
// sees half of a published policy. Every file lives in a fresh temporary directory.
#include <ptb/qos/link_decision.h>
#include <ptb/qos/segment.h>

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include <random>
#include <thread>

#include "TempDir.h"
#include "TestSeed.h"

namespace shm = ptb::qos::shm;
namespace qos = ptb::qos;

namespace {

class QosSegment : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path.empty());
    dir_ = tmp_.path;
    path_ = shm::segment_path(dir_, "GPU-test");
  }
  TempDir tmp_{"ptb-qosd-test"};
  std::string dir_, path_;
};

// Writes `bytes` zero bytes to path (mode 0660), as a forger would.
void write_file(const std::string &path, std::size_t bytes, mode_t mode = 0660) {
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, mode);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(bytes)), 0);
  fchmod(fd, mode);
  close(fd);
}

TEST_F(QosSegment, CreatedOwnerAndGroupOnlyAndAttached) {
  const mode_t old = umask(0);
  shm::Mapping ctl;
  bool taken = true;
  ASSERT_EQ(shm::create_or_take(path_, 132, "GPU-test", ctl, taken), shm::Status::ok);
  umask(old);
  EXPECT_FALSE(taken);
  struct stat st{};
  ASSERT_EQ(stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  EXPECT_EQ(static_cast<std::size_t>(st.st_size), shm::kSegmentBytes);
  EXPECT_EQ(shm::get_text(ctl->gpu), "GPU-test");
  EXPECT_EQ(ctl->controller.pid.load(), static_cast<std::uint64_t>(getpid()));
  EXPECT_EQ(ctl->controller.incarnation.load(), 1u);

  shm::Mapping client;
  ASSERT_EQ(shm::attach(path_, client), shm::Status::ok);
  EXPECT_EQ(client->sm_count.load(), 132u);
  // The same pages: what one writes the other reads.
  ctl->stats.yields.store(7);
  EXPECT_EQ(client->stats.yields.load(), 7u);
}

TEST_F(QosSegment, MissingIsSaid) {
  shm::Mapping client;
  EXPECT_EQ(shm::attach(path_, client), shm::Status::missing);
  EXPECT_FALSE(client);
}

TEST_F(QosSegment, ForgedFilesRefused) {
  shm::Mapping client;
  // Zeros of the right size: no magic.
  write_file(path_, shm::kSegmentBytes);
  EXPECT_EQ(shm::attach(path_, client), shm::Status::bad_magic);
  // Wrong size.
  write_file(path_, shm::kSegmentBytes + shm::kPage);
  EXPECT_EQ(shm::attach(path_, client), shm::Status::wrong_size);
  // Writable by others.
  write_file(path_, shm::kSegmentBytes, 0666);
  EXPECT_EQ(shm::attach(path_, client), shm::Status::open_to_others);
  // A real segment of another version.
  unlink(path_.c_str());
  {
    shm::Mapping ctl;
    bool taken = false;
    ASSERT_EQ(shm::create_or_take(path_, 132, "GPU-test", ctl, taken), shm::Status::ok);
    ctl->version.store(shm::kVersion + 1);
  }
  EXPECT_EQ(shm::attach(path_, client), shm::Status::wrong_version);
  shm::Mapping again;
  bool taken = false;
  EXPECT_EQ(shm::create_or_take(path_, 132, "GPU-test", again, taken), shm::Status::wrong_version);
  EXPECT_FALSE(client);
}

TEST_F(QosSegment, LinksAndSpecialFilesNeverOpened) {
  shm::Mapping ctl;
  bool taken = false;
  const std::string real = shm::segment_path(dir_, "GPU-real");
  ASSERT_EQ(shm::create_or_take(real, 132, "GPU-real", ctl, taken), shm::Status::ok);
  ASSERT_EQ(symlink(real.c_str(), path_.c_str()), 0);
  shm::Mapping client;
  EXPECT_EQ(shm::attach(path_, client), shm::Status::not_regular);
  shm::Mapping second;
  EXPECT_EQ(shm::create_or_take(path_, 132, "GPU-test", second, taken), shm::Status::not_regular);
  unlink(path_.c_str());
  // A FIFO (opening one for reading could block) and a private device node (root only).
  ASSERT_EQ(mkfifo(path_.c_str(), 0660), 0);
  EXPECT_EQ(shm::attach(path_, client), shm::Status::not_regular);
  EXPECT_EQ(shm::create_or_take(path_, 132, "GPU-test", second, taken), shm::Status::not_regular);
  unlink(path_.c_str());
  if (geteuid() == 0) {
    ASSERT_EQ(mknod(path_.c_str(), S_IFCHR | 0660, makedev(1, 3)), 0); // /dev/null's numbers, in the temp dir
    EXPECT_EQ(shm::attach(path_, client), shm::Status::not_regular);
  }
  EXPECT_FALSE(client);
}

TEST_F(QosSegment, OwnerMustBeTrusted) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give the file to another user";
  shm::Mapping ctl;
  bool taken = false;
  ASSERT_EQ(shm::create_or_take(path_, 132, "GPU-test", ctl, taken), shm::Status::ok);
  // User 4242's file, writable by group 4343: a client of user 4343 (the child) can open it, and must
  // still refuse it, unless PTB_QOSD_UID names 4242.
  ASSERT_EQ(chown(path_.c_str(), 4242, 4343), 0);
  ASSERT_EQ(chmod(dir_.c_str(), 0711), 0); // another user may reach the file
  const pid_t child = fork();
  if (child == 0) {
    if (setgid(4343) != 0 || setuid(4343) != 0) _exit(10);
    shm::Mapping client;
    if (shm::attach(path_, client) != shm::Status::wrong_owner) _exit(11);
    setenv("PTB_QOSD_UID", "4242", 1);
    _exit(shm::attach(path_, client) == shm::Status::ok ? 0 : 12);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST_F(QosSegment, SecondControllerRefusedAndRestartTakesOver) {
  shm::Mapping first;
  bool taken = false;
  ASSERT_EQ(shm::create_or_take(path_, 132, "GPU-test", first, taken), shm::Status::ok);
  first->be[3].pid.store(12345); // a client of the first controller
  // Another process (a second controller) is refused while the first lives: flock is per open file.
  const pid_t child = fork();
  if (child == 0) {
    shm::Mapping second;
    bool child_taken = false;
    _exit(shm::create_or_take(path_, 132, "GPU-test", second, child_taken) == shm::Status::held ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  // The first one ends (its descriptor closes, as when it dies): the next takes over, clients kept.
  first.reset();
  shm::Mapping next;
  ASSERT_EQ(shm::create_or_take(path_, 132, "GPU-test", next, taken), shm::Status::ok);
  EXPECT_TRUE(taken);
  EXPECT_EQ(next->controller.incarnation.load(), 2u);
  EXPECT_EQ(next->be[3].pid.load(), 12345u);
}

TEST_F(QosSegment, KeysNameFilesOnly) {
  EXPECT_TRUE(shm::valid_key("GPU-5f1c2d3e-0000-1111-2222-333344445555"));
  EXPECT_TRUE(shm::valid_key("gpu0"));
  EXPECT_FALSE(shm::valid_key(""));
  EXPECT_FALSE(shm::valid_key("../etc"));
  EXPECT_FALSE(shm::valid_key("a/b"));
  EXPECT_FALSE(shm::valid_key(".hidden"));
  EXPECT_FALSE(shm::valid_key(std::string(64, 'a')));
}

ptb::qos::shm::PolicyValue random_policy(std::mt19937 &rng) {
  shm::PolicyValue v;
  v.sms = ptb::SmSet::none();
  v.capped = ptb::SmSet::none();
  for (unsigned sm = 0; sm < ptb::kMaxSms; ++sm) {
    if (rng() % 2) v.sms.add(sm);
    if (rng() % 3 == 0) v.capped.add(sm);
  }
  v.per_sm = rng() % 33;
  return v;
}

TEST_F(QosSegment, PublishedPolicyRoundTripsWhole) {
  std::mt19937 rng(test_seed("QosSegment.PublishedPolicyRoundTripsWhole"));
  shm::Mapping ctl;
  bool taken = false;
  ASSERT_EQ(shm::create_or_take(path_, 132, "GPU-test", ctl, taken), shm::Status::ok);
  shm::Mapping client;
  ASSERT_EQ(shm::attach(path_, client), shm::Status::ok);
  // A writer publishes pairs (policy, safe) where safe is a function of policy (per_sm + 1, sets swapped);
  // a reader that ever sees a pair that does not match saw a torn write.
  std::vector<shm::PolicyValue> values;
  for (int __i = 0; __i < 64; ++__i) values.push_back(random_policy(rng));
  auto partner = [](const shm::PolicyValue &v) {
    shm::PolicyValue safe;
    safe.sms = v.capped;
    safe.capped = v.sms;
    safe.per_sm = v.per_sm + 1;
    return safe;
  };
  shm::publish(*ctl, values[0], partner(values[0]));
  std::atomic<bool> done{false};
  std::atomic<unsigned> published{1};
  std::thread writer([&] {
    for (unsigned round = 1; !done; ++round) {
      const shm::PolicyValue &v = values[round % values.size()];
      shm::publish(*ctl, v, partner(v));
      published = round + 1;
    }
  });
  unsigned reads = 0, torn = 0;
  std::uint64_t last_seq = 0;
  while (reads < 20000) {
    shm::PolicyValue policy, safe;
    std::uint64_t seq = 0;
    if (!shm::read_published(*client, policy, safe, seq)) continue;
    ++reads;
    if (partner(policy) != safe) ++torn;
    EXPECT_EQ(seq % 2, 0u);
    EXPECT_GE(seq, last_seq);
    last_seq = seq;
  }
  done = true;
  writer.join();
  EXPECT_EQ(torn, 0u) << "of " << reads << " reads";
  EXPECT_GT(published.load(), 100u); // the reads overlapped many writes
  // The last one published is what a reader sees now.
  shm::PolicyValue policy, safe;
  std::uint64_t seq = 0;
  ASSERT_TRUE(shm::read_published(*client, policy, safe, seq));
  EXPECT_TRUE(policy == values[(published - 1) % values.size()]);
  EXPECT_EQ(seq, 2u * published);
}

// slice_of: equal runs of the policy's SMs in SM order, among the GPU's SMs only; the whole policy when
// there is nothing to divide.
TEST(QosSlice, EqualDisjointRunsOfThePolicysSms) {
  shm::PolicyValue all;
  all.per_sm = 2;
  EXPECT_EQ(shm::slice_of(all, shm::slice_word(0, 4), 132).sms.str(), "0-32");
  EXPECT_EQ(shm::slice_of(all, shm::slice_word(3, 4), 132).sms.str(), "99-131");
  EXPECT_EQ(shm::slice_of(all, shm::slice_word(3, 4), 132).per_sm, 2u);
  shm::PolicyValue odd;
  ASSERT_TRUE(ptb::SmSet::parse("1,3,5,7,9,11,13", odd.sms));
  EXPECT_EQ(shm::slice_of(odd, shm::slice_word(0, 3), 132).sms.str(), "1,3");
  EXPECT_EQ(shm::slice_of(odd, shm::slice_word(1, 3), 132).sms.str(), "5,7");
  EXPECT_EQ(shm::slice_of(odd, shm::slice_word(2, 3), 132).sms.str(), "9,11,13");
  // Nothing to divide: no word, one part, a part out of range, fewer SMs than parts, no SMs.
  EXPECT_TRUE(shm::slice_of(odd, 0, 132) == odd);
  EXPECT_TRUE(shm::slice_of(odd, shm::slice_word(0, 1), 132) == odd);
  EXPECT_TRUE(shm::slice_of(odd, shm::slice_word(5, 3), 132) == odd);
  EXPECT_TRUE(shm::slice_of(odd, shm::slice_word(0, 8), 132) == odd);
  shm::PolicyValue none;
  none.sms = ptb::SmSet::none();
  EXPECT_TRUE(shm::slice_of(none, shm::slice_word(1, 2), 132).sms.empty());
  // Every part of any count covers the policy once.
  for (unsigned parts = 2; parts <= 16; ++parts) {
    ptb::SmSet seen;
    unsigned total = 0;
    for (unsigned part = 0; part < parts; ++part) {
      const ptb::SmSet mine = shm::slice_of(all, shm::slice_word(part, parts), 132).sms;
      EXPECT_TRUE((mine & seen).empty());
      seen = seen | mine;
      total += mine.count();
    }
    EXPECT_EQ(total, 132u) << parts;
    EXPECT_TRUE(seen == ptb::SmSet::first(132)) << parts;
  }
}

TEST_F(QosSegment, WriterDeadMidWriteIsNotRead) {
  shm::Mapping ctl;
  bool taken = false;
  ASSERT_EQ(shm::create_or_take(path_, 132, "GPU-test", ctl, taken), shm::Status::ok);
  shm::PolicyValue v;
  v.sms = ptb::SmSet::range(10, 20);
  shm::publish(*ctl, v, v);
  ctl->controller.seq.fetch_add(1); // a controller that died between its two stores
  shm::PolicyValue policy, safe;
  std::uint64_t seq = 0;
  EXPECT_FALSE(shm::read_published(*ctl, policy, safe, seq));
  // The next controller's publish mends it.
  shm::publish(*ctl, v, v);
  ASSERT_TRUE(shm::read_published(*ctl, policy, safe, seq));
  EXPECT_TRUE(policy == v);
}

TEST_F(QosSegment, ControllerGoneByLeaseOrStop) {
  shm::Mapping ctl;
  bool taken = false;
  ASSERT_EQ(shm::create_or_take(path_, 132, "GPU-test", ctl, taken), shm::Status::ok);
  auto &words = ctl->controller;
  EXPECT_TRUE(shm::controller_gone(*ctl, shm::now_ns())); // no heartbeat yet
  words.lease_ns.store(50'000'000);
  const std::uint64_t now = shm::now_ns();
  words.heartbeat_ns.store(now);
  EXPECT_FALSE(shm::controller_gone(*ctl, now + 49'000'000));
  EXPECT_TRUE(shm::controller_gone(*ctl, now + 51'000'000));
  words.stopped.store(1);
  EXPECT_TRUE(shm::controller_gone(*ctl, now));
}

// A BE link's look at a live controller that is in the middle of a write fails to read the policy: the link keeps
// what it applies (before 2026-11-29 it took its safe state, about 60 times a second beside a busy service). Only
// a policy unreadable for a whole lease, the controller stopped, or its heartbeat older than the lease, is safe.
TEST_F(QosSegment, LinkKeepsItsPolicyThroughAWriteInProgress) {
  shm::Mapping ctl;
  bool taken = false;
  ASSERT_EQ(shm::create_or_take(path_, 132, "GPU-test", ctl, taken), shm::Status::ok);
  auto &words = ctl->controller;
  const std::uint64_t lease = 50'000'000, t0 = 1'000'000'000;
  words.lease_ns.store(lease);
  words.heartbeat_ns.store(t0);
  using Act = qos::LinkDecision::Act;
  using Why = qos::LinkDecision::Why;
  qos::LinkDecision decision;
  auto look = [&](std::uint64_t now) {
    shm::PolicyValue policy, safe;
    std::uint64_t seq = 0;
    const bool got = shm::read_published(*ctl, policy, safe, seq);
    return decision.step(now, words.stopped.load() != 0, shm::controller_gone(*ctl, now), got, seq, lease);
  };
  EXPECT_EQ(look(t0), Act::safe); // beating, nothing published yet
  EXPECT_EQ(decision.why(), Why::unpublished);
  shm::PolicyValue v;
  v.sms = ptb::SmSet::range(0, 131);
  shm::publish(*ctl, v, v);
  EXPECT_EQ(look(t0 + 1000), Act::follow);
  words.seq.fetch_add(1); // the controller is writing
  words.heartbeat_ns.store(t0 + 2'000'000);
  EXPECT_EQ(look(t0 + 2'000'000), Act::keep);
  words.heartbeat_ns.store(t0 + 40'000'000);
  EXPECT_EQ(look(t0 + 40'000'000), Act::keep);
  words.seq.fetch_add(1); // done writing
  EXPECT_EQ(look(t0 + 40'001'000), Act::follow);
  // Unreadable for longer than a lease while the heartbeat stays fresh: safe, and said why.
  words.seq.fetch_add(1);
  EXPECT_EQ(look(t0 + 41'000'000), Act::keep);
  words.heartbeat_ns.store(t0 + 95'000'000);
  EXPECT_EQ(look(t0 + 95'000'000), Act::safe);
  EXPECT_EQ(decision.why(), Why::unreadable);
  shm::publish(*ctl, v, v); // a publish mends the sequence
  EXPECT_EQ(look(t0 + 95'001'000), Act::follow);
  // The heartbeat older than the lease, whatever the read gives; the controller stopped.
  EXPECT_EQ(look(t0 + 95'000'000 + lease + 1), Act::safe);
  EXPECT_EQ(decision.why(), Why::lease);
  words.heartbeat_ns.store(t0 + 200'000'000);
  words.stopped.store(1);
  EXPECT_EQ(look(t0 + 200'000'000), Act::safe);
  EXPECT_EQ(decision.why(), Why::stopped);
}

// The same beside a controller that publishes as the gate does beside a busy service (a change every few
// microseconds): the link never takes its safe state, whatever share of its reads fails.
TEST_F(QosSegment, LinkNeverSafeBesideAFastPublisher) {
  shm::Mapping ctl;
  bool taken = false;
  ASSERT_EQ(shm::create_or_take(path_, 132, "GPU-test", ctl, taken), shm::Status::ok);
  shm::Mapping client;
  ASSERT_EQ(shm::attach(path_, client), shm::Status::ok);
  auto &words = ctl->controller;
  words.lease_ns.store(50'000'000);
  words.heartbeat_ns.store(shm::now_ns());
  shm::PolicyValue wide, narrow;
  wide.sms = ptb::SmSet::range(0, 131);
  narrow.sms = ptb::SmSet::range(99, 131);
  narrow.per_sm = 2;
  shm::publish(*ctl, wide, narrow);
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (unsigned round = 0; !done; ++round) {
      shm::publish(*ctl, round % 2 ? wide : narrow, narrow);
      words.heartbeat_ns.store(shm::now_ns());
      const std::uint64_t until = shm::now_ns() + 2000; // about the gate's 5 us poll, less
      while (shm::now_ns() < until) {}
    }
  });
  qos::LinkDecision decision;
  unsigned failed = 0, safe = 0;
  for (unsigned look = 0; look < 200000; ++look) {
    shm::PolicyValue policy, safe_policy;
    std::uint64_t seq = 0;
    const bool got = shm::read_published(*client, policy, safe_policy, seq);
    failed += !got;
    const std::uint64_t now = shm::now_ns();
    if (decision.step(now, false, shm::controller_gone(*client, now), got, seq, 50'000'000) ==
        qos::LinkDecision::Act::safe)
      ++safe;
  }
  done = true;
  writer.join();
  EXPECT_EQ(safe, 0u) << failed << " of 200000 reads failed";
}

TEST_F(QosSegment, EntriesClaimedOnceEach) {
  shm::Mapping ctl;
  bool taken = false;
  ASSERT_EQ(shm::create_or_take(path_, 132, "GPU-test", ctl, taken), shm::Status::ok);
  std::vector<unsigned> got(shm::kBeClients + 4, 0);
  std::vector<std::thread> threads;
  for (unsigned __i = 0; __i < got.size(); ++__i)
    threads.emplace_back([&, __i] { got[__i] = shm::claim(ctl->be, 1000 + __i); });
  for (auto &th : threads) th.join();
  std::vector<unsigned> seen(shm::kBeClients + 1, 0);
  for (unsigned entry : got) ++seen[entry];
  for (unsigned entry = 0; entry < shm::kBeClients; ++entry) EXPECT_EQ(seen[entry], 1u) << entry;
  EXPECT_EQ(seen[shm::kBeClients], 4u); // the rest found none
}

} // namespace

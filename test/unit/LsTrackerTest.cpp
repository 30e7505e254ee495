// The LS library's bookkeeping (runtime/ls/ls_tracker.h) on a real segment in a fresh temporary directory:
// stream slots, the shared last slot, sequence numbers and the device's writes (played by the test: it
// stores what the library's cuStreamWriteValue64 would make the device store), the legacy stream's key,
// the C API's request ring, and the GPU key's format.
#include "ls_tracker.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "TempDir.h"

namespace shm = ptb::qos::shm;
namespace ls = ptb::ls;

namespace {

class LsTracker : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path.empty());
    dir_ = tmp_.path;
    setenv("PTB_QOSD_DIR", dir_.c_str(), 1);
    const std::string path = shm::segment_path(shm::segment_dir(), "GPU-test");
    bool taken = true;
    ASSERT_EQ(shm::create_or_take(path, 132, "GPU-test", ctl_, taken), shm::Status::ok);
    ASSERT_EQ(shm::attach(path, client_), shm::Status::ok);
    slot_ = shm::claim(client_->ls, static_cast<std::uint64_t>(getpid()));
    ASSERT_LT(slot_, shm::kLsClients);
  }
  void TearDown() override { unsetenv("PTB_QOSD_DIR"); }
  // What the controller sees of the LS client (through its own mapping).
  shm::LsClient &seen() { return ctl_->ls[slot_]; }
  TempDir tmp_{"ptb-ls-test"};
  std::string dir_;
  shm::Mapping ctl_, client_;
  unsigned slot_ = 0;
};

TEST_F(LsTracker, SegmentFoundInPtbQosdDir) {
  EXPECT_EQ(shm::segment_dir(), dir_);
  EXPECT_EQ(seen().pid.load(), static_cast<std::uint64_t>(getpid()));
}

TEST_F(LsTracker, OneSlotPerStreamLegacyKeyOne) {
  ls::ClientTracker t(client_->ls[slot_]);
  const unsigned legacy = t.slot_of(ls::legacy_key());
  const unsigned a = t.slot_of(0x7f0000001000ull);
  const unsigned b = t.slot_of(0x7f0000002000ull);
  EXPECT_EQ(legacy, 0u);
  EXPECT_EQ(a, 1u);
  EXPECT_EQ(b, 2u);
  EXPECT_EQ(t.slot_of(0x7f0000001000ull), a); // the same stream, the same slot
  EXPECT_EQ(t.slot_of(ls::legacy_key()), legacy);
  EXPECT_EQ(seen().streams[legacy].key.load(), 1u);
  EXPECT_EQ(seen().streams[a].key.load(), 0x7f0000001000ull);
  EXPECT_EQ(seen().streams[3].key.load(), 0u);
  // Per-thread default streams of two threads are two streams, neither the legacy one nor a real handle.
  EXPECT_NE(ls::per_thread_key(100), ls::per_thread_key(101));
  EXPECT_NE(ls::per_thread_key(100), ls::legacy_key());
  EXPECT_NE(ls::per_thread_key(100) % 8, 0u);
}

TEST_F(LsTracker, SequenceBusyUntilTheDeviceWritesTheLast) {
  ls::ClientTracker t(client_->ls[slot_]);
  const unsigned s = t.slot_of(0x1000);
  shm::LsStream &w = seen().streams[s];
  EXPECT_FALSE(ls::busy(w));
  std::vector<std::uint64_t> numbers;
  for (int i = 0; i < 3; ++i) {
    std::lock_guard<std::mutex> lock(t.lock(s));
    numbers.push_back(t.submit(s));
  }
  EXPECT_EQ(numbers, (std::vector<std::uint64_t>{1, 2, 3}));
  EXPECT_EQ(w.submitted.load(), 3u);
  EXPECT_EQ(seen().launches.load(), 3u);
  EXPECT_EQ(seen().overflow.load(), 0u);
  EXPECT_TRUE(ls::busy(w));
  // The device finishes the launches in stream order and writes each number.
  t.completed(s).store(1);
  EXPECT_TRUE(ls::busy(w));
  t.completed(s).store(2);
  EXPECT_TRUE(ls::busy(w));
  t.completed(s).store(3);
  EXPECT_FALSE(ls::busy(w));
}

TEST_F(LsTracker, UndoneLaunchLeavesTheStreamIdle) {
  ls::ClientTracker t(client_->ls[slot_]);
  const unsigned s = t.slot_of(0x1000);
  std::uint64_t n;
  {
    std::lock_guard<std::mutex> lock(t.lock(s));
    n = t.submit(s);
  }
  t.completed(s).store(n);
  {
    std::lock_guard<std::mutex> lock(t.lock(s));
    n = t.submit(s);
    t.undo(s, n); // its write could not be enqueued
  }
  EXPECT_FALSE(ls::busy(seen().streams[s]));
  EXPECT_EQ(seen().launches.load(), 1u);
}

TEST_F(LsTracker, StreamsBeyondTheTableShareTheLastSlotAndCount) {
  ls::ClientTracker t(client_->ls[slot_]);
  for (unsigned i = 0; i < ls::kOwnSlots; ++i) EXPECT_EQ(t.slot_of(0x1000 + 0x100 * i), i);
  const unsigned x = t.slot_of(0x900000);
  const unsigned y = t.slot_of(0x900100);
  EXPECT_EQ(x, shm::kLsStreams - 1);
  EXPECT_EQ(y, shm::kLsStreams - 1);
  EXPECT_TRUE(ls::ClientTracker::shared(x));
  EXPECT_EQ(seen().streams[x].key.load(), ls::kSharedKey);
  // Two launches in two overflowing streams; the second finishes first. Counted completions leave the slot
  // idle whatever the order (a written sequence number would leave 1 != 2).
  {
    std::lock_guard<std::mutex> lock(t.lock(x));
    t.submit(x);
    t.submit(y);
  }
  EXPECT_EQ(seen().overflow.load(), 2u);
  EXPECT_EQ(seen().launches.load(), 2u);
  EXPECT_TRUE(ls::busy(seen().streams[x]));
  ls::ClientTracker::count_completion(t.completed(y));
  EXPECT_TRUE(ls::busy(seen().streams[x]));
  ls::ClientTracker::count_completion(t.completed(x));
  EXPECT_FALSE(ls::busy(seen().streams[x]));
  // Own slots keep their streams.
  EXPECT_EQ(t.slot_of(0x1000), 0u);
}

TEST_F(LsTracker, DestroyedStreamsSlotServesAnotherOnceIdle) {
  ls::ClientTracker t(client_->ls[slot_]);
  for (unsigned i = 0; i < ls::kOwnSlots; ++i) EXPECT_EQ(t.slot_of(0x1000 + 0x100 * i), i);
  // Stream 0x1500 (slot 5) has a launch in flight when it is destroyed.
  {
    std::lock_guard<std::mutex> lock(t.lock(5));
    t.submit(5);
  }
  t.retire(0x1500);
  EXPECT_EQ(t.slot_of(0x900000), ls::kSharedSlot); // still busy: not given away
  t.completed(5).store(1);                         // the device wrote its last number
  EXPECT_EQ(t.slot_of(0x900100), 5u);
  EXPECT_EQ(seen().streams[5].key.load(), 0x900100u);
  EXPECT_FALSE(ls::busy(seen().streams[5]));
  {
    std::lock_guard<std::mutex> lock(t.lock(5));
    EXPECT_EQ(t.submit(5), 2u); // numbering goes on
  }
  // A retired stream whose handle comes back keeps its slot, which is no longer up for grabs.
  t.retire(0x1600);
  EXPECT_EQ(t.slot_of(0x1600), 6u);
  EXPECT_EQ(t.slot_of(0x900200), ls::kSharedSlot);
  // The shared slot is never retired.
  t.retire(ls::kSharedKey);
  EXPECT_EQ(t.slot_of(0x900300), ls::kSharedSlot);
}

TEST_F(LsTracker, ThreadsOnOneStreamGetDistinctNumbersInOrder) {
  ls::ClientTracker t(client_->ls[slot_]);
  const unsigned s = t.slot_of(0x1000);
  // Each thread writes its number "in the stream" under the slot lock, as the glue does: the last write
  // is the largest number, so the stream ends idle.
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      for (int j = 0; j < 1000; ++j) {
        std::lock_guard<std::mutex> lock(t.lock(s));
        t.completed(s).store(t.submit(s));
      }
    });
  for (std::thread &th : threads) th.join();
  EXPECT_EQ(seen().streams[s].submitted.load(), 4000u);
  EXPECT_FALSE(ls::busy(seen().streams[s]));
  EXPECT_EQ(seen().launches.load(), 4000u);
}

TEST_F(LsTracker, ClaimedSlotStartsIdleAfterADeadClient) {
  // A reaped client left numbers behind: the next one continues from them, idle, with its counters zeroed.
  shm::LsClient &c = client_->ls[slot_];
  c.streams[0].key.store(0xdead000);
  c.streams[0].submitted.store(9);
  c.streams[0].completed.store(7);
  c.launches.store(9);
  c.requests_begun.store(5);
  c.requests_done.store(4);
  ls::ClientTracker t(c);
  EXPECT_EQ(seen().streams[0].key.load(), 0u);
  EXPECT_FALSE(ls::busy(seen().streams[0]));
  EXPECT_EQ(seen().launches.load(), 0u);
  EXPECT_EQ(seen().requests_done.load(), 5u);
  std::lock_guard<std::mutex> lock(t.lock(0));
  EXPECT_EQ(t.slot_of(0x1000), 0u);
  EXPECT_EQ(t.submit(0), 10u);
}

TEST_F(LsTracker, RequestsBeginEndInOrderWithRing) {
  ls::ClientTracker t(client_->ls[slot_]);
  EXPECT_EQ(t.next_end(), 0u); // an end without a begin
  EXPECT_EQ(t.begin_request(1000), 1u);
  EXPECT_EQ(t.begin_request(2000), 2u);
  EXPECT_EQ(seen().requests_begun.load(), 2u);
  EXPECT_EQ(seen().request_begin_ns[1].load(), 1000u);
  EXPECT_EQ(seen().request_begin_ns[2].load(), 2000u);
  EXPECT_EQ(t.next_end(), 1u);
  t.requests_done().store(1); // the device reached the first end
  EXPECT_EQ(seen().requests_done.load(), 1u);
  EXPECT_EQ(t.next_end(), 2u);
  EXPECT_EQ(t.next_end(), 0u); // no request open
  t.end_failed(2);             // its write could not be enqueued: the host marks it done
  EXPECT_EQ(seen().requests_done.load(), 2u);
  t.end_failed(1); // never lowered
  EXPECT_EQ(seen().requests_done.load(), 2u);
  // The ring wraps at kRequestRing: request n's begin time at n % kRequestRing.
  for (std::uint64_t i = 3; i <= shm::kRequestRing + 1; ++i) t.begin_request(10 * i);
  EXPECT_EQ(seen().request_begin_ns[0].load(), 10u * shm::kRequestRing);
  EXPECT_EQ(seen().request_begin_ns[1].load(), 10u * (shm::kRequestRing + 1));
  EXPECT_EQ(seen().request_begin_ns[2].load(), 2000u);
}

TEST(LsKey, FormattedAsNvidiaSmi) {
  const unsigned char uuid[16] = {0x9d, 0x0b, 0x8b, 0x1a, 0x4c, 0x3e, 0x11, 0xf0,
                                  0xab, 0xcd, 0x01, 0x23, 0x45, 0x67, 0x89, 0xef};
  const std::string key = shm::key_of_uuid(uuid); // the LS library's key, as the BE link and ptb-qosd make it
  EXPECT_EQ(key, "GPU-9d0b8b1a-4c3e-11f0-abcd-0123456789ef");
  EXPECT_TRUE(shm::valid_key(key));
}

TEST(LsRetry, AtMostOncePerPeriod) {
  ls::RetryClock clock(1000);
  EXPECT_TRUE(clock.due(5000));
  EXPECT_FALSE(clock.due(5500));
  EXPECT_FALSE(clock.due(5999));
  EXPECT_TRUE(clock.due(6000));
  EXPECT_FALSE(clock.due(6001));
}

} // namespace

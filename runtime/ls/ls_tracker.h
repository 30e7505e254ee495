// runtime/ls/ls_tracker.h: the LS library's bookkeeping in one LsClient slot of the segment
// (ptb/qos/segment.h), without CUDA: which stream slot a stream's launches count in, the sequence numbers
// the host hands out before it enqueues the device's write, and the begin/end request sequence of the C
// API. The CUPTI/driver glue (ptb_ls.cpp) only asks it and enqueues what it says; the unit tests
// (test/unit/LsTrackerTest.cpp) play the device's part by storing the numbers themselves.
#pragma once

#include <ptb/qos/segment.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

namespace ptb::ls {

namespace shm = ptb::qos::shm;

// Stream keys: the stream's handle; the legacy default stream (handle 0 or CU_STREAM_LEGACY) is key 1. A
// per-thread default stream is one stream per thread under one handle (CU_STREAM_PER_THREAD, 2): its key
// adds the thread's id above bit 32, which no real handle (an aligned pointer) can equal.
constexpr std::uint64_t kLegacyKey = 1;
constexpr std::uint64_t kPerThreadHandle = 2;
inline std::uint64_t legacy_key() { return kLegacyKey; }
inline std::uint64_t per_thread_key(std::uint64_t tid) { return (tid << 32) | kPerThreadHandle; }

// The last stream slot is shared by every stream beyond the first kLsStreams - 1 (its key says so). Its
// completions cannot be plain writes of a sequence number (two streams finish in any order, and the
// smaller number written last would leave the slot busy forever), so they are counted: each adds 1 to
// `completed` (the glue does it in a host function of the stream).
constexpr unsigned kOwnSlots = shm::kLsStreams - 1;
constexpr unsigned kSharedSlot = shm::kLsStreams - 1;
constexpr std::uint64_t kSharedKey = ~0ull;

class ClientTracker {
public:
  // `client` is a slot this process claimed (shm::claim); its stream words are reset for this process:
  // keys cleared, every sequence made idle (completed = submitted), counters zeroed.
  explicit ClientTracker(shm::LsClient& client) : client_(client) {
    for (unsigned i = 0; i < shm::kLsStreams; ++i) {
      shm::LsStream& s = client_.streams[i];
      s.key.store(0, std::memory_order_relaxed);
      s.completed.store(s.submitted.load(std::memory_order_relaxed), std::memory_order_relaxed);
      keys_[i].store(0, std::memory_order_relaxed);
    }
    client_.launches.store(0, std::memory_order_relaxed);
    client_.overflow.store(0, std::memory_order_relaxed);
    client_.requests_done.store(client_.requests_begun.load(std::memory_order_relaxed), std::memory_order_relaxed);
    ended_ = client_.requests_begun.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
  }
  ClientTracker(const ClientTracker&) = delete;
  ClientTracker& operator=(const ClientTracker&) = delete;

  shm::LsClient& client() { return client_; }

  // The slot of a stream: the one its key has, else a free one (claimed for the key), else the slot of a
  // destroyed stream that is idle (retire), else the shared last slot. Lock-free when the key has a slot.
  unsigned slot_of(std::uint64_t key) {
    for (unsigned i = 0; i < kOwnSlots; ++i) {
      const std::uint64_t k = keys_[i].load(std::memory_order_acquire);
      if (k == key) return keep(i);
      if (k == 0) break; // slots are taken in order and never freed: the rest are free
    }
    std::lock_guard<std::mutex> lock(assign_);
    for (unsigned i = 0; i < kOwnSlots; ++i) {
      const std::uint64_t k = keys_[i].load(std::memory_order_relaxed);
      if (k == key) return keep(i);
      if (k == 0) return take(i, key);
    }
    // A destroyed stream's slot, once the device wrote its last number: every earlier number of that stream
    // was written before it, so none can land after the new stream's.
    for (unsigned i = 0; i < kOwnSlots; ++i)
      if (retired_[i].load(std::memory_order_relaxed) && !busy(i)) return take(i, key);
    client_.streams[kSharedSlot].key.store(kSharedKey, std::memory_order_relaxed);
    return kSharedSlot;
  }
  // The stream of `key` is being destroyed: its slot may serve another stream once it is idle.
  void retire(std::uint64_t key) {
    std::lock_guard<std::mutex> lock(assign_);
    for (unsigned i = 0; i < kOwnSlots; ++i)
      if (keys_[i].load(std::memory_order_relaxed) == key) retired_[i].store(true, std::memory_order_relaxed);
  }
  bool busy(unsigned slot) const { return shm::busy(client_.streams[slot]); }
  static bool shared(unsigned slot) { return slot == kSharedSlot; }

  // The lock a launch holds from submit() until its device write is enqueued (or undone): the numbers of
  // one slot reach its stream in the order they were handed out, so the last write is the largest.
  std::mutex& lock(unsigned slot) { return slot_locks_[slot]; }

  // A launch in `slot` (caller holds lock(slot)): its number n (submitted becomes n, so the slot is busy
  // until the device writes n, or adds the last 1 for the shared slot); counts the launch.
  std::uint64_t submit(unsigned slot) {
    shm::LsStream& s = client_.streams[slot];
    const std::uint64_t n = s.submitted.load(std::memory_order_relaxed) + 1;
    s.submitted.store(n, std::memory_order_release);
    client_.launches.fetch_add(1, std::memory_order_relaxed);
    if (shared(slot)) client_.overflow.fetch_add(1, std::memory_order_relaxed);
    return n;
  }
  // The write for launch n could not be enqueued (caller still holds lock(slot)): the launch is taken
  // back, as if it had never been counted, so the slot does not wait for a write that will never come.
  void undo(unsigned slot, std::uint64_t n) {
    shm::LsStream& s = client_.streams[slot];
    if (s.submitted.load(std::memory_order_relaxed) == n) s.submitted.store(n - 1, std::memory_order_release);
    client_.launches.fetch_sub(1, std::memory_order_relaxed);
    if (shared(slot)) client_.overflow.fetch_sub(1, std::memory_order_relaxed);
  }
  // The word the device writes n into (own slots), or adds 1 to (the shared slot).
  shm::Word& completed(unsigned slot) { return client_.streams[slot].completed; }
  // What the shared slot's host function does when its launch finished.
  static void count_completion(shm::Word& completed) { completed.fetch_add(1, std::memory_order_acq_rel); }

  // C API. begin: request n's begin time is stored before requests_begun says n (a reader that sees n sees
  // its time). Returns n.
  std::uint64_t begin_request(std::uint64_t now) {
    std::lock_guard<std::mutex> lock(requests_);
    const std::uint64_t n = client_.requests_begun.load(std::memory_order_relaxed) + 1;
    client_.request_begin_ns[n % shm::kRequestRing].store(now, std::memory_order_relaxed);
    client_.requests_begun.store(n, std::memory_order_release);
    return n;
  }
  // end: the number of the request this end finishes (ends finish requests in the order they began); 0
  // when no request is open (an end without its begin: nothing to write). The caller holds end_lock()
  // until the device write of the number is enqueued (or end_failed).
  std::mutex& end_lock() { return ends_; }
  std::uint64_t next_end() {
    std::lock_guard<std::mutex> lock(requests_);
    if (ended_ >= client_.requests_begun.load(std::memory_order_relaxed)) return 0;
    return ++ended_;
  }
  // The write of end k could not be enqueued: the host says request k is done (never lowering
  // requests_done), so the controller does not see it in flight forever.
  void end_failed(std::uint64_t k) {
    std::uint64_t done = client_.requests_done.load(std::memory_order_relaxed);
    while (done < k && !client_.requests_done.compare_exchange_weak(done, k, std::memory_order_acq_rel)) {}
  }
  shm::Word& requests_done() { return client_.requests_done; }

private:
  // A slot found by its key: a new stream with the handle of a destroyed one takes the slot back.
  unsigned keep(unsigned i) {
    if (retired_[i].load(std::memory_order_relaxed)) retired_[i].store(false, std::memory_order_relaxed);
    return i;
  }
  // Gives slot i to `key` (assign_ held).
  unsigned take(unsigned i, std::uint64_t key) {
    client_.streams[i].key.store(key, std::memory_order_relaxed);
    retired_[i].store(false, std::memory_order_relaxed);
    keys_[i].store(key, std::memory_order_release);
    return i;
  }

  shm::LsClient& client_;
  std::atomic<std::uint64_t> keys_[shm::kLsStreams] = {};
  std::atomic<bool> retired_[shm::kLsStreams] = {};
  std::mutex assign_;
  std::mutex slot_locks_[shm::kLsStreams];
  std::mutex requests_, ends_;
  std::uint64_t ended_ = 0; // under requests_
};

// Whether a slot is busy as the controller sees it (ptb/qos/segment.h).
using shm::busy;

// When to look for a missing segment again: at most once per `period_ns`.
class RetryClock {
public:
  explicit RetryClock(std::uint64_t period_ns = 1000000000ull) : period_ns_(period_ns) {}
  // True when a look is due at `now` (and the next one is then period_ns later).
  bool due(std::uint64_t now) {
    std::uint64_t next = next_.load(std::memory_order_relaxed);
    if (now < next) return false;
    return next_.compare_exchange_strong(next, now + period_ns_, std::memory_order_relaxed);
  }

private:
  std::uint64_t period_ns_;
  std::atomic<std::uint64_t> next_{0};
};

} // namespace ptb::ls

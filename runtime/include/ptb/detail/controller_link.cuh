// ptb/detail/controller_link.cuh: a BE program run with PTB_QOSD follows ptb-qosd, the controller of its GPU,
// with no change to its code: a thread of the runtime reads the policy the controller publishes in the GPU's
// segment (ptb/qos/segment.h) and sets the process policy to it, and falls back to the safe state when the
// controller is gone. docs/design/qos-controller.md; the variables: docs/reference/environment.md.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
//
//   PTB_QOSD unset, empty, "0" or "off": no link (nothing here runs; a launch costs what it cost).
//   PTB_QOSD=1 (or "on"): the controller of the GPU that is current at the process's first launch.
//   PTB_QOSD=GPU-...: the controller of that GPU key (as ptb-qosd --gpu names it).
//   PTB_QOSD_POLL_US: how often the thread looks (default 20 us).
//
// While linked, every launch the runtime can run as a twin runs as one (the controller may take SMs at any
// moment; an original kernel could not give them back), as under PTB_MODE=ptb; PTB_MODE=original still
// runs originals (and then nothing can be confined: said once).
//
// The safe state: the policy the controller published as `safe` (ptb-qosd's safe_sms, safe_per_sm), or,
// before any controller was seen, the highest quarter of the GPU's SMs, no cap. BE takes it when the
// controller stopped (at once), when its heartbeat is older than its lease (a controller killed: within
// the lease, 50 ms by default, and one poll), when no segment exists, and when the segment is refused.
// Each transition is said once on stderr ("ptb: ..."). A controller that starts or restarts is followed
// from its first heartbeat; one that made a new segment file is found within a second. When the controller
// divides BE's SMs among the BE processes (be_share split), the process applies its own part.
#pragma once
#include <cuda_runtime.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "../launch_mode.cuh"
#include "../policy.cuh"
#include "../qos/link_decision.h"
#include "../qos/segment.h"
#include "host_stamps.cuh"
#include "last_error.cuh"

namespace ptb {

namespace detail {

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints the device's UUID; empty on failure.
inline std::string gpu_key_of(int dev) {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, dev) != cudaSuccess) return std::string();
  return qos::shm::key_of_uuid(reinterpret_cast<const unsigned char*>(prop.uuid.bytes));
}

class ControllerLink {
public:
  ControllerLink(std::string key, unsigned sm_count) : key_(std::move(key)), sm_count_(sm_count) {
    path_ = qos::shm::segment_path(qos::shm::segment_dir(), key_);
    safe_ = qos::shm::default_safe(sm_count);
    if (const char* env = std::getenv("PTB_QOSD_POLL_US"))
      poll_us_ = static_cast<unsigned>(std::strtoul(env, nullptr, 10));
    if (poll_us_ == 0) poll_us_ = 20;
    thread_ = std::thread([this] { loop(); });
  }
  ControllerLink(const ControllerLink&) = delete;
  ControllerLink& operator=(const ControllerLink&) = delete;
  ~ControllerLink() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
    release_entry();
  }

private:
  void say(const char* what, const std::string& more) const {
    std::fprintf(stderr, "ptb: %s for %s (%s)%s%s\n", what, key_.c_str(), path_.c_str(), more.empty() ? "" : ": ",
                 more.c_str());
  }
  void release_entry() {
    if (map_ && entry_ < qos::shm::kBeClients) {
      std::uint64_t mine = static_cast<std::uint64_t>(getpid());
      map_->be[entry_].pid.compare_exchange_strong(mine, 0);
    }
    entry_ = qos::shm::kBeClients;
  }
  // Sets the process policy (outside any lock of ours: Policy::set takes the runtime's).
  void apply(const qos::shm::PolicyValue& value, bool safe) {
    if (applied_once_ && value == applied_ && safe == in_safe_) return;
    process_policy().set(value.sms, value.per_sm, value.capped);
    applied_ = value;
    applied_once_ = true;
    in_safe_ = safe;
  }
  void enter_safe(const char* why, bool tell = false) {
    if (tell || !in_safe_ || !applied_once_)
      say("no controller", std::string(why) + "; BE keeps to its safe state (SMs " + safe_.sms.str() +
                               (safe_.per_sm ? ", " + std::to_string(safe_.per_sm) + " per SM" : std::string()) + ")");
    apply(safe_, true);
    if (map_ && entry_ < qos::shm::kBeClients) map_->be[entry_].safe.store(1);
  }
  void try_attach(std::uint64_t now) {
    if (map_ || now < next_attach_) return;
    next_attach_ = now + 1'000'000'000ull; // once a second
    qos::shm::Mapping fresh;
    const qos::shm::Status __s = qos::shm::attach(path_, fresh);
    if (__s != qos::shm::Status::ok) {
      enter_safe(qos::shm::describe(__s), __s != last_status_);
      last_status_ = __s;
      return;
    }
    last_status_ = __s;
    struct stat st{};
    inode_ = fstat(fresh.fd(), &st) == 0 ? st.st_ino : 0;
    map_ = std::move(fresh);
    entry_ = qos::shm::claim(map_->be, static_cast<std::uint64_t>(getpid()));
    if (entry_ == qos::shm::kBeClients)
      say("no free BE entry in the segment", "the controller does not see this process");
  }
  // A controller that is gone may come back in a new file (the old one removed): look once a second.
  void check_replaced(std::uint64_t now) {
    if (now < next_attach_) return;
    next_attach_ = now + 1'000'000'000ull;
    struct stat st{};
    if (stat(path_.c_str(), &st) != 0 || st.st_ino != inode_) {
      release_entry();
      map_.reset();
      next_attach_ = 0;
    }
  }
  void step(std::uint64_t now) {
    try_attach(now);
    if (!map_) return;
    qos::shm::Segment& seg = *map_;
    if (entry_ < qos::shm::kBeClients && seg.be[entry_].pid.load() != static_cast<std::uint64_t>(getpid())) {
      entry_ = qos::shm::claim(seg.be, static_cast<std::uint64_t>(getpid())); // the controller reaped it
    }
    qos::shm::PolicyValue policy, safe;
    std::uint64_t seq = 0;
    const bool got = qos::shm::read_published(seg, policy, safe, seq);
    if (got && seq != 0) safe_ = safe;
    // A read that fell inside the controller's writes keeps what this process applies (qos/link_decision.h).
    const qos::LinkDecision::Act act =
        decision_.step(now, seg.controller.stopped.load() != 0, qos::shm::controller_gone(seg, now), got, seq,
                       seg.controller.lease_ns.load());
    if (act == qos::LinkDecision::Act::safe) {
      enter_safe(qos::LinkDecision::describe(decision_.why()));
      check_replaced(now);
    } else if (act == qos::LinkDecision::Act::follow) {
      if (in_safe_ || !applied_once_)
        say("following the controller", "pid " + std::to_string(seg.controller.pid.load()) + ", incarnation " +
                                            std::to_string(seg.controller.incarnation.load()));
      // be_share split: this process's part of BE's SMs (qos::shm::slice_of); shared: all of them.
      const std::uint64_t slice = entry_ < qos::shm::kBeClients ? seg.be[entry_].slice.load() : 0;
      apply(qos::shm::slice_of(policy, slice, sm_count_), false);
      if (entry_ < qos::shm::kBeClients) {
        seg.be[entry_].safe.store(0);
        seg.be[entry_].applied_seq.store(seq);
      }
    }
    if (entry_ < qos::shm::kBeClients) {
      seg.be[entry_].launches.store(process_policy().launches());
      seg.be[entry_].heartbeat_ns.store(now);
    }
  }
  void loop() {
    // Linux lets a sleep run 50 us late by default (the thread's timer slack): 1 ns keeps the poll at poll_us.
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    while (!stop_.load(std::memory_order_relaxed)) {
      step(qos::shm::now_ns());
      std::this_thread::sleep_for(std::chrono::microseconds(poll_us_));
    }
  }

  std::string key_, path_;
  unsigned sm_count_ = 0;
  unsigned poll_us_ = 20;
  qos::shm::Mapping map_;
  unsigned entry_ = qos::shm::kBeClients;
  ino_t inode_ = 0;
  std::uint64_t next_attach_ = 0;
  qos::shm::Status last_status_ = qos::shm::Status::ok;
  qos::shm::PolicyValue safe_, applied_;
  qos::LinkDecision decision_;
  bool applied_once_ = false, in_safe_ = false;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The device current at the process's first launch, whose controller (or PTB_QOSD's key) the process follows;
// -1 before.
inline std::atomic<int>& linked_device() {
  static std::atomic<int> __d{-1};
  return __d;
}

// Whether this process follows a controller (PTB_QOSD); the first call (the first launch) starts the link
// on the current GPU. The link lives until the program's static objects are destroyed (before CUDA's own
// teardown, which was set up earlier).
inline bool start_controller_link() {
  const std::string setting = qosd_setting();
  if (setting.empty()) return false;
  const LastErrorGuard guard;
  int dev = 0;
  std::string key = setting;
  int sm_count = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
    sm_count = 0;
  if (key == ".") key = gpu_key_of(dev);
  guard.drop_ours();
  host_stamp("link-key");
  if (key.empty() || !qos::shm::valid_key(key) || sm_count <= 0) {
    std::fprintf(stderr, "ptb: PTB_QOSD=%s: no GPU key (%s); this process follows no controller\n", setting.c_str(),
                 key.empty() ? "the device's UUID could not be read" : "not a key");
    return false;
  }
  if (mode_word().load(std::memory_order_relaxed) == kModeOriginal)
    std::fprintf(stderr, "ptb: PTB_QOSD with PTB_MODE=original: launches run their original kernels, which no "
                         "controller can confine\n");
  static ControllerLink __link(key, static_cast<unsigned>(sm_count));
  linked_device().store(dev, std::memory_order_relaxed);
  host_stamp("link");
  return true;
}

// A process follows one controller, through the process policy, which every launch without a policy of its
// own runs under, on whichever device. A launch on another device than the linked one would follow that
// controller's SMs and not its own GPU's: said once on stderr (docs/design/qos-controller.md, "Several GPUs").
inline void note_launch_device() {
  static std::atomic<bool> __said{false};
  if (__said.load(std::memory_order_relaxed)) return;
  const LastErrorGuard guard;
  int __dev = 0;
  if (cudaGetDevice(&__dev) != cudaSuccess) {
    guard.drop_ours();
    return;
  }
  const int __linked = linked_device().load(std::memory_order_relaxed);
  if (__linked < 0 || __dev == __linked || __said.exchange(true)) return;
  std::fprintf(stderr,
               "ptb: this process follows the controller of device %d's GPU (current at its first launch); this "
               "launch is on device %d, and it and every later launch there follow the same controller's policy, "
               "not the controller of device %d's GPU: run one BE process per GPU\n",
               __linked, __dev, __dev);
}
inline bool controller_linked() {
  static const bool __on = start_controller_link();
  return __on;
}

} // namespace detail

} // namespace ptb

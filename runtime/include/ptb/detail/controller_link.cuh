// ptb/detail/controller_link.cuh: a BE program run with PTB_QOSD follows ptb-qosd, the controller of its GPU,
// with no change to its code: a thread of the runtime reads the policy the controller publishes in the GPU's
// segment (ptb/qos/segment.h) and sets the process policy to it, and falls back to the safe state when the
// controller is gone. docs/design/qos-controller.md; the variables: docs/reference/environment.md.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
//
//   PTB_QOSD unset, empty, "0" or "off": no link (nothing here runs; a launch costs what it cost).
//   PTB_QOSD=1 (or "on"): each device's launches follow the controller of that device's GPU; the link to it starts
//                         at the first launch on the device.
//   PTB_QOSD=GPU-...: the controller of that GPU key (as ptb-qosd --gpu names it), through the process policy, which
//                     the launches on every device run under (said once at the first launch on a second device).
//   PTB_QOSD_POLL_US: how often each link's thread looks (default 20 us).
//
// A link sets a policy that every launch on its device without a policy of its own (the launch's, its stream's)
// runs under: for the first device linked, the process policy (so process_policy() shows what the controller
// decided); for each other device, a policy of the link's own (Runtime::linked). A device without a link runs
// its launches under the process policy.
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
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "../launch_mode.cuh"
#include "../policy.cuh"
#include "../qos/link_decision.h"
#include "../qos/segment.h"
#include "host_stamps.cuh"
#include "last_error.cuh"
#include "policy_state.cuh"
#include "runtime.cuh"

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
  // `policy`: what the link sets (the process policy, or one of its own for a second device); `dev`: the device
  // whose launches follow it. Made by the thread of the device's first launch, with `dev` current.
  ControllerLink(std::string key, unsigned sm_count, int dev, Policy policy)
      : key_(std::move(key)), sm_count_(sm_count), policy_(policy) {
    path_ = qos::shm::segment_path(qos::shm::segment_dir(), key_);
    safe_ = qos::shm::default_safe(sm_count);
    if (const char* env = std::getenv("PTB_QOSD_POLL_US"))
      poll_us_ = static_cast<unsigned>(std::strtoul(env, nullptr, 10));
    if (poll_us_ == 0) poll_us_ = 20;
    {
      std::lock_guard<std::mutex> __g(rt().__m);
      rt().linked[dev] = policy_.state();
      restricts_.store(restricted(*policy_.state()), std::memory_order_release);
    }
    thread_ = std::thread([this] { loop(); });
  }
  ControllerLink(const ControllerLink&) = delete;
  ControllerLink& operator=(const ControllerLink&) = delete;
  ~ControllerLink() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
    release_entry();
  }
  // Whether the policy the link set restricts now (short launches run as originals only while it does not).
  bool restricts_now() const { return restricts_.load(std::memory_order_acquire); }
  PolicyState* policy_state() const { return policy_.state(); }

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
  // Sets the link's policy (outside any lock of ours: Policy::set takes the runtime's).
  void apply(const qos::shm::PolicyValue& value, bool safe) {
    if (applied_once_ && value == applied_ && safe == in_safe_) return;
    policy_.set(value.sms, value.per_sm, value.capped);
    restricts_.store(restricts(value.sms, value.per_sm, value.capped), std::memory_order_release);
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
      seg.be[entry_].launches.store(policy_.launches());
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
  Policy policy_;
  std::atomic<bool> restricts_{false};
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

// The links of this process, one per device whose launches follow a controller. Made on first use, after the
// runtime's state (so destroyed before it: a link's last apply still finds the runtime).
struct Links {
  Links() {
    (void)rt();
    for (auto& __s : state) __s.store(0, std::memory_order_relaxed);
  }
  std::mutex __m;                                     // starts links
  std::atomic<unsigned char> state[kMaxDevices];      // 0: not looked at yet; 1: has a link; 2: has none of its own
  std::unique_ptr<ControllerLink> link[kMaxDevices];  // set before state becomes 1
  std::atomic<ControllerLink*> process_link{nullptr}; // the link that sets the process policy (the first one)
  int keyed = -1;    // PTB_QOSD=GPU-...: the device whose launches follow that controller
  bool told = false; // the message for launches on another device than `keyed`, said once
};
inline Links& links() {
  static Links __l;
  return __l;
}

// Starts the link of device `dev` (current), or decides it has none of its own. Under links().__m. A device
// without a link of its own runs its launches under the process policy, which the first link sets (link_here).
inline ControllerLink* start_link_locked(Links& __l, int dev) {
  const std::string setting = qosd_setting();
  if (setting != "." && __l.keyed >= 0) { // one key, one controller: the process policy is its policy
    if (!__l.told)
      std::fprintf(stderr,
                   "ptb: PTB_QOSD=%s names one GPU's controller, which the launches on device %d (current at the "
                   "first launch) follow; the launches on device %d run under the same policy (the process "
                   "policy), not under their own GPU's controller: PTB_QOSD=1 follows each GPU's own\n",
                   setting.c_str(), __l.keyed, dev);
    __l.told = true;
    __l.state[dev].store(2, std::memory_order_release);
    return nullptr;
  }
  const LastErrorGuard guard;
  std::string key = setting;
  int sm_count = 0;
  if (cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) sm_count = 0;
  if (key == ".") key = gpu_key_of(dev);
  guard.drop_ours();
  host_stamp("link-key");
  if (key.empty() || !qos::shm::valid_key(key) || sm_count <= 0) {
    std::fprintf(stderr,
                 "ptb: PTB_QOSD=%s: no GPU key for device %d (%s); its launches follow no controller of "
                 "their own (they run under the process policy)\n",
                 setting.c_str(), dev, key.empty() ? "the device's UUID could not be read" : "not a key");
    __l.state[dev].store(2, std::memory_order_release);
    return nullptr;
  }
  const bool __first = __l.process_link.load(std::memory_order_relaxed) == nullptr;
  if (__first && mode_word().load(std::memory_order_relaxed) == kModeOriginal)
    std::fprintf(stderr, "ptb: PTB_QOSD with PTB_MODE=original: launches run their original kernels, which no "
                         "controller can confine\n");
  // The first link sets the process policy: process_policy() then shows what the controller decided, and the
  // device's set-up (early or at the first launch) puts its caps on the device. A second device's policy is made
  // without touching the device (unlike Policy::create): this may be a launch in a stream capture, and the
  // launch puts the policy's caps there as its capture allows (prepare.cuh).
  Policy __policy;
  {
    std::lock_guard<std::mutex> __g(rt().__m);
    __policy = Policy(__first ? process_policy_state_locked() : new_policy_locked());
  }
  __l.link[dev] = std::make_unique<ControllerLink>(key, static_cast<unsigned>(sm_count), dev, __policy);
  if (__first) __l.process_link.store(__l.link[dev].get(), std::memory_order_release);
  if (setting != ".") __l.keyed = dev;
  __l.state[dev].store(1, std::memory_order_release);
  host_stamp("link");
  return __l.link[dev].get();
}

// The link whose policy the launches on the current device run under (PTB_QOSD), or null: the device's own, or,
// for a device without one, the link that sets the process policy. The first launch on a device starts its
// link. The links live until the program's static objects are destroyed (before CUDA's own teardown, which was
// set up earlier). Without PTB_QOSD: one load, no CUDA call.
inline ControllerLink* link_here() {
  static const bool __on = !qosd_setting().empty();
  if (!__on) return nullptr;
  const LastErrorGuard guard;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= static_cast<int>(kMaxDevices)) {
    guard.drop_ours();
    return nullptr;
  }
  Links& __l = links();
  const unsigned char __s = __l.state[dev].load(std::memory_order_acquire);
  if (__s == 1) return __l.link[dev].get();
  if (__s == 2) return __l.process_link.load(std::memory_order_acquire);
  std::lock_guard<std::mutex> __g(__l.__m);
  const unsigned char __t = __l.state[dev].load(std::memory_order_acquire);
  if (__t == 1) return __l.link[dev].get();
  if (__t == 2) return __l.process_link.load(std::memory_order_acquire);
  ControllerLink* const __made = start_link_locked(__l, dev);
  return __made ? __made : __l.process_link.load(std::memory_order_acquire);
}

} // namespace detail

} // namespace ptb

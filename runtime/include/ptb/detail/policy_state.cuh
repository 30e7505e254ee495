// ptb/detail/policy_state.cuh: a policy's state (SM set, cap and the SMs it applies on, device copies of its caps), the
// process policy from the environment, and the lock-free words the automatic launch mode reads. Part of the header-only
// runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "../smset.cuh"
#include "config.cuh"
#include "launch_order.cuh"
#include "runtime.cuh"

namespace ptb {

namespace detail {

struct PolicyState {
  SmSet sms = SmSet::all();
  unsigned per_sm = 0;
  SmSet capped = SmSet::all();                  // the allowed SMs the cap applies on; the other allowed SMs have no cap
  unsigned char* caps[kMaxDevices] = {};        // device copies, allocated on first use on each device
  unsigned char last[kMaxDevices][kMaxSm] = {}; // what was last written there
  unsigned long long launches = 0;  // twin launches made under it (under the runtime's lock; Policy::launches)
  unsigned long long fallbacks = 0; // launches under it that ran the original instead (Policy::fallbacks)
  LaunchOrder order[kMaxDevices];   // its launches in turn across streams, while it restricts (launch_order.cuh)
};

// A cap restricts wherever it applies: on a subset too (G-Space's k workers on n SMs). A capped set that
// names only SMs the device lacks still counts (it errs towards running twins, which is always correct).
inline bool restricts(const SmSet& sms, unsigned per_sm, const SmSet& capped = SmSet::all()) {
  return (per_sm != 0 && !capped.empty()) || sms != SmSet::all();
}
inline bool restricted(const PolicyState& p) { return restricts(p.sms, p.per_sm, p.capped); }

// The process policy as PTB_SMS ("0-65,70") and PTB_BLOCKS_PER_SM give it (unset or unreadable: all SMs,
// no cap).
inline void process_policy_from_env(SmSet& sms, unsigned& per_sm) {
  sms = SmSet::all();
  per_sm = 0;
  if (const char* e = std::getenv("PTB_SMS")) {
    SmSet s;
    if (SmSet::parse(e, s)) sms = s;
  }
  if (const char* e = std::getenv("PTB_BLOCKS_PER_SM")) per_sm = static_cast<unsigned>(std::atoi(e));
}

// PTB_QOSD (a controller sets the process policy: controller_link.cuh): "" for none (unset, empty, "0" or
// "off"), "." for the controller of the current GPU ("1" or "on"), else the GPU key it names.
inline std::string qosd_setting() {
  const char* env = std::getenv("PTB_QOSD");
  if (!env || !*env || std::strcmp(env, "0") == 0 || std::strcmp(env, "off") == 0) return std::string();
  if (std::strcmp(env, "1") == 0 || std::strcmp(env, "on") == 0) return std::string(".");
  return std::string(env);
}

// Lock-free copies of what the automatic mode asks at each launch (written under the runtime's lock,
// read without it): whether the process policy restricts, and how many streams have a policy.
inline std::atomic<bool>& process_restricts_word() {
  static std::atomic<bool> w{[] {
    SmSet s;
    unsigned __k = 0;
    process_policy_from_env(s, __k);
    return restricts(s, __k);
  }()};
  return w;
}
inline std::atomic<unsigned>& stream_policy_count() {
  static std::atomic<unsigned> n{0};
  return n;
}

// A new policy (every SM, no cap), kept in the runtime's list; it lives as long as the process, as every policy
// does (running kernels may point at it). Under the runtime's lock.
inline PolicyState* new_policy_locked() {
  PolicyState* __p = new PolicyState();
  rt().policies.push_back(__p);
  return __p;
}

inline PolicyState* process_policy_state_locked() {
  Runtime& __r = rt();
  if (!__r.process) {
    __r.process = new_policy_locked();
    process_policy_from_env(__r.process->sms, __r.process->per_sm);
    process_restricts_word().store(restricted(*__r.process), std::memory_order_release);
  }
  return __r.process;
}

} // namespace detail

} // namespace ptb

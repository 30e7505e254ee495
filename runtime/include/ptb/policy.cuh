// ptb/policy.cuh: ptb::Policy (where a launch's workers may run), the process policy, stream policies.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include <mutex>
#include <vector>

#include "detail/caps.cuh"
#include "detail/context.cuh"
#include "detail/last_error.cuh"
#include "detail/device_setup.cuh"
#include "detail/device_state.cuh"
#include "detail/monitor.cuh"
#include "detail/on_device.cuh"
#include "detail/policy_state.cuh"
#include "detail/runtime.cuh"
#include "smset.cuh"

namespace ptb {

// Where a launch's workers may run: a set of SMs and a cap on workers per SM (0: no cap beyond
// occupancy) on the allowed SMs that are in `capped` (default: all of them); the other allowed SMs run
// at full occupancy (G-Space's k workers on n SMs: set(all, k, first(n))). A handle: copies refer to the same policy;
// policies live as long as the process. Changing a policy (set) takes effect at once on the launches running under it:
// workers on SMs it removes leave after their current task, and SMs it adds get new workers.
class Policy {
public:
  Policy() = default; // empty: "not given" (the stream's policy, else the process policy applies)
  explicit Policy(detail::PolicyState* p) : p_(p) {} // internal
  static Policy create(const SmSet& sms = SmSet::all(), unsigned per_sm = 0, const SmSet& capped = SmSet::all());
  void set(const SmSet& sms, unsigned per_sm = 0, const SmSet& capped = SmSet::all()) const;
  SmSet sms() const;
  unsigned per_sm() const;
  SmSet capped() const; // the SMs the cap applies on (SmSet::all(): every allowed SM)
  // Twin launches made under this policy so far (resume launches of a running one not counted). A launch
  // that ran its original kernel (a plain <<<>>> the tool did not rewrite, or one the twin could not
  // take) is not counted: nothing could confine it. The QoS epoch loop uses it to tell BE work that is
  // not PTB (docs/design/qos.md, "Bad input"). The process policy also counts the short launches a process
  // that follows a controller ran as originals (PTB_ORIGINAL_BELOW_US): they could have been twins, and the
  // controller reads BE's rate from this count.
  unsigned long long launches() const;
  // Launches this policy covered that ran their original kernel instead (ptb/fallback.cuh says why each
  // can happen; ptb::fallback_count() counts them by reason for the whole process).
  unsigned long long fallbacks() const;
  explicit operator bool() const { return p_ != nullptr; }
  bool operator==(const Policy& __o) const { return p_ == __o.p_; }
  detail::PolicyState* state() const { return p_; }

private:
  detail::PolicyState* p_ = nullptr;
};

// The process policy: all SMs and no cap unless PTB_SMS (e.g. "0-65") / PTB_BLOCKS_PER_SM say otherwise.
// In the automatic launch mode, launches under no other policy run as twins only while it restricts
// (set() with fewer SMs or a cap): originals launched before a set() run on unconfined until they end.
inline Policy process_policy();
// A stream's policy (an empty Policy removes it). Precedence: LaunchConfig::policy, then the stream's,
// then the process policy.
inline void set_stream_policy(cudaStream_t stream, Policy policy);
inline Policy stream_policy(cudaStream_t stream);

inline Policy Policy::create(const SmSet& sms, unsigned per_sm, const SmSet& capped) {
  Policy p;
  // Put the caps on the current device now (not during a later stream capture).
  const detail::LastErrorGuard guard;
  int dev = 0;
  const bool on_device = cudaGetDevice(&dev) == cudaSuccess;
  const unsigned long long context = on_device ? detail::current_context_id() : 0;
  std::lock_guard<std::mutex> __g(detail::rt().__m);
  p.p_ = detail::new_policy_locked();
  p.p_->sms = sms;
  p.p_->per_sm = per_sm;
  p.p_->capped = capped;
  if (on_device) {
    detail::DeviceState* d = detail::device_locked(dev, context);
    if (!d || !detail::upload_caps_locked(*d, *p.p_)) guard.drop_ours(); // the launch will try again
    if (detail::restricted(*p.p_)) detail::start_monitor_locked();
  }
  return p;
}
inline void Policy::set(const SmSet& sms, unsigned per_sm, const SmSet& capped) const {
  if (!p_) return;
  const detail::LastErrorGuard guard;
  detail::Runtime& __r = detail::rt();
  std::vector<detail::Resume> due; // new workers for running launches where a cap went up
  {
    std::lock_guard<std::mutex> __g(__r.__m);
    p_->sms = sms;
    p_->per_sm = per_sm;
    p_->capped = capped;
    // Automatic mode: launches from now on run as twins iff the process policy restricts. Originals that
    // are running already are not confined (they end as they are).
    if (p_ == __r.process) detail::process_restricts_word().store(detail::restricted(*p_), std::memory_order_release);
    if (detail::restricted(*p_)) detail::start_monitor_locked();
    for (unsigned dv = 0; dv < detail::kMaxDevices; ++dv) {
      detail::DeviceState* d = __r.devs[dv];
      if (!d || !d->ok || !p_->caps[dv]) continue;
      const detail::OnDevice on{static_cast<int>(dv)};
      // The device was reset since its state was set up: nothing of it may be used (device_setup.cuh).
      const unsigned long long context = on ? detail::current_context_id() : 0;
      if (!on || (context != 0 && d->context != 0 && context != d->context)) {
        if (on) detail::retire_device_locked(static_cast<int>(dv));
        continue;
      }
      bool grew = false;
      unsigned taken = 0;
      if (detail::upload_caps_locked(*d, *p_, &grew) && grew) {
        for (unsigned __i = 0; __i < d->pool_size(); ++__i)
          if (d->recs[__i].policy == p_ && detail::live_locked(*d, __i))
            due.push_back(detail::resume_batch_locked(*d, __i, taken));
      }
    }
  }
  guard.drop_ours();           // a device that could not take the change is retried by the next launch there
  detail::launch_resumes(due); // outside the lock (monitor.cuh)
}
inline SmSet Policy::sms() const {
  std::lock_guard<std::mutex> __g(detail::rt().__m);
  return p_ ? p_->sms : SmSet::all();
}
inline unsigned Policy::per_sm() const {
  std::lock_guard<std::mutex> __g(detail::rt().__m);
  return p_ ? p_->per_sm : 0;
}
inline SmSet Policy::capped() const {
  std::lock_guard<std::mutex> __g(detail::rt().__m);
  return p_ ? p_->capped : SmSet::all();
}
inline unsigned long long Policy::launches() const {
  std::lock_guard<std::mutex> __g(detail::rt().__m);
  return p_ ? p_->launches : 0;
}
inline unsigned long long Policy::fallbacks() const {
  std::lock_guard<std::mutex> __g(detail::rt().__m);
  return p_ ? p_->fallbacks : 0;
}
inline Policy process_policy() {
  std::lock_guard<std::mutex> __g(detail::rt().__m);
  detail::PolicyState* s = detail::process_policy_state_locked();
  return Policy(s);
}
inline void set_stream_policy(cudaStream_t stream, Policy policy) {
  std::lock_guard<std::mutex> __g(detail::rt().__m);
  if (policy)
    detail::rt().stream_policies[stream] = policy.state();
  else
    detail::rt().stream_policies.erase(stream);
  detail::stream_policy_count().store(static_cast<unsigned>(detail::rt().stream_policies.size()),
                                      std::memory_order_release);
}
inline Policy stream_policy(cudaStream_t stream) {
  std::lock_guard<std::mutex> __g(detail::rt().__m);
  auto& __m = detail::rt().stream_policies;
  auto it = __m.find(stream);
  detail::PolicyState* s = it == __m.end() ? nullptr : it->second;
  return Policy(s);
}

} // namespace ptb

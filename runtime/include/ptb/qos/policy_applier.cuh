// ptb/qos/policy_applier.cuh: BE's policy state decided under a caller's lock and applied outside it, by
// one thread at a time, newest decision last (docs/design/qos.md, run 16). Policy::set takes the runtime's lock
// and waits for a small copy to the device (tens of microseconds, more while the copy engine is busy); an
// LS request's begin() that waited for another thread's Policy::set paid for it in latency (a request
// gate that applied it itself: the wait's p99 43-261 us, docs/results/colocate.md). So the request gate and
// the manager driver (manager_driver.cuh) decide BE's state under their own lock (want(), which only records it) and
// apply it after they let go (apply()): whichever thread finds a decision not yet applied applies it,
// and a thread that finds another one applying leaves it to that one, which applies the newest decision
// before it stops. apply_soon() leaves the applying to a thread of the applier's own and returns at once:
// an LS request's begin() then launches the request while BE's yield goes to the device, instead of
// after it.
//
//   std::mutex m; PolicyApplier a(be_policy);
//   { std::lock_guard<std::mutex> g(m); ...; a.want(SmSet::none()); }   // decide
//   a.apply();                                                           // then apply, lock released
#pragma once
#include <condition_variable>
#include <mutex>
#include <thread>

#include "../policy.cuh"
#include "../smset.cuh"

namespace ptb::qos {

class PolicyApplier {
public:
  explicit PolicyApplier(Policy be) : be_(be) {
    thread_ = std::thread([this] { background(); });
  }
  // Every decision is applied before this returns.
  ~PolicyApplier() {
    {
      std::lock_guard<std::mutex> __g(m_);
      stop_ = true;
    }
    cv_.notify_one();
    thread_.join();
    apply();
  }
  PolicyApplier(const PolicyApplier&) = delete;
  PolicyApplier& operator=(const PolicyApplier&) = delete;

  // BE's state to be; cheap (no CUDA call), meant to be called under the caller's lock.
  void want(const SmSet& sms, unsigned per_sm = 0) {
    std::lock_guard<std::mutex> __g(m_);
    want_sms_ = sms;
    want_per_sm_ = per_sm;
    ++want_seq_;
  }
  // Applies the newest wanted state unless another thread is applying, which then applies it before it
  // stops (it looks under m_, where want_seq_ changes, before it clears applying_). Call it without the
  // caller's lock held.
  void apply() {
    std::unique_lock<std::mutex> __g(m_);
    if (applying_) return;
    applying_ = true;
    while (applied_seq_ != want_seq_) {
      const SmSet sms = want_sms_;
      const unsigned per_sm = want_per_sm_;
      const unsigned long long seq = want_seq_;
      __g.unlock();
      be_.set(sms, per_sm);
      __g.lock();
      applied_seq_ = seq;
    }
    applying_ = false;
  }
  // The same, on the applier's own thread; returns at once.
  void apply_soon() {
    {
      std::lock_guard<std::mutex> __g(m_);
      if (applying_ || applied_seq_ == want_seq_) return; // the thread applying takes the newest
    }
    cv_.notify_one();
  }

private:
  void background() {
    std::unique_lock<std::mutex> __g(m_);
    for (;;) {
      cv_.wait(__g, [this] { return stop_ || (!applying_ && applied_seq_ != want_seq_); });
      if (stop_) return;
      __g.unlock();
      apply();
      __g.lock();
    }
  }

  Policy be_;
  std::mutex m_;
  // want_seq_ counts the decisions, applied_seq_ is the last one applied; applying_: a thread is in apply()
  SmSet want_sms_ = SmSet::all();
  unsigned want_per_sm_ = 0;
  unsigned long long want_seq_ = 0, applied_seq_ = 0;
  bool applying_ = false;
  bool stop_ = false;
  std::condition_variable cv_;
  std::thread thread_;
};

} // namespace ptb::qos

// ptb/qos/controller.h: what every QoS controller shares (docs/design/qos.md): the measurements of one epoch
// (EpochSample), the decision (Allocation: which SMs BE may use, and how many of its workers per SM) and
// the interface the epoch loop drives (Controller). Plain C++, no CUDA: the controllers are decided on the
// host and tested on the CPU; ptb/qos/apply.cuh turns an Allocation into a ptb::Policy.
//
// The controllers: FeedbackController (feedback.h, SMQoS), StaticPartition (static_partition.h,
// RH-SMQoS), GSpaceController (gspace.h, G-Space yielding).
#pragma once

#include "../smset.cuh" // plain C++ (no CUDA), like this header

namespace ptb::qos {

// What one epoch measured.
struct EpochSample {
  double ls_latency = 0; // the LS latency of the epoch (a percentile or the mean, as the target)
  double be_rate = 0;    // BE's throughput in the epoch
  bool ls_active = true; // false: no LS request finished in the epoch (ls_latency is not looked at)
};

// An allocation of the device's SMs, by dense index: [0, ls) are kept free of BE, [ls, ls + be) are BE's,
// the remaining `idle` SMs neither uses; ls + be + idle is the SM count. Of BE's SMs, the first `shared`
// ones ([ls, ls + shared): lowest ids, next to LS's) carry a cap of `shared_cap` BE workers per SM, and
// LS's kernels run in what BE leaves there (G-Space); shared_cap 0 leaves those SMs to LS alone. shared 0:
// no such subset, BE's SMs are all alike.
struct Allocation {
  unsigned ls = 0, be = 0, idle = 0;
  unsigned shared = 0, shared_cap = 0;
  bool operator==(const Allocation& __o) const {
    return ls == __o.ls && be == __o.be && idle == __o.idle && shared == __o.shared && shared_cap == __o.shared_cap;
  }
  bool operator!=(const Allocation& __o) const { return !(*this == __o); }
};

// What an allocation asks of BE's ptb::Policy (apply.cuh's apply_to_be sets it): its SMs, its cap and
// the SMs the cap applies on. With a shared subset BE is capped at shared_cap there and uncapped on its
// other SMs (per_sm is not used: a policy has one cap); a shared_cap of 0 takes the subset out of BE's
// SMs instead (a policy's cap of 0 means no cap). Without one, per_sm caps BE on all its SMs.
struct BePlacement {
  SmSet sms;
  unsigned per_sm = 0;
  SmSet capped = SmSet::all();
};
inline BePlacement be_placement(const Allocation& a, unsigned per_sm = 0) {
  const unsigned end = a.ls + a.be, shared_end = a.ls + (a.shared < a.be ? a.shared : a.be);
  if (a.shared == 0) return {SmSet::range(a.ls, end), per_sm, SmSet::all()};
  if (a.shared_cap == 0) return {SmSet::range(shared_end, end), 0, SmSet::all()};
  return {SmSet::range(a.ls, end), a.shared_cap, SmSet::range(a.ls, shared_end)};
}

// A controller decides, epoch after epoch, from what the epoch measured. The epoch loop (epoch_loop.h)
// calls epoch() once per epoch from one thread; allocation() is the current decision (before the first
// epoch: the starting one, which the loop applies at start()).
class Controller {
public:
  virtual ~Controller() = default;
  virtual Allocation epoch(const EpochSample&) = 0;
  virtual const Allocation& allocation() const = 0;
  // The last epoch missed the target and the controller had nothing left to give LS.
  virtual bool saturated() const { return false; }
  virtual const char* name() const = 0; // "feedback", "static", "gspace": for reports
};

} // namespace ptb::qos

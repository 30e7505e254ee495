// ptb/qos/static_partition.h: the static partition (RH-SMQoS; docs/design/qos.md): LS keeps SMs [0, k) free of
// BE, BE runs on the rest, and nothing changes while they run. Plain C++, no CUDA.
//
// k is the caller's: stated outright, or from a profile of the LS latency against the SMs kept for it
// (static_partition_k below). RH-SMQoS sets LS's share of the SMs equal to its QoS ratio; we take the
// smallest share that met the target in a profile, so that BE gets everything LS did not need there.
#pragma once

#include <algorithm>
#include <functional>

#include "controller.h"

namespace ptb::qos {

class StaticPartition : public Controller {
public:
  // ls_sms above total is taken as total; BE then has no SM, which pauses its launches (an empty SM set
  // is a pause in the runtime: docs/design/runtime.md) until something else gives it SMs.
  StaticPartition(unsigned total, unsigned ls_sms) {
    a_.ls = std::min(ls_sms, total);
    a_.be = total - a_.ls;
  }
  // The measurements are recorded by the epoch loop (its history) but change nothing here.
  Allocation epoch(const EpochSample&) override { return a_; }
  const Allocation& allocation() const override { return a_; }
  const char* name() const override { return "static"; }

private:
  Allocation a_;
};

// The smallest k (a multiple of `step`, from 0 up) whose profiled LS latency meets the target:
// ls_latency_at(k) <= target, where ls_latency_at(k) is the LS latency (in the target's unit: e.g. p99
// in microseconds) measured with SMs [0, k) kept free of BE and BE on the rest. If none below `total`
// meets it, returns `total` (LS keeps every SM; BE is paused) without asking for it: the target cannot
// be met beside BE, and the caller should check ls_latency_at(total) or lower its ambition.
//
// The search goes up one step at a time, not by bisection: the LS latency need not fall as LS gets more
// SMs (G-Space, section 3.2, observes kernels whose performance drops beyond some SM count, and measured
// percentiles are noisy), so a bisection could skip the smallest k that meets the target. It asks for
// at most total / step + 1 points (67 on a 132-SM GPU in TPC steps), each an offline co-run measurement.
inline unsigned static_partition_k(unsigned total, double target,
                                   const std::function<double(unsigned ls_sms)>& ls_latency_at, unsigned step = 2) {
  step = std::max(1u, step);
  for (unsigned __k = 0; __k < total; __k += step)
    if (ls_latency_at(__k) <= target) return __k;
  return total;
}

} // namespace ptb::qos

// bench/colocate/green_gate.h: the vendor-only gate, a peer of ptb-qosd's gate (issue 42): BE's original
// kernels, each launch sent either to the whole GPU or to a green context of K SMs, by what ptb-qosd publishes
// for BE at that moment (every SM with no cap: the whole GPU; anything else, LS busy: the small context). The
// same controller and the same LS marks as our gate, but BE moves only at kernel boundaries: a launch already
// running keeps its SMs to its end. `colocate --role be --green-gate K` (processes.sh PART=frontier,
// GREEN_GATES). Host only; the driver API for the green context, ptb/qos/segment.h for the policy.
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>
#include <ptb/ptb.cuh>
#include <ptb/qos/link_decision.h>
#include <ptb/qos/segment.h>

#include <cstdio>
#include <string>

#include "green_context.h"
#include "util.h"

namespace colo {

class GreenGate {
 public:
  enum Route { whole = 0, small = 1 };
  // The whole GPU (the caller's context, the device's primary one) and a green context of `want` SMs, a stream
  // and two events in each; the controller's segment of device 0 (PTB_QOSD_DIR). False after a message.
  bool open(unsigned want) {
    CK(cudaFree(nullptr));  // the primary context exists and is current
    ctx_[whole] = current_context();
    unsigned got = 0;
    if (!ctx_[whole] || !make_green_context("colocate", want, &ctx_[small], &got, &total_)) return false;
    for (int r : {whole, small}) {
      if (cuCtxSetCurrent(ctx_[r]) != CUDA_SUCCESS) return false;
      CK(cudaStreamCreateWithFlags(&stream_[r], cudaStreamNonBlocking));
      for (auto& e : ev_[r]) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    }
    adopt_context(ctx_[whole], "the green gate");
    const std::string key = ptb::detail::gpu_key_of(0);
    const std::string path = ptb::qos::shm::segment_path(ptb::qos::shm::segment_dir(), key);
    const ptb::qos::shm::Status st = ptb::qos::shm::attach(path, seg_);
    if (st != ptb::qos::shm::Status::ok) {
      std::fprintf(stderr, "colocate: --green-gate: %s: %s\n", path.c_str(), ptb::qos::shm::describe(st));
      return false;
    }
    std::printf("GREEN gate: %u SMs while LS is busy, all %u otherwise (the controller's segment %s)\n", got, total_,
                path.c_str());
    return true;
  }
  // Where the next launch goes: the whole GPU while the controller gives BE every SM with no cap, else the small
  // context (LS busy, or the controller gone). What a look at the segment means is the BE link's rule
  // (ptb/qos/link_decision.h): a read that fell inside the controller's write keeps the last route.
  Route route() {
    namespace shm = ptb::qos::shm;
    shm::PolicyValue policy, safe;
    std::uint64_t seq = 0;
    const std::uint64_t now = shm::now_ns();
    const bool got = shm::read_published(*seg_, policy, safe, seq);
    switch (decision_.step(now, seg_->controller.stopped.load() != 0, shm::controller_gone(*seg_, now), got, seq,
                           seg_->controller.lease_ns.load())) {
      case ptb::qos::LinkDecision::Act::safe: return last_ = small;
      case ptb::qos::LinkDecision::Act::keep: return last_;
      case ptb::qos::LinkDecision::Act::follow: break;
    }
    const ptb::SmSet gpu = ptb::SmSet::first(total_);
    return last_ = ((policy.sms & gpu) == gpu && policy.per_sm == 0) ? whole : small;
  }
  CUcontext context(Route r) const { return ctx_[r]; }
  cudaStream_t stream(Route r) const { return stream_[r]; }
  cudaEvent_t event(Route r, unsigned i) const { return ev_[r][i % 2]; }

 private:
  CUcontext ctx_[2] = {};
  cudaStream_t stream_[2] = {};
  cudaEvent_t ev_[2][2] = {};
  unsigned total_ = 0;
  ptb::qos::shm::Mapping seg_;
  ptb::qos::LinkDecision decision_;
  Route last_ = small;
};

}  // namespace colo

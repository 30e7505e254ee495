// ptb/qos/link_decision.h: what a BE process that follows ptb-qosd (detail/controller_link.cuh) does after one
// look at its GPU's segment: follow the policy it read, keep the one it applies, or take its safe state.
//
// A look can fail to read the policy without anything being wrong: the controller rewrites the policy at every
// change (the gate: twice a request, about a thousand times a second beside a busy service), and a reader whose
// tries all fall inside a write gets nothing (shm::read_published returns false). Until 2026-11-29 the link took
// its safe state then, and left it at its next look: on the H200 a BE process beside a PyTorch service flipped
// 2,600-2,900 times in 47 s (about 60 a second), each time to the highest quarter of the SMs without a cap, during
// LS requests too. A failed read now keeps what the process applies. The controller's death is told apart by its
// heartbeat (shm::controller_gone: older than the lease), and a controller that died while writing stops beating
// too; a policy that stays unreadable for a whole lease (a controller that beats but never finishes a write) is
// the one case left, and it takes the safe state.
// Plain C++ (no CUDA): the link looks, this decides; test/unit/QosSegmentTest.cpp drives it.
#pragma once

#include <cstdint>

namespace ptb::qos {

class LinkDecision {
public:
  enum class Act { follow, keep, safe };
  enum class Why { none, stopped, lease, unpublished, unreadable };

  // One look: `stopped` the controller said it stopped; `gone` shm::controller_gone (stopped, never beat, or its
  // heartbeat older than the lease); `got` shm::read_published succeeded, with `seq` its sequence (0: nothing
  // published yet); `lease_ns` the controller's lease.
  Act step(std::uint64_t now, bool stopped, bool gone, bool got, std::uint64_t seq, std::uint64_t lease_ns) {
    if (gone) return safe(stopped ? Why::stopped : Why::lease);
    if (got) {
      unreadable_ = false;
      if (seq == 0) return safe(Why::unpublished);
      why_ = Why::none;
      return Act::follow;
    }
    if (!unreadable_) {
      unreadable_ = true;
      unreadable_since_ = now;
    }
    if (now - unreadable_since_ > lease_ns) return safe(Why::unreadable);
    return Act::keep;
  }
  Why why() const { return why_; }
  static const char* describe(Why reason) {
    switch (reason) {
    case Why::stopped: return "the controller stopped";
    case Why::lease: return "the controller's heartbeat is older than its lease";
    case Why::unpublished: return "the controller has published no policy";
    case Why::unreadable: return "the controller's policy could not be read for a whole lease";
    case Why::none: break;
    }
    return "";
  }

private:
  Act safe(Why reason) {
    why_ = reason;
    return Act::safe;
  }
  bool unreadable_ = false;
  std::uint64_t unreadable_since_ = 0;
  Why why_ = Why::none;
};

} // namespace ptb::qos

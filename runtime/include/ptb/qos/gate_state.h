// ptb/qos/gate_state.h: the request gate's decision for a controller that sees LS work from outside (ptb-qosd):
// BE holds `during` while LS has work in flight and gets `between` when LS is idle, with two limits that give
// BE `between` back early:
// - the stuck limit: some LS stream in flight has made no progress for that long, and BE has been held that long
//   (an LS launch queued behind a paused BE launch in a shared hardware queue would otherwise wait forever); BE
//   holds again once it has had a tenth of the stuck limit, *whether or not the stream is still stuck*, and is
//   released again only after another whole stuck limit held (BE's persistent workers on every SM can be what
//   keeps the stream stuck: docs/design/qos-request-gate.md, "A release must end"). A stream stuck for good gets
//   the GPU ten parts in eleven; a BE launch that blocks a shared queue drains in the releases;
// - the hold limit: BE has been held that long without a break (BE's floor under an LS service that is never
//   idle); BE holds again once it has had a tenth of the hold limit.
// Why the two limits are apart: docs/design/qos-request-gate.md. RequestGate (request_gate.cuh) decides with this
// class too, the age of its oldest request in flight standing for `stuck_ns`.
// `between_after`: BE gets `between` only once LS has stayed idle that long (0: at once), so that requests which
// follow one another closely (a service's queue) are one hold, not a yield and a give-back each; the hold limit
// counts through those gaps.
// Plain C++ (no CUDA): the caller measures, this decides; test/unit/QosdTest.cpp drives it with a fake clock.
#pragma once

#include <cstdint>

namespace ptb::qos {

class GateState {
public:
  enum class Want { between, during };
  enum class Release { none, stuck, held }; // why the last release gave BE its SMs back
  GateState(std::uint64_t __stuck_limit_ns, std::uint64_t __hold_limit_ns, std::uint64_t __between_after_ns = 0)
      : stuck_limit_(__stuck_limit_ns), hold_limit_(__hold_limit_ns), after_(__between_after_ns) {}

  // One look at LS: `busy` when some LS work is in flight, `stuck_ns` the longest time any LS stream in flight
  // has gone without progress (0 when idle). Returns what BE should have now.
  Want step(std::uint64_t __now, bool __busy, std::uint64_t __stuck_ns) {
    if (!__busy) {
      if (holding_ && after_ != 0) { // LS idle, but perhaps only between two requests
        if (!idle_) {
          idle_ = true;
          idle_since_ = __now;
        }
        if (__now - idle_since_ < after_) return want_;
      }
      holding_ = false;
      idle_ = false;
      released_ = false;
      return want_ = Want::between;
    }
    idle_ = false;
    if (!holding_) { // the first work in flight
      holding_ = true;
      released_ = false;
      held_since_ = __now;
      ++yields_;
      return want_ = Want::during;
    }
    const bool __stuck = __stuck_ns > stuck_limit_;
    const std::uint64_t __held = __now - held_since_;
    if (!released_ && ((__stuck && __held > stuck_limit_) || __held > hold_limit_)) {
      released_ = true;
      released_at_ = __now;
      release_ = __stuck ? Release::stuck : Release::held;
      ++releases_;
      return want_ = Want::between;
    }
    const std::uint64_t __rest = (release_ == Release::stuck ? stuck_limit_ : hold_limit_) / 10;
    if (released_ && __now - released_at_ > __rest) { // stuck or not: see the top of this file
      released_ = false;
      held_since_ = __now;
      ++yields_;
      return want_ = Want::during;
    }
    return want_;
  }
  Want want() const { return want_; }
  std::uint64_t yields() const { return yields_; }     // BE told to leave (work began, or a hold resumed)
  std::uint64_t releases() const { return releases_; } // a limit gave BE its SMs back
  Release last_release() const { return release_; }

private:
  std::uint64_t stuck_limit_, hold_limit_;
  std::uint64_t after_;
  Release release_ = Release::none;
  bool holding_ = false, released_ = false, idle_ = false;
  std::uint64_t held_since_ = 0, released_at_ = 0, idle_since_ = 0;
  std::uint64_t yields_ = 0, releases_ = 0;
  Want want_ = Want::between;
};

} // namespace ptb::qos

// ptb/tuning.cuh: ptb::Tuning, the process-wide tuning of the task loop (PTB_CHECK_CYCLES, ...).
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <algorithm>
#include <cstdlib>
#include <mutex>

#include "detail/config.cuh"
#include "detail/runtime.cuh"

namespace ptb {

// Tuning of the task loop (process-wide, read at each launch). check_cycles: clock cycles between two
// reads of the SM's cap by a worker (the yield delay, besides the task in flight); max_chunk: most tasks
// one claim takes (1..127); first_chunk: most tasks each original worker starts with, without a claim
// (only when every SM is allowed; 0: none; at most max_chunk); chunk_cycles: a claim takes no more tasks
// than run in about this many cycles (0: no limit). Initial values from PTB_CHECK_CYCLES, PTB_MAX_CHUNK,
// PTB_FIRST_CHUNK, PTB_CHUNK_CYCLES. Defaults {32768, 32, 4, 131072, first_share 4}, chosen from H100
// runs (docs/results/runtime-overhead.md, "How the tuning defaults were chosen").
struct Tuning {
  unsigned check_cycles = detail::kDefaultCheckCycles;
  unsigned max_chunk = detail::kDefaultMaxChunk;
  unsigned first_chunk = detail::kDefaultFirstChunk;
  unsigned chunk_cycles = detail::kDefaultChunkCycles;
  // A launch whose workers all landed outside its SM set: when no worker from the host reached the device
  // for this long (the host is not answering), its last worker runs the tasks where it is. Initial value
  // from PTB_STRAND_GRACE_US.
  unsigned strand_grace_us = detail::kDefaultStrandGraceUs;
  // Launches under one restricting policy run in the order they were made, also across streams: at most
  // two at once, one at a time after a launch that can take all of the policy's room (a launch waits,
  // where they were made in other streams, for the policy's launches made two and three before it, and
  // for the one just before it if that one fills the room; docs/results/progress-under-policy.md, "Launches under one
  // policy run in turn"). false: launches of several streams under one policy share its SMs as the hardware
  // dispatches them, and one of them can wait for the others' whole chains. Initial value from
  // PTB_ORDER_STREAMS (0: off).
  bool order_streams = true;
  // The static first chunks take about 1/first_share of a launch's tasks (at most first_chunk each; 1:
  // every task of a launch with at most first_chunk tasks per worker, and no claim: for chains of short
  // launches, 5 us less per launch of a 16 us stencil's twin, up to 20% more on compute-heavy twins;
  // docs/results/dispatch-and-first-launch.md, "Static chunks that cover the launch"). Initial value from
  // PTB_FIRST_SHARE.
  unsigned first_share = detail::kDefaultFirstShare;
};
namespace detail {
inline Tuning& tuning_locked() {
  static Tuning t = [] {
    Tuning x;
    auto env = [](const char* n, unsigned& v) {
      if (const char* e = std::getenv(n)) v = static_cast<unsigned>(std::strtoul(e, nullptr, 10));
    };
    env("PTB_CHECK_CYCLES", x.check_cycles);
    env("PTB_MAX_CHUNK", x.max_chunk);
    env("PTB_FIRST_CHUNK", x.first_chunk);
    env("PTB_FIRST_SHARE", x.first_share);
    env("PTB_CHUNK_CYCLES", x.chunk_cycles);
    env("PTB_STRAND_GRACE_US", x.strand_grace_us);
    unsigned order = 1;
    env("PTB_ORDER_STREAMS", order);
    x.order_streams = order != 0;
    return x;
  }();
  t.max_chunk = std::max(1u, std::min(t.max_chunk, kMaxChunk));
  t.first_chunk = std::min(t.first_chunk, t.max_chunk);
  t.first_share = std::max(1u, t.first_share);
  if (t.check_cycles == 0) t.check_cycles = 1;
  t.strand_grace_us = std::min(t.strand_grace_us, 4000000u); // in ns it must fit 32 bits
  return t;
}
} // namespace detail

inline void set_tuning(const Tuning& t) {
  std::lock_guard<std::mutex> __g(detail::rt().__m);
  detail::tuning_locked() = t;
  detail::tuning_locked(); // clamps
}
inline Tuning tuning() {
  std::lock_guard<std::mutex> __g(detail::rt().__m);
  return detail::tuning_locked();
}

} // namespace ptb

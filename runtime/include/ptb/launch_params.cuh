// ptb/launch_params.cuh: ptb::Launch, a launch's parameters as its workers get them: built by the host per
// launch, passed by value as the last parameter of every twin (a fused kernel takes one per part).
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include "detail/config.cuh"
#include "detail/control_block.cuh"
#include "detail/trace_record.cuh"

namespace ptb {

namespace detail {
// Launch flags
constexpr unsigned kCaptured = 1u; // control block of a captured graph node: reset, never freed
constexpr unsigned kResume = 2u;   // these workers join a running launch (not its original workers)
} // namespace detail

// Everything a worker needs; built by the host per launch, passed by value to the twin kernel.
struct Launch {
  detail::ControlBlock* control;
  const unsigned char* caps; // per-%smid cap on workers (0: SM not allowed, 255: no cap), then the
                             // policy's PolicyRoom (detail/config.cuh)
  unsigned* free_flag;       // host-mapped word: the last worker writes 0 when the control block is free
  unsigned* strand_seq;      // host-mapped word: bumped when a paused launch needs new workers
  detail::TraceBuf trace;    // trace.recs == nullptr: no trace
  unsigned long long ntasks; // gridDim.x * y * z of the original launch
  unsigned long long base;   // workers * first: tasks below it are the static first chunks
  unsigned gx, gy, gz;       // original grid
  unsigned workers;          // original workers launched (exit count of the last one)
  unsigned first;            // static first chunk per original worker (0: none)
  unsigned check_cycles;     // cycles between reads of the SM's cap
  unsigned max_chunk;        // most tasks per claim (1..127)
  unsigned chunk_cycles;     // a claim takes about this many cycles of tasks at most (0: no limit)
  unsigned flags;            // kCaptured, kResume
  unsigned gen;              // control block generation this launch runs in (kAnyGen: captured)
  unsigned strand_grace_ns;  // alone, with no worker from the host this long: the anchor spills
  unsigned occ;              // workers of this launch that fit on an SM (its room where no cap applies)
};

} // namespace ptb

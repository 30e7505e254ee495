// ptb/detail/close.cuh: how a launch ends: the close protocol of its last original worker (the anchor,
// strand signal and spill), and resume workers joining a running launch.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include "../launch_params.cuh"
#include "config.cuh"
#include "control_block.cuh"
#include "intrinsics.cuh"
#include "leader.cuh"
#include "range_stacks.cuh"
#include "thin_request.cuh"

namespace ptb {

namespace detail {

// Put the control block back to rest. Only the last original worker calls it, when every original worker has
// left, no resume worker is registered, no range is handed back and the counter is exhausted: then every
// task has run. False (nothing changed) if a resume worker got in meanwhile.
__device__ inline bool try_close(const Launch& __L, unsigned long long w) {
  // w: the control block's state as the caller read it (0 registered). The CAS below fails if it changed since:
  // no need to read it again after the fence (a join adds to state before reading `running`).
  ControlBlock* cb = __L.control;
  vstore(&cb->running, 0u); // resume workers that have not registered yet stay out from now on
  __threadfence();
  const unsigned long long nw = ((((w >> 32) + 1) & 0x7fffffffull) << 32);
  if ((w & 0xffffffffull) != 0 || atomicCAS(&cb->state, w, nw) != w) {
    vstore(&cb->running, 1u);
    return false;
  }
  __threadfence();
  const unsigned rh = vload(&cb->pending);
  const unsigned long long nx = vload(&cb->next); // both loads in flight
  if (rh != 0 || __L.base + nx < __L.ntasks) {    // one got in, handed a range back and left: undo
    atomicAdd(&cb->state, w - nw);                // generation back; keeps any transient count of a failed join
    __threadfence();
    vstore(&cb->running, 1u);
    return false;
  }
  vstore(&cb->next, 0ull);
#pragma unroll 1 // once per launch; unrolled, the 64 stores were 0.6 KB of a twin's SASS (issue 13)
  for (unsigned __k = 0; __k < kRetShards; ++__k) {
    vstore(&cb->ret[__k].rhead, 0ull);
    vstore(&cb->ret[__k].fhead, 0ull);
  }
  vstore(&cb->pending, 0u);
  vstore(&cb->nused, 0u);
  vstore(&cb->exited, 0u);
  vstore(&cb->thin, 0u);
  vstore(&cb->started, 0u);
  __threadfence();
  if (!(__L.flags & kCaptured)) vstore(__L.free_flag, 0u);
#ifdef PTB_DEBUG_STAMPS
  ptb_debug_stamp(3, 0);
#endif
  return true;
}

// Resume workers: register in the control block while the launch runs and has work left; false: leave (the
// control block is as before, but for a transient +1 in its registered count, which at most makes a close retry).
// One atomic, not a CAS loop: hundreds of resume workers arrive at once.
__device__ inline bool join(const Launch& __L) {
  ControlBlock* cb = __L.control;
  const unsigned long long w = atomicAdd(&cb->state, 1ull);
  __threadfence();
  if ((__L.gen == kAnyGen || static_cast<unsigned>(w >> 32) == __L.gen) && vload(&cb->running) != 0 &&
      (ranges_pending(cb) || !exhausted(__L)))
    return true;
  atomicAdd(&cb->state, ~0ull);
  return false;
}

// The leader, after the whole block finished its last task: leave. The last original worker may leave
// only when every task is done (the user's stream waits on this kernel): until then it stays as the
// anchor, works again whenever its SM allows it (returns true: rejoin), and asks the host for new
// workers when nobody else is left to run the remaining tasks. If no worker from the host reached the
// device for strand_grace_ns (the host is not answering) while the policy allows some SM, the anchor
// runs one range itself, where it is (a spill: returns true with s.spill set), and comes back here after
// it: so a launch under a non-empty set never needs the host to finish. A host that answers, with workers
// that find the set's SMs full, is waited for: the set is kept.
__device__ inline bool leave(const Launch& __L, Leader& s) {
  s.spill = false;
  drop_rank(__L, s);
  __threadfence();
  if (__L.flags & kResume) {
    atomicAdd(&__L.control->state, ~0ull); // one registered resume worker less
    ask_if_thin(__L);
    return false;
  }
  if (atomicAdd(&__L.control->exited, 1u) != __L.workers - 1) {
    // Only a worker that has run about 1 ms itself asks (thin_request.cuh): every worker of every launch
    // passes here, and the request's six loads cost a chain of 10 us launches about 2.7 us each (bac2ca9).
    if (clock64() >= s.thin_look) ask_if_thin(__L);
    return false;
  }
  unsigned ns = 256;
  unsigned long long last_signal = 0;
  unsigned long long& stranded_since = s.stranded_since; // kept across spills: one grace per stranding
  for (;;) {
    __threadfence();
    // three loads in flight at once (no short-circuit between them)
    const unsigned long long st = vload(&__L.control->state), nx = vload(&__L.control->next);
    const unsigned rh = vload(&__L.control->pending);
    const bool refs = (st & 0xffffffffull) != 0;
    const bool work_left = rh != 0 || __L.base + nx < __L.ntasks;
    if (!refs && !work_left) {
      if (try_close(__L, st)) return false;
    } else if (work_left) {
      unsigned long long t = 0;
      if (!refs) {
        // Nobody else is left to run the remaining tasks: ask the host for workers (its monitor
        // launches them on the allowed SMs), at most every 200 us.
        t = globaltimer();
        const unsigned h = vload(&__L.control->heard);
        // (Re)start the grace when the host answered, and while the set is empty: a pause is no silence of
        // the host, and a grace counted through it would spill at once when SMs come back, before the
        // resume workers the host launches then can arrive (seen: a BE launch paused 30 ms by its controller
        // ran a range on an SM outside the set it resumed with, test_controller_link).
        if (stranded_since == 0 || h != s.heard || !any_allowed(__L)) stranded_since = t;
        s.heard = h;
        if (last_signal == 0 || t - last_signal > 200000ull) {
          last_signal = t;
          __threadfence_system();
          atomicAdd(__L.strand_seq, 1u);
        }
      } else {
        stranded_since = 0; // workers are on it
      }
      const bool here = allowed(__L, s);
      if (!here) drop_rank(__L, s);
      const bool spill = !here && stranded_since != 0 && t - stranded_since >= __L.strand_grace_ns && any_allowed(__L);
      if (here || spill) {
        atomicSub(&__L.control->exited, 1u);
        s.est = __L.base + vload(&__L.control->next);
        s.cur = s.end = 0;
        s.given = s.since = 0;
        s.__k = 1;
        s.pending = true;
        s.last_check = clock64();
        if (spill) {
          // A spill takes its one range now; none left (taken meanwhile): back to the anchor's loop.
          if (!claim(__L, s, false)) {
            atomicAdd(&__L.control->exited, 1u);
            continue;
          }
          s.spill = true;
        }
        return true;
      }
    }
    __nanosleep(ns);
    if (ns < 8192) ns *= 2;
  }
}

} // namespace detail

} // namespace ptb

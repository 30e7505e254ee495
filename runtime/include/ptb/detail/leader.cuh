// ptb/detail/leader.cuh: a worker's leader thread between two runs of tasks: its state, the SM's cap,
// claims of ranges, the trace record of a task, the next run.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include "../launch_params.cuh"
#include "config.cuh"
#include "control_block.cuh"
#include "intrinsics.cuh"
#include "range_stacks.cuh"
#include "thin_request.cuh"
#include "trace_record.cuh"

namespace ptb {

namespace detail {

// State of the worker's leader thread (thread 0,0,0), kept in shared memory and touched only between two
// runs of tasks (a run: up to a range's or a check interval's worth of consecutive tasks).
struct Leader {
  unsigned long long cur, end; // range [cur, end); tasks before cur were handed to the fast path
  unsigned long long est;      // estimate of the claim counter (guided chunk sizes)
  long long last_check;        // clock64() of the last read of the SM's cap
  long long thin_look;         // clock64() from which the next check also asks whether the launch is thin
  unsigned long long tprev;    // trace: start of the task in progress
  unsigned long long idprev;
  unsigned given; // `go` given to the fast path last time
  unsigned since; // tasks started since the last check
  unsigned __k;   // tasks between checks (about check_cycles of them)
  unsigned rate;  // tasks that ran per check_cycles at the last check (0: not measured)
  unsigned sm, rank;
  unsigned worker; // this worker's index among the launch's workers (blockIdx.x, or a fused slot's)
  bool ranked, tracing;
  bool pending;                      // handed-back ranges were seen at the last check
  bool spill;                        // the stranded last worker runs one range on an SM outside the set
  unsigned long long stranded_since; // %globaltimer when the anchor last found itself alone (0: not)
  unsigned heard;                    // the control block's `heard` count when last looked at (stranded)
};

__device__ __forceinline__ uint3 coords(const Launch& __L, unsigned long long id) {
  if (__L.ntasks <= (1ull << 32)) {
    const unsigned __i = static_cast<unsigned>(id);
    const unsigned __q = __i / __L.gx;
    return make_uint3(__i - __q * __L.gx, __q % __L.gy, __q / __L.gy);
  }
  const unsigned long long __q = id / __L.gx;
  return make_uint3(static_cast<unsigned>(id - __q * __L.gx), static_cast<unsigned>(__q % __L.gy),
                    static_cast<unsigned>(__q / __L.gy));
}

// May this worker run tasks on its SM, given the SM's cap? Under a cap (1..254) the worker takes a rank
// on its SM first (once) and stays only if the rank is below the cap.
__device__ inline bool allowed_by(const Launch& __L, Leader& s, unsigned cap) {
  if (cap == 0) return false;
  if (cap >= 255) return true;
  if (!s.ranked) {
    s.rank = atomicAdd(&__L.control->sm_live[s.sm], 1u);
    s.ranked = true;
  }
  return s.rank < cap;
}
__device__ inline bool allowed(const Launch& __L, Leader& s) { return allowed_by(__L, s, vload(__L.caps + s.sm)); }
__device__ __forceinline__ void drop_rank(const Launch& __L, Leader& s) {
  if (s.ranked) {
    atomicSub(&__L.control->sm_live[s.sm], 1u);
    s.ranked = false;
  }
}
__device__ __forceinline__ void trace_end(const Launch& __L, Leader& s, unsigned long long now) {
  if (s.tracing) {
    s.tracing = false;
    const unsigned long long __i = atomicAdd(__L.trace.count, 1ull);
    if (__i < __L.trace.cap) {
      TraceRec __r;
      __r.task = s.idprev;
      __r.start = s.tprev;
      __r.end = now;
      __r.sm = s.sm;
      __r.worker = s.worker;
      __r.tag = __L.trace.tag;
      __r.pad = 0;
      __L.trace.recs[__i] = __r;
    }
  }
}

// Claim the next range: handed-back ranges first, then a guided chunk of the counter. `looked`: the
// leader read the stack head in this very call (s.pending is fresh), so an exhausted counter does not
// look again. A counter seen exhausted (s.est >= ntasks) stays exhausted for the rest of the launch (it
// only grows until the close), so it is not touched again: a one-wave launch, whose static chunks cover
// every task, makes no claim at all.
__device__ __forceinline__ bool claim(const Launch& __L, Leader& s, bool looked) {
  unsigned long long b, e;
  if (s.pending) {
    if (pop_range(__L.control, s.worker, b, e)) {
      s.cur = b;
      s.end = e;
      return true;
    }
    s.pending = false;
  }
  if (s.est < __L.ntasks) {
    // Guided size from the counter as last seen (a hint only: the atomic decides). Single precision:
    // no 64-bit division while the block waits.
    float cf = __fdividef(static_cast<float>(__L.ntasks - s.est), 4.f * static_cast<float>(__L.workers));
    if (__L.chunk_cycles && s.rate) {
      // No more tasks than ran in chunk_cycles lately. A worker that the warp schedulers starve (a
      // persistent block keeps its age) then holds little unstarted work.
      const float t = __fdividef(static_cast<float>(s.rate) * static_cast<float>(__L.chunk_cycles),
                                 static_cast<float>(__L.check_cycles));
      cf = fminf(cf, t);
    }
    const unsigned c =
        cf < 1.f ? 1u : (cf >= static_cast<float>(__L.max_chunk) ? __L.max_chunk : static_cast<unsigned>(cf));
    b = __L.base + atomicAdd(&__L.control->next, c);
    s.est = b + c;
    if (b < __L.ntasks) {
      s.cur = b;
      s.end = b + c < __L.ntasks ? b + c : __L.ntasks;
      return true;
    }
  }
  // Counter exhausted: take a range handed back since the last look, if any, before leaving (else the
  // anchor would be left to run them alone).
  if (!looked && ranges_pending(__L.control) && pop_range(__L.control, s.worker, b, e)) {
    s.cur = b;
    s.end = e;
    return true;
  }
  return false;
}

__device__ __forceinline__ bool exhausted(const Launch& __L) {
  return __L.base + vload(&__L.control->next) >= __L.ntasks;
}

// The leader, between two runs of tasks: account for the run just finished, read the SM's cap when a
// check is due (about every check_cycles), claim a new range when this one is used up. Returns the length
// of the next run (tasks s.cur, s.cur + 1, ...), 0: stop.
__device__ __forceinline__ unsigned next_run(const Launch& __L, Leader& s) {
  s.cur += s.given;
  s.since += s.given;
  s.given = 0;
  if (__L.trace.recs != nullptr) trace_end(__L, s, globaltimer());
  bool looked = false;
  if (s.since >= s.__k) {
    // Tasks until the next check: as many as took check_cycles since the last one, at most twice the
    // last count (so a change to longer tasks is noticed within a few of them), 1 after no task.
    // Single-precision arithmetic: the whole block waits for the leader here, and a 64-bit division is
    // a long software sequence (measured: run boundaries were a large part of the per-task cost).
    const long long now = clock64(), el = now - s.last_check;
    float kf = 1.f;
    if (s.since && el > 0) {
      kf = __fdividef(static_cast<float>(__L.check_cycles) * static_cast<float>(s.since), static_cast<float>(el));
      s.rate = kf < 1.f ? 1u : (kf > 1048576.f ? 1048576u : static_cast<unsigned>(kf));
    }
    unsigned __k = kf < 1.f ? 1u : (kf > 1024.f ? 1024u : static_cast<unsigned>(kf));
    if (__k > 2 * s.__k) __k = 2 * s.__k;
    s.__k = __k < 1 ? 1u : __k;
    s.last_check = now;
    s.since = 0;
    if (now >= s.thin_look) { // this worker has run about 1 ms: is the launch thin? (thin_request.cuh)
      s.thin_look = now + kThinLookCycles;
      ask_if_thin(__L);
    }
    // Is this worker still allowed on its SM? If not, hand the rest of its range back and stop (if no
    // node is left for it, it keeps the range, checks before each task and stops at its end).
    const unsigned rh = vload(&__L.control->pending); // both loads in flight at once
    const unsigned cap = vload(__L.caps + s.sm);
    s.pending = rh != 0;
    looked = true;
    if (!s.spill && !allowed_by(__L, s, cap)) {
      s.__k = 1;
      if (s.cur < s.end && push_range(__L.control, s.worker, s.cur, s.end)) s.cur = s.end;
      if (s.cur >= s.end) return 0;
    }
  }
  if (s.cur >= s.end && (s.spill || !claim(__L, s, looked))) return 0; // a spill is one range, then leave()
  unsigned long long go = s.end - s.cur;
  if (go > s.__k - s.since) go = s.__k - s.since;
  if (__L.trace.recs != nullptr) {
    go = 1;
    s.tracing = true;
    s.tprev = globaltimer();
    s.idprev = s.cur;
  }
  s.given = static_cast<unsigned>(go);
  return s.given;
}

// Does the policy allow any SM? (An empty set pauses the launch: its anchor waits for the host.)
__device__ inline bool any_allowed(const Launch& __L) {
  const unsigned* w = reinterpret_cast<const unsigned*>(__L.caps);
#pragma unroll 1 // a rare path; unrolled, these 64 loads were 2.8 KB of the sobel twin's 29.7 KB of SASS, loaded
                 // with the module on a program's first launch (issue 13)
  for (unsigned __i = 0; __i < kMaxSm / 4; ++__i)
    if (vload(w + __i) != 0) return true;
  return false;
}

} // namespace detail

} // namespace ptb

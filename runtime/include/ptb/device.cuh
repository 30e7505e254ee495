// ptb/device.cuh: the device side of the PTB runtime: per-launch control block, the task loop.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>
#include <cstdint>

// Diagnosis only: with -DPTB_DEBUG_STAMPS the task loop calls a function the program defines before
// including ptb.cuh, `__device__ void ptb_debug_stamp(int what, unsigned worker)`, at a worker's entry (0),
// when its first run is published (1), when it finds no task left (2), and after a launch's close (3,
// worker 0). bench/ptb_overhead/probe_forms.cu uses it to time the phases of a launch.

namespace ptb {
namespace detail {

constexpr unsigned kMaxSm = 256;          // %smid values handled (H100: 132); larger ids share caps modulo
constexpr unsigned kRetCap = 4096;        // nodes for handed-back ranges, per launch (>= workers, mostly)
constexpr unsigned kRetShards = 32;       // handed-back ranges live in this many stacks (less contention)
constexpr unsigned kMaxChunk = 127;       // largest range (7 bits in a packed range); Launch::max_chunk <= it
constexpr unsigned kAnyGen = 0xffffffffu; // resume workers of a captured launch: join any running replay
constexpr unsigned long long kMaxTasks = 1ull << 56;  // ranges are packed as (begin << 7 | length)
// Default tuning (ptb::Tuning): a worker re-reads its SM's cap after a task once about check_cycles
// clock cycles (32768: ~16.5 us at 1.98 GHz) passed since the last read; claims take at most max_chunk tasks
// and about chunk_cycles of work; each original worker starts on a static chunk of first_chunk tasks.
// Measured on the H100 (bench/runtime/results/h100-2026-11-22-overhead-run*.txt): every check ends a run
// of tasks (a block-wide meeting with the leader's bookkeeping on the critical path), so checks every
// 8 us cost 5-15% on tasks of ~1 us; claims of more than ~32 tasks lengthen the tail of compute-heavy
// kernels (persistent workers are starved unevenly).
constexpr unsigned kDefaultCheckCycles = 32768;
constexpr unsigned kDefaultMaxChunk = 32;
constexpr unsigned kDefaultFirstChunk = 4;
constexpr unsigned kDefaultChunkCycles = 131072;
// A launch whose workers all landed on SMs outside its set (a grid smaller than the GPU does this often)
// asks the host for workers; if no worker from the host reached the device for this many microseconds,
// its last worker runs the tasks itself where it is (see leave()). The host may be unable to answer:
// CUDA's lazy module loading makes a launch of a kernel not loaded yet wait for every running kernel, and
// such a wait held the host thread that would have launched the workers (measured: wavefront programs
// hung for good under PTB_SMS=0-65).
// The grace must be longer than the host's answer when it can answer (the monitor polls every 100 us and
// relaunches a slot's workers at most every 500 us): a host that answers, but whose workers find the set
// full, is waited for, so the set is kept (test_policy's stranded test).
constexpr unsigned kDefaultStrandGraceUs = 2000;

// Launch flags
constexpr unsigned kCaptured = 1u;  // slot belongs to a captured graph node: reset, never freed
constexpr unsigned kResume = 2u;    // these workers join a running launch (not its original workers)

// One trace record per task.
struct TraceRec {
  unsigned long long task;
  unsigned long long start, end;  // %globaltimer, ns (end: when the worker's thread 0 finished it)
  unsigned sm, worker;  // %smid; the worker's blockIdx.x
  unsigned tag, pad;    // the launch's trace tag (host counter)
};
struct TraceBuf {
  TraceRec* recs;
  unsigned long long* count;  // records written (may exceed cap: the rest are dropped)
  unsigned long long cap;
  unsigned tag;
};

struct Node {
  unsigned long long range;  // begin << 7 | length
  unsigned long long next;   // index + 1 of the next node, 0: none
};

// Per-launch control block in device memory, from a pool allocated once. At rest every field is 0 except
// the generation in `state`; the last original worker of a launch puts it back to rest.
// One stack of handed-back ranges and its stack of free nodes, alone on a 128-byte line: when a policy
// removes half the SMs, a thousand workers hand their ranges back at once, and on one stack head their
// CAS loops ran one after another (measured: the last removed SM was free ~2 ms after the request).
struct alignas(128) RetShard {
  unsigned long long rhead;         // stack of handed-back ranges: tag << 32 | node index + 1
  unsigned long long fhead;         // stack of free nodes (same encoding)
};

struct alignas(128) Slot {
  unsigned long long next;          // dynamic claims: tasks [base + next, ...) are unclaimed
  unsigned long long pad0[15];
  unsigned long long state;         // generation << 32 | resume workers registered
  unsigned pending;                 // handed-back ranges in the stacks, or about to be (never fewer)
  unsigned exited;                  // original workers that left
  unsigned running;                 // 1 while the launch's original workers run
  unsigned nused;                   // nodes taken from node[] (fresh ones)
  unsigned heard;                   // resume workers that reached the device (any launch of the slot; only
                                    // its changes count: the host answers; never reset)
  unsigned pad1[25];
  RetShard ret[kRetShards];
  unsigned sm_live[kMaxSm];         // ranked workers per SM (rank source for a per-SM cap)
  Node node[kRetCap];
};

}  // namespace detail

// Everything a worker needs; built by the host per launch, passed by value to the twin kernel.
struct Launch {
  detail::Slot* slot;
  const unsigned char* caps;        // per-%smid cap on workers (0: SM not allowed, 255: no cap)
  unsigned* free_flag;              // host-mapped word: the last worker writes 0 when the slot is free
  unsigned* strand_seq;             // host-mapped word: bumped when a paused launch needs new workers
  detail::TraceBuf trace;           // trace.recs == nullptr: no trace
  unsigned long long ntasks;        // gridDim.x * y * z of the original launch
  unsigned long long base;          // workers * first: tasks below it are the static first chunks
  unsigned gx, gy, gz;              // original grid
  unsigned workers;                 // original workers launched (exit count of the last one)
  unsigned first;                   // static first chunk per original worker (0: none)
  unsigned check_cycles;            // cycles between reads of the SM's cap
  unsigned max_chunk;               // most tasks per claim (1..127)
  unsigned chunk_cycles;            // a claim takes about this many cycles of tasks at most (0: no limit)
  unsigned flags;                   // kCaptured, kResume
  unsigned gen;                     // slot generation this launch runs in (kAnyGen: captured)
  unsigned strand_grace_ns;         // alone, with no worker from the host this long: the anchor spills
};

namespace detail {

__device__ __forceinline__ unsigned smid() {
  unsigned r;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned nsmid() {
  unsigned r;
  asm volatile("mov.u32 %0, %%nsmid;" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
template <class T>
__device__ __forceinline__ T vload(const T* p) {
  return *static_cast<const volatile T*>(p);
}
template <class T>
__device__ __forceinline__ void vstore(T* p, T v) {
  *static_cast<volatile T*>(p) = v;
}

// State of the worker's leader thread (thread 0,0,0), kept in shared memory and touched only between two
// runs of tasks (a run: up to a range's or a check interval's worth of consecutive tasks).
struct Leader {
  unsigned long long cur, end;  // range [cur, end); tasks before cur were handed to the fast path
  unsigned long long est;       // estimate of the claim counter (guided chunk sizes)
  long long last_check;         // clock64() of the last read of the SM's cap
  unsigned long long tprev;     // trace: start of the task in progress
  unsigned long long idprev;
  unsigned given;               // `go` given to the fast path last time
  unsigned since;               // tasks started since the last check
  unsigned k;                   // tasks between checks (about check_cycles of them)
  unsigned rate;                // tasks that ran per check_cycles at the last check (0: not measured)
  unsigned sm, rank;
  unsigned worker;              // this worker's index among the launch's workers (blockIdx.x, or the slot's)
  bool ranked, tracing;
  bool pending;                 // handed-back ranges were seen at the last check
  bool spill;                   // the stranded last worker runs one range on an SM outside the set
  unsigned long long stranded_since;  // %globaltimer when the anchor last found itself alone (0: not)
  unsigned heard;               // the slot's `heard` count when last looked at (stranded)
};

__device__ __forceinline__ uint3 coords(const Launch& L, unsigned long long id) {
  if (L.ntasks <= (1ull << 32)) {
    const unsigned i = static_cast<unsigned>(id);
    const unsigned q = i / L.gx;
    return make_uint3(i - q * L.gx, q % L.gy, q / L.gy);
  }
  const unsigned long long q = id / L.gx;
  return make_uint3(static_cast<unsigned>(id - q * L.gx), static_cast<unsigned>(q % L.gy), static_cast<unsigned>(q / L.gy));
}

// Lock-free stacks of nodes with tagged heads (the tag changes on every successful update, so a head
// that was popped and pushed again in between does not match: no ABA). Every failed CAS means another
// thread's operation succeeded, and the operations are finitely many: each loop ends.
__device__ inline bool stack_pop(unsigned long long* head, Node* nodes, unsigned& idx) {
  for (;;) {
    const unsigned long long h = vload(head);
    const unsigned i = static_cast<unsigned>(h);
    if (i == 0) return false;
    __threadfence();
    const unsigned long long nx = vload(&nodes[i - 1].next);
    const unsigned long long nh = (((h >> 32) + 1) << 32) | (nx & 0xffffffffull);
    if (atomicCAS(head, h, nh) == h) {
      __threadfence();
      idx = i - 1;
      return true;
    }
  }
}
__device__ inline void stack_push(unsigned long long* head, Node* nodes, unsigned idx) {
  for (;;) {
    const unsigned long long h = vload(head);
    vstore(&nodes[idx].next, h & 0xffffffffull);
    __threadfence();
    const unsigned long long nh = (((h >> 32) + 1) << 32) | (idx + 1);
    if (atomicCAS(head, h, nh) == h) return;
  }
}
__device__ __forceinline__ bool ranges_pending(const Slot* sl) { return vload(&sl->pending) != 0; }
// Hand a claimed-but-unstarted range back, onto the stack `shard` (the worker's). False if no node is
// left (the caller keeps the range). `pending` counts it before it is in the stack, so that it is never
// below the ranges there: a launch is closed only when it is 0.
__device__ inline bool push_range(Slot* sl, unsigned shard, unsigned long long b, unsigned long long e) {
  RetShard& r = sl->ret[shard % kRetShards];
  unsigned idx;
  if (!stack_pop(&r.fhead, sl->node, idx)) {
    if (vload(&sl->nused) >= kRetCap) return false;
    idx = atomicAdd(&sl->nused, 1u);
    if (idx >= kRetCap) return false;
  }
  vstore(&sl->node[idx].range, (b << 7) | (e - b));
  atomicAdd(&sl->pending, 1u);
  __threadfence();
  stack_push(&r.rhead, sl->node, idx);
  return true;
}
// Take a handed-back range, looking at the stacks from `shard` on; `pending` drops after it is out.
__device__ inline bool pop_range(Slot* sl, unsigned shard, unsigned long long& b, unsigned long long& e) {
  for (unsigned k = 0; k < kRetShards; ++k) {
    RetShard& r = sl->ret[(shard + k) % kRetShards];
    if (static_cast<unsigned>(vload(&r.rhead)) == 0) continue;
    unsigned idx;
    if (!stack_pop(&r.rhead, sl->node, idx)) continue;
    const unsigned long long v = vload(&sl->node[idx].range);
    b = v >> 7;
    e = b + (v & 127);
    stack_push(&r.fhead, sl->node, idx);
    __threadfence();
    atomicSub(&sl->pending, 1u);
    return true;
  }
  return false;
}

// May this worker run tasks on its SM, given the SM's cap? Under a cap (1..254) the worker takes a rank
// on its SM first (once) and stays only if the rank is below the cap.
__device__ inline bool allowed_by(const Launch& L, Leader& s, unsigned cap) {
  if (cap == 0) return false;
  if (cap >= 255) return true;
  if (!s.ranked) {
    s.rank = atomicAdd(&L.slot->sm_live[s.sm], 1u);
    s.ranked = true;
  }
  return s.rank < cap;
}
__device__ inline bool allowed(const Launch& L, Leader& s) { return allowed_by(L, s, vload(L.caps + s.sm)); }
__device__ __forceinline__ void drop_rank(const Launch& L, Leader& s) {
  if (s.ranked) {
    atomicSub(&L.slot->sm_live[s.sm], 1u);
    s.ranked = false;
  }
}
__device__ __forceinline__ void trace_end(const Launch& L, Leader& s, unsigned long long now) {
  if (s.tracing) {
    s.tracing = false;
    const unsigned long long i = atomicAdd(L.trace.count, 1ull);
    if (i < L.trace.cap) {
      TraceRec r;
      r.task = s.idprev;
      r.start = s.tprev;
      r.end = now;
      r.sm = s.sm;
      r.worker = s.worker;
      r.tag = L.trace.tag;
      r.pad = 0;
      L.trace.recs[i] = r;
    }
  }
}

// Claim the next range: handed-back ranges first, then a guided chunk of the counter. `looked`: the
// leader read the stack head in this very call (s.pending is fresh), so an exhausted counter does not
// look again. A counter seen exhausted (s.est >= ntasks) stays exhausted for the rest of the launch (it
// only grows until the close), so it is not touched again: a one-wave launch, whose static chunks cover
// every task, makes no claim at all.
__device__ __forceinline__ bool claim(const Launch& L, Leader& s, bool looked) {
  unsigned long long b, e;
  if (s.pending) {
    if (pop_range(L.slot, s.worker, b, e)) {
      s.cur = b;
      s.end = e;
      return true;
    }
    s.pending = false;
  }
  if (s.est < L.ntasks) {
    // Guided size from the counter as last seen (a hint only: the atomic decides). Single precision:
    // no 64-bit division while the block waits.
    float cf = __fdividef(static_cast<float>(L.ntasks - s.est), 4.f * static_cast<float>(L.workers));
    if (L.chunk_cycles && s.rate) {
      // No more tasks than ran in chunk_cycles lately. A worker that the warp schedulers starve (a
      // persistent block keeps its age) then holds little unstarted work.
      const float t = __fdividef(static_cast<float>(s.rate) * static_cast<float>(L.chunk_cycles),
                                 static_cast<float>(L.check_cycles));
      cf = fminf(cf, t);
    }
    const unsigned c = cf < 1.f ? 1u : (cf >= static_cast<float>(L.max_chunk) ? L.max_chunk : static_cast<unsigned>(cf));
    b = L.base + atomicAdd(&L.slot->next, c);
    s.est = b + c;
    if (b < L.ntasks) {
      s.cur = b;
      s.end = b + c < L.ntasks ? b + c : L.ntasks;
      return true;
    }
  }
  // Counter exhausted: take a range handed back since the last look, if any, before leaving (else the
  // anchor would be left to run them alone).
  if (!looked && ranges_pending(L.slot) && pop_range(L.slot, s.worker, b, e)) {
    s.cur = b;
    s.end = e;
    return true;
  }
  return false;
}

__device__ __forceinline__ bool exhausted(const Launch& L) { return L.base + vload(&L.slot->next) >= L.ntasks; }

// Put the slot back to rest. Only the last original worker calls it, when every original worker has
// left, no resume worker is registered, no range is handed back and the counter is exhausted: then every
// task has run. False (nothing changed) if a resume worker got in meanwhile.
__device__ inline bool try_close(const Launch& L, unsigned long long w) {
  // w: the slot's state as the caller read it (0 registered). The CAS below fails if it changed since:
  // no need to read it again after the fence (a join adds to state before reading `running`).
  Slot* sl = L.slot;
  vstore(&sl->running, 0u);  // resume workers that have not registered yet stay out from now on
  __threadfence();
  const unsigned long long nw = ((((w >> 32) + 1) & 0x7fffffffull) << 32);
  if ((w & 0xffffffffull) != 0 || atomicCAS(&sl->state, w, nw) != w) {
    vstore(&sl->running, 1u);
    return false;
  }
  __threadfence();
  const unsigned rh = vload(&sl->pending);
  const unsigned long long nx = vload(&sl->next);  // both loads in flight
  if (rh != 0 || L.base + nx < L.ntasks) {  // one got in, handed a range back and left: undo
    atomicAdd(&sl->state, w - nw);  // generation back; keeps any transient count of a failed join
    __threadfence();
    vstore(&sl->running, 1u);
    return false;
  }
  vstore(&sl->next, 0ull);
  for (unsigned k = 0; k < kRetShards; ++k) {
    vstore(&sl->ret[k].rhead, 0ull);
    vstore(&sl->ret[k].fhead, 0ull);
  }
  vstore(&sl->pending, 0u);
  vstore(&sl->nused, 0u);
  vstore(&sl->exited, 0u);
  __threadfence();
  if (!(L.flags & kCaptured)) vstore(L.free_flag, 0u);
#ifdef PTB_DEBUG_STAMPS
  ptb_debug_stamp(3, 0);
#endif
  return true;
}

// Resume workers: register in the slot while the launch runs and has work left; false: leave (the slot
// is as before, but for a transient +1 in its registered count, which at most makes a close retry).
// One atomic, not a CAS loop: hundreds of resume workers arrive at once.
__device__ inline bool join(const Launch& L) {
  Slot* sl = L.slot;
  const unsigned long long w = atomicAdd(&sl->state, 1ull);
  __threadfence();
  if ((L.gen == kAnyGen || static_cast<unsigned>(w >> 32) == L.gen) && vload(&sl->running) != 0 &&
      (ranges_pending(sl) || !exhausted(L)))
    return true;
  atomicAdd(&sl->state, ~0ull);
  return false;
}

// The leader, between two runs of tasks: account for the run just finished, read the SM's cap when a
// check is due (about every check_cycles), claim a new range when this one is used up. Returns the length
// of the next run (tasks s.cur, s.cur + 1, ...), 0: stop.
__device__ __forceinline__ unsigned next_run(const Launch& L, Leader& s) {
  s.cur += s.given;
  s.since += s.given;
  s.given = 0;
  if (L.trace.recs != nullptr) trace_end(L, s, globaltimer());
  bool looked = false;
  if (s.since >= s.k) {
    // Tasks until the next check: as many as took check_cycles since the last one, at most twice the
    // last count (so a change to longer tasks is noticed within a few of them), 1 after no task.
    // Single-precision arithmetic: the whole block waits for the leader here, and a 64-bit division is
    // a long software sequence (measured: run boundaries were a large part of the per-task cost).
    const long long now = clock64(), el = now - s.last_check;
    float kf = 1.f;
    if (s.since && el > 0) {
      kf = __fdividef(static_cast<float>(L.check_cycles) * static_cast<float>(s.since), static_cast<float>(el));
      s.rate = kf < 1.f ? 1u : (kf > 1048576.f ? 1048576u : static_cast<unsigned>(kf));
    }
    unsigned k = kf < 1.f ? 1u : (kf > 1024.f ? 1024u : static_cast<unsigned>(kf));
    if (k > 2 * s.k) k = 2 * s.k;
    s.k = k < 1 ? 1u : k;
    s.last_check = now;
    s.since = 0;
    // Is this worker still allowed on its SM? If not, hand the rest of its range back and stop (if no
    // node is left for it, it keeps the range, checks before each task and stops at its end).
    const unsigned rh = vload(&L.slot->pending);  // both loads in flight at once
    const unsigned cap = vload(L.caps + s.sm);
    s.pending = rh != 0;
    looked = true;
    if (!s.spill && !allowed_by(L, s, cap)) {
      s.k = 1;
      if (s.cur < s.end && push_range(L.slot, s.worker, s.cur, s.end)) s.cur = s.end;
      if (s.cur >= s.end) return 0;
    }
  }
  if (s.cur >= s.end && (s.spill || !claim(L, s, looked))) return 0;  // a spill is one range, then leave()
  unsigned long long go = s.end - s.cur;
  if (go > s.k - s.since) go = s.k - s.since;
  if (L.trace.recs != nullptr) {
    go = 1;
    s.tracing = true;
    s.tprev = globaltimer();
    s.idprev = s.cur;
  }
  s.given = static_cast<unsigned>(go);
  return s.given;
}

// Does the policy allow any SM? (An empty set pauses the launch: its anchor waits for the host.)
__device__ inline bool any_allowed(const Launch& L) {
  const unsigned* w = reinterpret_cast<const unsigned*>(L.caps);
  for (unsigned i = 0; i < kMaxSm / 4; ++i)
    if (vload(w + i) != 0) return true;
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
__device__ inline bool leave(const Launch& L, Leader& s) {
  s.spill = false;
  drop_rank(L, s);
  __threadfence();
  if (L.flags & kResume) {
    atomicAdd(&L.slot->state, ~0ull);  // one registered resume worker less
    return false;
  }
  if (atomicAdd(&L.slot->exited, 1u) != L.workers - 1) return false;
  unsigned ns = 256;
  unsigned long long last_signal = 0;
  unsigned long long& stranded_since = s.stranded_since;  // kept across spills: one grace per stranding
  for (;;) {
    __threadfence();
    // three loads in flight at once (no short-circuit between them)
    const unsigned long long st = vload(&L.slot->state), nx = vload(&L.slot->next);
    const unsigned rh = vload(&L.slot->pending);
    const bool refs = (st & 0xffffffffull) != 0;
    const bool work_left = rh != 0 || L.base + nx < L.ntasks;
    if (!refs && !work_left) {
      if (try_close(L, st)) return false;
    } else if (work_left) {
      unsigned long long t = 0;
      if (!refs) {
        // Nobody else is left to run the remaining tasks: ask the host for workers (its monitor
        // launches them on the allowed SMs), at most every 200 us.
        t = globaltimer();
        const unsigned h = vload(&L.slot->heard);
        if (stranded_since == 0 || h != s.heard) stranded_since = t;  // (re)start the grace: the host answered
        s.heard = h;
        if (last_signal == 0 || t - last_signal > 200000ull) {
          last_signal = t;
          __threadfence_system();
          atomicAdd(L.strand_seq, 1u);
        }
      } else {
        stranded_since = 0;  // workers are on it
      }
      const bool here = allowed(L, s);
      if (!here) drop_rank(L, s);
      const bool spill = !here && stranded_since != 0 && t - stranded_since >= L.strand_grace_ns && any_allowed(L);
      if (here || spill) {
        atomicSub(&L.slot->exited, 1u);
        s.est = L.base + vload(&L.slot->next);
        s.cur = s.end = 0;
        s.given = s.since = 0;
        s.k = 1;
        s.pending = true;
        s.last_check = clock64();
        if (spill) {
          // A spill takes its one range now; none left (taken meanwhile): back to the anchor's loop.
          if (!claim(L, s, false)) {
            atomicAdd(&L.slot->exited, 1u);
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

}  // namespace detail

// What the task body needs between two consecutive tasks of one worker (an optional hint of the generated
// code; the default is always correct):
// - TaskSync::block (default): a block-wide barrier. The body may use __shared__ memory, block barriers,
//   warp-synchronous intrinsics: task i + 1 starts only after every thread of the block finished task i.
// - TaskSync::none: nothing. Valid only when no thread's work in a task depends on another thread's work
//   in the same task or in the previous one through anything but global memory written before the launch:
//   no __shared__ memory (static or dynamic), no __syncthreads*/bar/cooperative-groups block or grid
//   sync, no warp-synchronous intrinsics (__shfl*, __ballot/__any/__all/__match/__reduce*_sync,
//   __syncwarp, cooperative-groups tiles), no __threadfence_block-based communication. Each thread then
//   runs its part of consecutive tasks back to back (warps drift apart within a run of tasks, as the
//   warps of different blocks do in the original); the block still meets between runs (every few to
//   ~64 tasks, and at every check of the SM's cap), so yield and exactly-once are unchanged.
// - TaskSync::parked: for a body whose threads may return before a block barrier (a thread-dependent
//   `return` followed by `__syncthreads()`; docs/ptb-transform.md, "Parking"). Every block barrier of the
//   body must be one of the task barriers below (ptb-transform rewrites them). A thread that leaves the
//   task (returns, or finishes it) parks: it arrives at barrier 0 with "done" until an arrival of the
//   whole block says "done", so it meets every barrier the rest of the task still passes, and the block
//   leaves the task together. That last arrival is a barrier of the whole block, so no other barrier is
//   needed between tasks. Only for whole-block workers (run_tasks), not for fused slots.
enum class TaskSync { block, none, parked };
#define PTB_HAS_TASK_SYNC 1
#define PTB_HAS_TASK_PARKING 1

namespace detail {
// One arrival at barrier 0 in a task of a parking body, reporting `not_done`; returns whether any thread
// of the block reported "not done" in this barrier. barrier.red without .aligned: the threads of one warp
// may arrive at different barrier instructions (the body's and the park loop's), which the aligned forms
// (bar.sync, bar.red, i.e. __syncthreads and __syncthreads_or) do not allow. One reduction operator (.or)
// for every barrier of the task: bar.red must not be mixed with other forms on the same barrier.
__device__ __forceinline__ bool task_barrier(bool not_done) {
  unsigned r;
  asm volatile("{ .reg .pred p, q; setp.ne.u32 p, %1, 0; barrier.red.or.pred q, 0, p; selp.u32 %0, 1, 0, q; }"
               : "=r"(r) : "r"(static_cast<unsigned>(not_done)) : "memory");
  return r != 0;
}
// A thread that left the task waits here until every thread of the block has left it.
__device__ __forceinline__ void task_park() {
  while (task_barrier(false)) {
  }
}
}  // namespace detail

// The block barriers of a parking task body (TaskSync::parked), as ptb-transform writes them:
// __syncthreads() -> task_sync(), __barrier_sync(0) -> task_barrier_sync(0), a thread_block's sync() or
// cooperative_groups::sync(block) -> task_group_sync(block), __syncthreads_count/_and/_or(p) ->
// task_sync_count/_and/_or(p). Each is met by the threads that still run the task and by the parked ones;
// the counting forms count the threads that still run it (in the original kernel: the threads that have
// not exited).
__device__ __forceinline__ void task_sync() { (void)detail::task_barrier(true); }
__device__ __forceinline__ void task_barrier_sync(unsigned) { task_sync(); }  // only ever called with 0
template <class Group>
__device__ __forceinline__ void task_group_sync(const Group&) { task_sync(); }
// Two task barriers and a shared counter that only grows: the count is the difference of two reads. The
// first read comes before the first barrier, after which the adds start; the second after the second
// barrier, before which every add is done; the next call's adds come after its own first barrier, which
// this thread reaches after its second read. So any start value works (no initialization), and the
// parked threads see two ordinary task barriers.
__device__ __forceinline__ int task_sync_count(int pred) {
  __shared__ unsigned ptb_task_count_;
  const unsigned before = detail::vload(&ptb_task_count_);
  task_sync();
  if (pred) atomicAdd(&ptb_task_count_, 1u);
  task_sync();
  return static_cast<int>(detail::vload(&ptb_task_count_) - before);
}
__device__ __forceinline__ int task_sync_and(int pred) { return task_sync_count(!pred) == 0; }
__device__ __forceinline__ int task_sync_or(int pred) { return task_sync_count(pred != 0) != 0; }

// The first parameter of the PTB clone of a constructor that reads blockIdx/gridDim (ptb-transform,
// docs/generated-code.md): a constructor cannot be renamed, so its clone is an overload that the
// generated code selects by passing `::ptb::VirtualBlock{}` first.
struct VirtualBlock {};

// __syncthreads() and its reducing forms over one slot's threads (named barrier Bar, Threads threads).
template <unsigned Bar, unsigned Threads>
__device__ __forceinline__ void bar_sync() {
  asm volatile("bar.sync %0, %1;" ::"n"(Bar), "n"(Threads) : "memory");
}
template <unsigned Bar, unsigned Threads>
__device__ __forceinline__ int bar_red_popc(int pred) {
  int r;
  asm volatile("{ .reg .pred p; setp.ne.s32 p, %1, 0; bar.red.popc.u32 %0, %2, %3, p; }"
               : "=r"(r) : "r"(pred), "n"(Bar), "n"(Threads) : "memory");
  return r;
}
template <unsigned Bar, unsigned Threads>
__device__ __forceinline__ int bar_red_and(int pred) {
  int r;
  asm volatile("{ .reg .pred p, q; setp.ne.s32 p, %1, 0; bar.red.and.pred q, %2, %3, p; selp.s32 %0, 1, 0, q; }"
               : "=r"(r) : "r"(pred), "n"(Bar), "n"(Threads) : "memory");
  return r;
}
template <unsigned Bar, unsigned Threads>
__device__ __forceinline__ int bar_red_or(int pred) {
  int r;
  asm volatile("{ .reg .pred p, q; setp.ne.s32 p, %1, 0; bar.red.or.pred q, %2, %3, p; selp.s32 %0, 1, 0, q; }"
               : "=r"(r) : "r"(pred), "n"(Bar), "n"(Threads) : "memory");
  return r;
}

namespace detail {

// What a worker keeps in shared memory: the run published by its leader (entry r & 1 before barrier r)
// and the leader's state. In shared memory, not registers: registers held across the task body would be
// allocated to every thread and cut the twin's occupancy below the original's.
struct WorkerShared {
  uint4 next[2];
  Leader state;
  unsigned rejoin;
  bool joined;
};

// The threads that form one worker, and how they meet.
// The whole thread block (a PTB twin): barrier 0, leader thread (0,0,0), worker blockIdx.x.
struct WholeBlock {
  static constexpr bool kBarrierZero = true;  // meets at barrier 0 with every thread of the block
  __device__ __forceinline__ bool leader() const { return threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0; }
  __device__ __forceinline__ void sync() const { __syncthreads(); }
  __device__ __forceinline__ unsigned worker() const { return blockIdx.x; }
};
// One slot of a fused kernel: Threads consecutive threads (a multiple of 32) that meet at named barrier
// Bar (1..15); `local` is the thread's index within the slot.
template <unsigned Bar, unsigned Threads>
struct SlotGroup {
  static_assert(Bar >= 1 && Bar <= 15, "named barrier ids are 1..15 (0 is __syncthreads)");
  static_assert(Threads % 32 == 0 && Threads > 0 && Threads <= 1024, "a slot is a whole number of warps");
  static constexpr bool kBarrierZero = false;
  unsigned local, worker_;
  __device__ __forceinline__ bool leader() const { return local == 0; }
  __device__ __forceinline__ void sync() const { bar_sync<Bar, Threads>(); }
  __device__ __forceinline__ unsigned worker() const { return worker_; }
};

// The task loop of one worker (every thread of the group calls it once). Runs task(blockIdx, gridDim)
// for each task the worker gets; returns when the worker must leave.
template <TaskSync Sync, class Group, class Task>
__device__ __forceinline__ void task_loop(const Group& group, const Launch& launch, WorkerShared& sh, Task&& task) {
  static_assert(Sync != TaskSync::parked || Group::kBarrierZero, "parked tasks meet at barrier 0: whole blocks only");
  // The leader publishes a run of consecutive tasks, (x, y, z) of the first and the count, in entry r & 1
  // before barrier r; every thread reads it after the barrier and walks the run with its own copy of the
  // coordinates. Entry r & 1 is written again only before barrier r + 2, which every thread passes
  // after its read. Within a run: one barrier between consecutive tasks (TaskSync::block) or none; the
  // barrier that publishes the next run also separates the run's last task from the next one. With
  // TaskSync::parked every thread parks after the task body, and the park's last barrier, which the whole
  // block passes together, separates the task from the next one.
  const bool leader = group.leader();
#ifdef PTB_DEBUG_STAMPS
  if (leader) ptb_debug_stamp(0, group.worker());
#endif
  if (leader) {
    Leader& s = sh.state;
    s.tprev = s.idprev = 0;
    s.sm = smid() % kMaxSm;
    s.rank = 0;
    s.worker = group.worker();
    s.ranked = s.tracing = s.spill = false;
    s.stranded_since = 0;
    s.heard = 0;
    s.pending = true;
    s.est = launch.base;
    s.cur = s.end = 0;
    s.given = 0;
    s.rate = 0;
    s.k = 0;      // read the cap before the first task (since >= k)
    s.since = 0;
    s.last_check = clock64();
    bool joined = true;
    if (launch.flags & kResume) {
      // Resume workers on SMs the policy does not allow leave without touching the slot.
      const unsigned cap = vload(launch.caps + s.sm);
      atomicAdd(&launch.slot->heard, 1u);  // the host answered (a stale add to a reused slot only delays a spill)
      joined = cap != 0 && join(launch);
    } else {
      // One store, by worker 0, not one per worker: every check reads this line (measured: -1 point on
      // 128-thread blocks, 2112 workers). Resume workers that come before it stay out, which costs
      // nothing (the original workers run the launch); it lands before worker 0 leaves, so before a close.
      if (s.worker == 0) vstore(&launch.slot->running, 1u);
      if (launch.first) {
        // Static first chunk (the host saw every SM allowed at launch): no claim at start. The cap is
        // still read before the first task: a worker may start late, after a yield.
        s.cur = static_cast<unsigned long long>(s.worker) * launch.first;
        s.end = s.cur + launch.first;
        if (s.end > launch.ntasks) s.end = launch.ntasks;
      }
    }
    sh.joined = joined;
  }
  const dim3 grid(launch.gx, launch.gy, launch.gz);
  for (unsigned r = 0;; ++r) {
    if (leader) {
      uint4 v = make_uint4(0, 0, 0, 0);
      if (sh.joined) {
        const unsigned go = next_run(launch, sh.state);
        if (go) {
          const uint3 c = coords(launch, sh.state.cur);
          v = make_uint4(c.x, c.y, c.z, go);
        }
      }
      sh.next[r & 1] = v;
#ifdef PTB_DEBUG_STAMPS
      if (r == 0) ptb_debug_stamp(1, group.worker());
      if (!v.w) ptb_debug_stamp(2, group.worker());
#endif
    }
    group.sync();
    const uint4 v = sh.next[r & 1];
    if (!v.w) {
      // Every thread has finished every task this worker ran.
      if (leader) sh.rejoin = sh.joined && leave(launch, sh.state);
      group.sync();
      if (!sh.rejoin) break;
      continue;
    }
    unsigned x = v.x, y = v.y, z = v.z;
    for (unsigned j = v.w;;) {
      task(make_uint3(x, y, z), grid);
      if constexpr (Sync == TaskSync::parked) task_park();
      if (--j == 0) break;
      if (++x == launch.gx) {
        x = 0;
        if (++y == launch.gy) {
          y = 0;
          ++z;
        }
      }
      if constexpr (Sync == TaskSync::block) group.sync();
    }
  }
}

}  // namespace detail

// Every thread of the worker block calls it once. Runs task(blockIdx, gridDim) for each task the worker
// gets, with one block-wide barrier between consecutive tasks (Sync == TaskSync::block; with
// TaskSync::parked, the park after each task); returns when the worker must leave.
template <TaskSync Sync = TaskSync::block, class Task>
__device__ __forceinline__ void run_tasks(const Launch& launch, Task&& task) {
  __shared__ detail::WorkerShared ptb_worker_;
  detail::task_loop<Sync>(detail::WholeBlock{}, launch, ptb_worker_, static_cast<Task&&>(task));
}

// ---- fused kernels (fuse-kernels; docs/fuse-kernels.md) ----
// A fused kernel's block holds slots: consecutive, warp-aligned thread ranges, each a worker of one of
// the fused kernels' launches. Slot i meets at named barrier i + 1 (the hardware has 16; 0 stays
// __syncthreads), so at most 15 slots.
constexpr unsigned kMaxFusedSlots = 15;
// Where each slot's dynamic shared memory starts in the fused block's dynamic shared memory (bytes).
struct FusedShared {
  unsigned offset[kMaxFusedSlots];
};
using SlotShared = detail::WorkerShared;

// Every thread of slot (Bar - 1) calls it once: the task loop of one worker of `launch` made of the
// slot's Threads threads; `local` is the thread's index in the slot, `worker` the worker's index among
// the launch's workers (fused block * slots of this kernel + the slot's rank among them).
template <TaskSync Sync, unsigned Bar, unsigned Threads, class Task>
__device__ __forceinline__ void run_slot_tasks(const Launch& launch, SlotShared& shared, unsigned local, unsigned worker,
                                               Task&& task) {
  detail::task_loop<Sync>(detail::SlotGroup<Bar, Threads>{local, worker}, launch, shared, static_cast<Task&&>(task));
}

// The thread's index within its slot's original block shape (bx, by, *) from its linear index there.
__device__ __forceinline__ uint3 slot_thread_index(unsigned local, unsigned bx, unsigned by) {
  const unsigned q = local / bx;
  return make_uint3(local - q * bx, q % by, q / by);
}

// What cooperative_groups::this_thread_block() gives in a slot: the slot's threads as a group (the fuser
// rewrites this_thread_block() to slot_block() there). sync() is the slot's named barrier;
// cooperative_groups::sync(g) works too (it calls g.sync()). group_index() is the task's blockIdx.
template <unsigned Bar, unsigned Threads>
struct SlotBlock {
  uint3 tidx, bidx;
  dim3 bdim;
  __device__ __forceinline__ void sync() const { bar_sync<Bar, Threads>(); }
  __device__ __forceinline__ unsigned long long num_threads() const { return Threads; }
  __device__ __forceinline__ unsigned long long size() const { return Threads; }
  __device__ __forceinline__ unsigned long long thread_rank() const {
    return (static_cast<unsigned long long>(tidx.z) * bdim.y + tidx.y) * bdim.x + tidx.x;
  }
  __device__ __forceinline__ dim3 group_index() const { return dim3(bidx.x, bidx.y, bidx.z); }
  __device__ __forceinline__ dim3 thread_index() const { return dim3(tidx.x, tidx.y, tidx.z); }
  __device__ __forceinline__ dim3 dim_threads() const { return bdim; }
  __device__ __forceinline__ dim3 group_dim() const { return bdim; }
};
template <unsigned Bar, unsigned Threads>
__device__ __forceinline__ SlotBlock<Bar, Threads> slot_block(uint3 thread_idx, dim3 block_dim, uint3 block_idx) {
  return SlotBlock<Bar, Threads>{thread_idx, block_idx, block_dim};
}

}  // namespace ptb

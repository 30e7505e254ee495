// ptb/device.cuh: the device side of the PTB runtime: per-launch control block, the task loop.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>
#include <cstdint>

namespace ptb {
namespace detail {

constexpr unsigned kMaxSm = 256;          // %smid values handled (H100: 132); larger ids share caps modulo
constexpr unsigned kRetCap = 1024;        // nodes for handed-back ranges, per launch
constexpr unsigned kMaxChunk = 127;       // largest range (7 bits in a packed range); Launch::max_chunk <= it
constexpr unsigned kAnyGen = 0xffffffffu; // resume workers of a captured launch: join any running replay
constexpr unsigned long long kMaxTasks = 1ull << 56;  // ranges are packed as (begin << 7 | length)
// Default tuning (ptb::Tuning): a worker re-reads its SM's cap after a task once about check_cycles
// clock cycles (16384: ~8 us at 1.98 GHz) passed since the last read; claims take at most max_chunk tasks
// and about chunk_cycles of work; each original worker starts on a static chunk of first_chunk tasks.
constexpr unsigned kDefaultCheckCycles = 16384;
constexpr unsigned kDefaultMaxChunk = 64;
constexpr unsigned kDefaultFirstChunk = 4;
constexpr unsigned kDefaultChunkCycles = 65536;

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
struct alignas(128) Slot {
  unsigned long long next;          // dynamic claims: tasks [base + next, ...) are unclaimed
  unsigned long long pad0[15];
  unsigned long long state;         // generation << 32 | resume workers registered
  unsigned long long rhead;         // stack of handed-back ranges: tag << 32 | node index + 1
  unsigned long long fhead;         // stack of free nodes (same encoding)
  unsigned exited;                  // original workers that left
  unsigned running;                 // 1 while the launch's original workers run
  unsigned nused;                   // nodes taken from node[] (fresh ones)
  unsigned pad1[23];
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

// State of the worker's leader thread (thread 0,0,0), kept in shared memory. The per-task fast path
// only touches Fast (one 16-byte word); the rest is read when a range ends or a check is due.
struct Fast {
  unsigned go;       // tasks the fast path may still start before the slow path runs
  unsigned x, y, z;  // coordinates of the next task
};
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
  bool ranked, tracing;
  bool pending;                 // handed-back ranges were seen at the last check
};

__device__ __forceinline__ void set_coords(const Launch& L, unsigned long long id, Fast& f) {
  if (L.ntasks <= (1ull << 32)) {
    const unsigned i = static_cast<unsigned>(id);
    const unsigned q = i / L.gx;
    f.x = i - q * L.gx;
    f.y = q % L.gy;
    f.z = q / L.gy;
  } else {
    const unsigned long long q = id / L.gx;
    f.x = static_cast<unsigned>(id - q * L.gx);
    f.y = static_cast<unsigned>(q % L.gy);
    f.z = static_cast<unsigned>(q / L.gy);
  }
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
__device__ __forceinline__ bool ranges_pending(const Slot* sl) {
  return static_cast<unsigned>(vload(&sl->rhead)) != 0;
}
// Hand a claimed-but-unstarted range back. False if no node is left (the caller keeps the range).
__device__ inline bool push_range(Slot* sl, unsigned long long b, unsigned long long e) {
  unsigned idx;
  if (!stack_pop(&sl->fhead, sl->node, idx)) {
    if (vload(&sl->nused) >= kRetCap) return false;
    idx = atomicAdd(&sl->nused, 1u);
    if (idx >= kRetCap) return false;
  }
  vstore(&sl->node[idx].range, (b << 7) | (e - b));
  __threadfence();
  stack_push(&sl->rhead, sl->node, idx);
  return true;
}
__device__ inline bool pop_range(Slot* sl, unsigned long long& b, unsigned long long& e) {
  unsigned idx;
  if (!stack_pop(&sl->rhead, sl->node, idx)) return false;
  const unsigned long long v = vload(&sl->node[idx].range);
  b = v >> 7;
  e = b + (v & 127);
  stack_push(&sl->fhead, sl->node, idx);
  return true;
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
      r.worker = blockIdx.x;
      r.tag = L.trace.tag;
      r.pad = 0;
      L.trace.recs[i] = r;
    }
  }
}

// Claim the next range: handed-back ranges first, then a guided chunk of the counter.
__device__ __forceinline__ bool claim(const Launch& L, Leader& s, Fast& f) {
  unsigned long long b, e;
  if (s.pending) {
    if (pop_range(L.slot, b, e)) {
      s.cur = b;
      s.end = e;
      set_coords(L, b, f);
      return true;
    }
    s.pending = false;
  }
  // Guided size from the counter as last seen (a hint only: the atomic decides).
  unsigned long long c = s.est < L.ntasks ? (L.ntasks - s.est) / (4ull * L.workers) : 1;
  if (L.chunk_cycles && s.rate) {
    // No more tasks than ran in chunk_cycles lately. A worker that the warp schedulers starve (a
    // persistent block keeps its age) then holds little unstarted work.
    const unsigned long long t = static_cast<unsigned long long>(s.rate) * L.chunk_cycles / L.check_cycles;
    if (c > t) c = t;
  }
  c = c < 1 ? 1 : (c > L.max_chunk ? L.max_chunk : c);
  b = L.base + atomicAdd(&L.slot->next, c);
  s.est = b + c;
  if (b >= L.ntasks) {
    // Counter exhausted: take a range handed back since the last check, if any, before leaving (else
    // the anchor would be left to run them alone).
    if (ranges_pending(L.slot) && pop_range(L.slot, b, e)) {
      s.cur = b;
      s.end = e;
      set_coords(L, b, f);
      return true;
    }
    return false;
  }
  s.cur = b;
  s.end = b + c < L.ntasks ? b + c : L.ntasks;
  set_coords(L, b, f);
  return true;
}

__device__ __forceinline__ bool exhausted(const Launch& L) { return L.base + vload(&L.slot->next) >= L.ntasks; }

// Put the slot back to rest. Only the last original worker calls it, when every original worker has
// left, no resume worker is registered, no range is handed back and the counter is exhausted: then every
// task has run. False (nothing changed) if a resume worker got in meanwhile.
__device__ inline bool try_close(const Launch& L) {
  Slot* sl = L.slot;
  vstore(&sl->running, 0u);  // resume workers that have not registered yet stay out from now on
  __threadfence();
  const unsigned long long w = vload(&sl->state);
  const unsigned long long nw = ((((w >> 32) + 1) & 0x7fffffffull) << 32);
  if ((w & 0xffffffffull) != 0 || atomicCAS(&sl->state, w, nw) != w) {
    vstore(&sl->running, 1u);
    return false;
  }
  __threadfence();
  if (ranges_pending(sl) || !exhausted(L)) {  // one got in, handed a range back and left: undo
    atomicAdd(&sl->state, w - nw);  // generation back; keeps any transient count of a failed join
    __threadfence();
    vstore(&sl->running, 1u);
    return false;
  }
  vstore(&sl->next, 0ull);
  vstore(&sl->rhead, 0ull);
  vstore(&sl->fhead, 0ull);
  vstore(&sl->nused, 0u);
  vstore(&sl->exited, 0u);
  __threadfence();
  if (!(L.flags & kCaptured)) vstore(L.free_flag, 0u);
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

// The leader's slow path, when the fast path has no task left to start (f.go == 0): account for the
// tasks the fast path started, read the SM's cap when a check is due (about every check_cycles), claim a
// new range when this one is used up. True: f.go > 0 and f.x/y/z is the next task; false: stop.
__device__ __forceinline__ bool slow(const Launch& L, Leader& s, Fast& f) {
  s.cur += s.given;
  s.since += s.given;
  s.given = 0;
  if (L.trace.recs != nullptr) trace_end(L, s, globaltimer());
  if (s.since >= s.k) {
    // Tasks until the next check: as many as took check_cycles since the last one, at most twice the
    // last count (so a change to longer tasks is noticed within a few of them), 1 after no task.
    const long long now = clock64(), el = now - s.last_check;
    long long k = s.since && el > 0 ? static_cast<long long>(L.check_cycles) * s.since / el : 1;
    if (s.since && el > 0) s.rate = k < 1 ? 1u : (k > (1 << 20) ? (1u << 20) : static_cast<unsigned>(k));
    if (k > 2ll * s.k) k = 2ll * s.k;
    s.k = k < 1 ? 1u : (k > 1024 ? 1024u : static_cast<unsigned>(k));
    s.last_check = now;
    s.since = 0;
    // Is this worker still allowed on its SM? If not, hand the rest of its range back and stop (if no
    // node is left for it, it keeps the range, checks before each task and stops at its end).
    const unsigned long long rh = vload(&L.slot->rhead);  // both loads in flight at once
    const unsigned cap = vload(L.caps + s.sm);
    s.pending = static_cast<unsigned>(rh) != 0;
    if (!allowed_by(L, s, cap)) {
      s.k = 1;
      if (s.cur < s.end && push_range(L.slot, s.cur, s.end)) s.cur = s.end;
      if (s.cur >= s.end) return false;
    }
  }
  if (s.cur >= s.end && !claim(L, s, f)) return false;
  unsigned long long go = s.end - s.cur;
  if (go > s.k - s.since) go = s.k - s.since;
  if (L.trace.recs != nullptr) {
    go = 1;
    s.tracing = true;
    s.tprev = globaltimer();
    s.idprev = s.cur;
  }
  s.given = static_cast<unsigned>(go);
  f.go = s.given;
  return true;
}

// The leader, after the whole block finished its last task: leave. The last original worker may leave
// only when every task is done (the user's stream waits on this kernel): until then it stays as the
// anchor, works again whenever its SM allows it (returns true: rejoin), and asks the host for new
// workers when nobody else is left to run the remaining tasks.
__device__ inline bool leave(const Launch& L, Leader& s) {
  drop_rank(L, s);
  __threadfence();
  if (L.flags & kResume) {
    atomicAdd(&L.slot->state, ~0ull);  // one registered resume worker less
    return false;
  }
  if (atomicAdd(&L.slot->exited, 1u) != L.workers - 1) return false;
  unsigned ns = 256;
  unsigned long long last_signal = 0;
  for (;;) {
    __threadfence();
    const bool refs = (vload(&L.slot->state) & 0xffffffffull) != 0;
    const bool work_left = ranges_pending(L.slot) || !exhausted(L);
    if (!refs && !work_left) {
      if (try_close(L)) return false;
    } else if (work_left) {
      if (!refs) {
        // Nobody else is left to run the remaining tasks: ask the host for workers (its monitor
        // launches them on the allowed SMs), at most every 200 us.
        const unsigned long long t = globaltimer();
        if (last_signal == 0 || t - last_signal > 200000ull) {
          last_signal = t;
          __threadfence_system();
          atomicAdd(L.strand_seq, 1u);
        }
      }
      if (allowed(L, s)) {
        atomicSub(&L.slot->exited, 1u);
        s.est = L.base + vload(&L.slot->next);
        s.cur = s.end = 0;
        s.given = s.since = 0;
        s.k = 1;
        s.pending = true;
        s.last_check = clock64();
        return true;
      }
      drop_rank(L, s);
    }
    __nanosleep(ns);
    if (ns < 8192) ns *= 2;
  }
}

}  // namespace detail

// Every thread of the worker block calls it once. Runs task(blockIdx, gridDim) for each task the worker
// gets, with one block-wide barrier between consecutive tasks; returns when the worker must leave.
template <class Task>
__device__ __forceinline__ void run_tasks(const Launch& launch, Task&& task) {
  // (x, y, z, run?) of the next task, double-buffered: thread 0 writes entry i & 1 before barrier i and
  // every thread reads it after; entry i & 1 is written again only before barrier i + 2, which every
  // thread passes after its read. So one barrier per task both publishes the task and separates it from
  // the previous one.
  __shared__ uint4 ptb_next_[2];
  // The leader's state lives in shared memory, not registers: registers held across the task body would
  // be allocated to every thread and cut the twin's occupancy below the original's.
  __shared__ uint4 ptb_fast_;  // detail::Fast
  __shared__ detail::Leader ptb_state_;
  __shared__ unsigned ptb_rejoin_;
  __shared__ bool ptb_joined_;
  const bool leader = threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0;
  if (leader) {
    detail::Leader& s = ptb_state_;
    detail::Fast f{0, 0, 0, 0};
    s.tprev = s.idprev = 0;
    s.sm = detail::smid() % detail::kMaxSm;
    s.rank = 0;
    s.ranked = s.tracing = false;
    s.pending = true;
    s.est = launch.base;
    s.cur = s.end = 0;
    s.given = 0;
    s.rate = 0;
    s.k = 0;      // read the cap before the first task (since >= k)
    s.since = 0;
    s.last_check = clock64();
    bool joined = true;
    if (launch.flags & detail::kResume) {
      // Resume workers on SMs the policy does not allow leave without touching the slot.
      const unsigned cap = detail::vload(launch.caps + s.sm);
      joined = cap != 0 && detail::join(launch);
    } else {
      detail::vstore(&launch.slot->running, 1u);
      if (launch.first) {
        // Static first chunk (the host saw every SM allowed at launch): no claim at start. The cap is
        // still read before the first task: a worker may start late, after a yield.
        s.cur = static_cast<unsigned long long>(blockIdx.x) * launch.first;
        s.end = s.cur + launch.first;
        detail::set_coords(launch, s.cur, f);
      }
    }
    ptb_joined_ = joined;
    ptb_fast_ = make_uint4(f.go, f.x, f.y, f.z);
  }
  const dim3 grid(launch.gx, launch.gy, launch.gz);
  for (unsigned i = 0;; ++i) {
    if (leader) {
      uint4 v = make_uint4(0, 0, 0, 0);
      uint4 fu = ptb_fast_;
      bool run = fu.x != 0;
      if (!run && ptb_joined_) {
        detail::Fast f{fu.x, fu.y, fu.z, fu.w};
        run = detail::slow(launch, ptb_state_, f);
        fu = make_uint4(f.go, f.x, f.y, f.z);
      }
      if (run) {
        v = make_uint4(fu.y, fu.z, fu.w, 1u);
        // advance to the next task's coordinates
        fu.x -= 1;
        if (++fu.y == launch.gx) {
          fu.y = 0;
          if (++fu.z == launch.gy) {
            fu.z = 0;
            ++fu.w;
          }
        }
      }
      ptb_fast_ = fu;
      ptb_next_[i & 1] = v;
    }
    __syncthreads();
    const uint4 v = ptb_next_[i & 1];
    if (!v.w) {
      // Every thread has finished every task this worker ran.
      if (leader) {
        ptb_rejoin_ = ptb_joined_ && detail::leave(launch, ptb_state_);
        if (ptb_rejoin_) ptb_fast_ = make_uint4(0, 0, 0, 0);
      }
      __syncthreads();
      if (!ptb_rejoin_) break;
      continue;
    }
    task(make_uint3(v.x, v.y, v.z), grid);
  }
}

}  // namespace ptb

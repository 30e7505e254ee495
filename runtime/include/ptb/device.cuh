// ptb/device.cuh: the device side of the PTB runtime: per-launch control block, the task loop.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>
#include <cstdint>

namespace ptb {
namespace detail {

constexpr unsigned kMaxSm = 256;          // %smid values handled (H100: 132); larger ids share caps modulo
constexpr unsigned kRetCap = 1024;        // handed-back ranges a launch can hold at once
constexpr unsigned kMaxChunk = 16;        // most tasks claimed by one atomic
constexpr unsigned kAnyGen = 0xffffffffu; // resume workers of a captured launch: join any running replay
constexpr unsigned long long kMaxTasks = 1ull << 58;  // ranges are packed as (begin << 5 | length)

// Launch flags
constexpr unsigned kCaptured = 1u;  // slot belongs to a captured graph node: reset, never freed
constexpr unsigned kResume = 2u;    // these workers join a running launch (not its original workers)

// One trace record per task.
struct TraceRec {
  unsigned long long task;
  unsigned long long start, end;  // %globaltimer, ns
  unsigned sm, worker;
};
struct TraceBuf {
  TraceRec* recs;
  unsigned long long* count;  // records written (may exceed cap: the rest are dropped)
  unsigned long long cap;
};

// Per-launch control block in device memory, from a pool allocated once. At rest every field is 0 except
// the generation in `state`; the last worker of a launch puts it back to rest (see docs/runtime.md).
struct alignas(128) Slot {
  unsigned long long next;          // next unclaimed task id (claimed in chunks by atomicAdd)
  unsigned long long pad0[15];
  unsigned long long done;          // tasks completed and flushed
  unsigned long long state;         // generation << 32 | resume workers registered
  unsigned exited;                  // original workers that left
  unsigned running;                 // 1 while the launch's original workers run
  unsigned lock;                    // protects ret[] / top
  unsigned top;                     // entries in ret[]
  unsigned long long pad1[12];
  unsigned sm_live[kMaxSm];         // workers per SM (rank source for the per-SM cap)
  unsigned long long ret[kRetCap];  // handed-back ranges, begin << 5 | length (1..31)
};

}  // namespace detail

// Everything a worker needs; built by the host per launch, passed by value to the twin kernel.
struct Launch {
  detail::Slot* slot;
  const unsigned char* caps;        // per-%smid cap on workers (0: SM not allowed), device memory
  unsigned* free_flag;              // host-mapped word: the last worker writes 0 when the slot is free
  unsigned* strand_seq;             // host-mapped word: bumped when a paused launch needs new workers
  detail::TraceBuf trace;           // trace.recs == nullptr: no trace
  unsigned long long ntasks;        // gridDim.x * y * z of the original launch
  unsigned gx, gy, gz;              // original grid
  unsigned workers;                 // original workers launched (exit count of the last one)
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

// State of the worker's leader thread (thread 0,0,0): the claimed range and its position.
struct Leader {
  unsigned long long cur, end;  // tasks [cur, end) claimed and not yet started
  unsigned long long est;       // last claim's start: estimate of the counter for guided chunks
  unsigned long long ran;       // tasks finished since the last flush into slot->done
  unsigned long long tprev;     // trace: start of the task in progress
  unsigned long long idprev;
  unsigned x, y, z;             // coordinates of task `cur`
  unsigned sm, rank;
  bool ranked, tracing;
};

__device__ __forceinline__ void set_coords(const Launch& L, Leader& s) {
  if (s.cur < (1ull << 32) && L.ntasks <= (1ull << 32)) {
    const unsigned id = static_cast<unsigned>(s.cur);
    const unsigned q = id / L.gx;
    s.x = id - q * L.gx;
    s.y = q % L.gy;
    s.z = q / L.gy;
  } else {
    const unsigned long long q = s.cur / L.gx;
    s.x = static_cast<unsigned>(s.cur - q * L.gx);
    s.y = static_cast<unsigned>(q % L.gy);
    s.z = static_cast<unsigned>(q / L.gy);
  }
}
__device__ __forceinline__ void advance(const Launch& L, Leader& s) {
  ++s.cur;
  if (++s.x == L.gx) {
    s.x = 0;
    if (++s.y == L.gy) {
      s.y = 0;
      ++s.z;
    }
  }
}

__device__ __forceinline__ void lock(Slot* sl) {
  unsigned ns = 32;
  while (atomicCAS(&sl->lock, 0u, 1u) != 0u) {
    __nanosleep(ns);
    if (ns < 1024) ns *= 2;
  }
  __threadfence();
}
__device__ __forceinline__ void unlock(Slot* sl) {
  __threadfence();
  atomicExch(&sl->lock, 0u);
}
// Hand a claimed-but-unstarted range back. False if the list is full (the caller keeps the range).
__device__ inline bool push_range(Slot* sl, unsigned long long b, unsigned long long e) {
  lock(sl);
  const unsigned t = sl->top;
  const bool ok = t < kRetCap;
  if (ok) {
    sl->ret[t] = (b << 5) | (e - b);
    vstore(&sl->top, t + 1);
  }
  unlock(sl);
  return ok;
}
__device__ inline bool pop_range(Slot* sl, unsigned long long& b, unsigned long long& e) {
  if (vload(&sl->top) == 0) return false;
  lock(sl);
  const unsigned t = sl->top;
  bool ok = t > 0;
  if (ok) {
    const unsigned long long v = sl->ret[t - 1];
    vstore(&sl->top, t - 1);
    b = v >> 5;
    e = b + (v & 31);
  }
  unlock(sl);
  return ok;
}

__device__ __forceinline__ unsigned cap_of(const Launch& L, unsigned sm) { return vload(L.caps + sm); }

// Take a rank among this launch's workers on this SM; false (rank given back) if over the SM's cap.
__device__ __forceinline__ bool take_rank(const Launch& L, Leader& s) {
  const unsigned cap = cap_of(L, s.sm);
  if (cap == 0) return false;
  s.rank = atomicAdd(&L.slot->sm_live[s.sm], 1u);
  if (s.rank < cap) {
    s.ranked = true;
    return true;
  }
  atomicSub(&L.slot->sm_live[s.sm], 1u);
  return false;
}
__device__ __forceinline__ void drop_rank(const Launch& L, Leader& s) {
  if (s.ranked) {
    atomicSub(&L.slot->sm_live[s.sm], 1u);
    s.ranked = false;
  }
}
__device__ __forceinline__ void flush_done(const Launch& L, Leader& s) {
  if (s.ran) {
    __threadfence();
    atomicAdd(&L.slot->done, s.ran);
    s.ran = 0;
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
      L.trace.recs[i] = r;
    }
  }
}

// Claim the next range: handed-back ranges first, then a guided chunk of the counter.
__device__ __forceinline__ bool claim(const Launch& L, Leader& s) {
  unsigned long long b, e;
  if (pop_range(L.slot, b, e)) {
    s.cur = b;
    s.end = e;
    set_coords(L, s);
    return true;
  }
  if (s.est >= L.ntasks) return false;
  unsigned long long c = (L.ntasks - s.est) / (4ull * L.workers);
  c = c < 1 ? 1 : (c > kMaxChunk ? kMaxChunk : c);
  b = atomicAdd(&L.slot->next, c);
  s.est = b + c * L.workers;  // others claim meanwhile: assume everyone took a chunk as large
  if (b >= L.ntasks) {
    s.est = L.ntasks;
    return false;
  }
  s.cur = b;
  s.end = b + c < L.ntasks ? b + c : L.ntasks;
  set_coords(L, s);
  return true;
}

// Put the slot back to rest after the launch's last task and last worker. Only the last original worker
// calls it, after done == ntasks.
__device__ inline void close_slot(const Launch& L) {
  Slot* sl = L.slot;
  vstore(&sl->running, 0u);
  __threadfence();
  unsigned ns = 64;
  for (;;) {
    const unsigned long long w = vload(&sl->state);
    if ((w & 0xffffffffull) == 0) {
      const unsigned long long nw = (((w >> 32) + 1) & 0x7fffffffull) << 32;
      if (atomicCAS(&sl->state, w, nw) == w) break;
    } else {
      __nanosleep(ns);  // resume workers still registered: they leave at once (no task left)
      if (ns < 4096) ns *= 2;
    }
  }
  vstore(&sl->next, 0ull);
  vstore(&sl->done, 0ull);
  vstore(&sl->exited, 0u);
  __threadfence_system();
  if (!(L.flags & kCaptured)) vstore(L.free_flag, 0u);
}

// Resume workers: register in the slot while the launch still runs; false: leave without touching it.
__device__ inline bool join(const Launch& L) {
  Slot* sl = L.slot;
  for (;;) {
    const unsigned long long w = vload(&sl->state);
    if (L.gen != kAnyGen && static_cast<unsigned>(w >> 32) != L.gen) return false;
    __threadfence();
    if (vload(&sl->running) == 0) return false;
    if (vload(&sl->done) >= L.ntasks) return false;
    if (atomicCAS(&sl->state, w, w + 1) == w) return true;
  }
}

// The leader's decision before each task: true with s.x/y/z set to run task s.cur; false to stop.
__device__ __forceinline__ bool decide(const Launch& L, Leader& s) {
  const bool tr = L.trace.recs != nullptr;
  unsigned long long now = 0;
  if (tr) {
    now = globaltimer();
    trace_end(L, s, now);
  }
  // Per task: is this worker still allowed on its SM? If not, hand the rest of its range back and stop
  // (if the hand-back list is full, it keeps the range and stops at its end).
  if (s.rank >= cap_of(L, s.sm)) {
    if (s.cur < s.end && push_range(L.slot, s.cur, s.end)) s.cur = s.end;
    if (s.cur >= s.end) return false;
  } else if (s.cur >= s.end && !claim(L, s)) {
    return false;
  }
  if (tr) {
    s.tracing = true;
    s.tprev = now;
    s.idprev = s.cur;
  }
  return true;
}

// The leader, after the whole block finished its last task: account for the tasks, leave. The last
// original worker may leave only when every task is done (the user's stream waits on this kernel): until
// then it stays as the anchor, and works again whenever its SM allows it (returns true: rejoin).
__device__ inline bool leave(const Launch& L, Leader& s) {
  flush_done(L, s);
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
    if (vload(&L.slot->done) >= L.ntasks) {
      close_slot(L);
      return false;
    }
    const bool work_left = vload(&L.slot->top) != 0 || vload(&L.slot->next) < L.ntasks;
    if (work_left && take_rank(L, s)) {
      atomicSub(&L.slot->exited, 1u);
      s.est = vload(&L.slot->next);
      s.cur = s.end = 0;
      return true;
    }
    if (work_left && (vload(&L.slot->state) & 0xffffffffull) == 0) {
      // No worker left to take the remaining tasks: ask the host for new workers (its monitor launches
      // them), at most every 200 us.
      const unsigned long long t = globaltimer();
      if (t - last_signal > 200000ull) {
        last_signal = t;
        __threadfence_system();
        atomicAdd(L.strand_seq, 1u);
      }
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
  __shared__ unsigned ptb_rejoin_;
  // The leader's state lives in shared memory, not registers: registers held across the task body would
  // be allocated to every thread and cut the twin's occupancy below the original's.
  __shared__ detail::Leader ptb_state_;
  __shared__ bool ptb_joined_;
  const bool leader = threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0;
  if (leader) {
    detail::Leader& s = ptb_state_;
    s.cur = s.end = s.est = s.ran = s.tprev = s.idprev = 0;
    s.x = s.y = s.z = 0;
    s.sm = detail::smid() % detail::kMaxSm;
    s.rank = 0xffffffffu;  // not allowed until a rank is taken: leaves through the normal exit path
    s.ranked = s.tracing = false;
    bool joined = true;
    if (launch.flags & detail::kResume) {
      joined = detail::join(launch);
    } else {
      detail::vstore(&launch.slot->running, 1u);
    }
    if (joined) detail::take_rank(launch, s);
    ptb_joined_ = joined;
  }
  const dim3 grid(launch.gx, launch.gy, launch.gz);
  for (unsigned i = 0;; ++i) {
    if (leader) {
      uint4 v = make_uint4(0, 0, 0, 0);
      detail::Leader& s = ptb_state_;
      if (ptb_joined_ && detail::decide(launch, s)) {
        v = make_uint4(s.x, s.y, s.z, 1u);
        detail::advance(launch, s);
        ++s.ran;
      }
      ptb_next_[i & 1] = v;
    }
    __syncthreads();
    const uint4 v = ptb_next_[i & 1];
    if (!v.w) {
      // Every thread has finished every task this worker ran.
      if (leader) ptb_rejoin_ = ptb_joined_ && detail::leave(launch, ptb_state_);
      __syncthreads();
      if (!ptb_rejoin_) break;
      continue;
    }
    task(make_uint3(v.x, v.y, v.z), grid);
  }
}

}  // namespace ptb

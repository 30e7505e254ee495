// ptb/detail/task_loop.cuh: the task loop of one worker, and the two kinds of worker it runs for: a whole
// thread block (a PTB twin) and a fused kernel's slot.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.

// Diagnosis only: with -DPTB_DEBUG_STAMPS the task loop calls a function the program defines before
// including ptb.cuh, `__device__ void ptb_debug_stamp(int what, unsigned worker)`, at a worker's entry (0),
// when its first run is published (1), when it finds no task left (2), and after a launch's close (3,
// worker 0). bench/ptb_overhead/probe_forms.cu uses it to time the phases of a launch.
#pragma once
#include <cuda_runtime.h>

#include "../barriers.cuh"
#include "../launch_params.cuh"
#include "close.cuh"
#include "config.cuh"
#include "intrinsics.cuh"
#include "leader.cuh"

namespace ptb {

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
  static constexpr bool kBarrierZero = true; // meets at barrier 0 with every thread of the block
  __device__ __forceinline__ bool leader() const { return threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0; }
  __device__ __forceinline__ void sync() const { __syncthreads(); }
  __device__ __forceinline__ unsigned worker() const { return blockIdx.x; }
};
// One slot of a fused kernel: Threads consecutive threads (a multiple of 32) that meet at named barrier
// Bar (1..15); `local` is the thread's index within the slot.
template <unsigned _Bar, unsigned _Threads> struct SlotGroup {
  static_assert(_Bar >= 1 && _Bar <= 15, "named barrier ids are 1..15 (0 is __syncthreads)");
  static_assert(_Threads % 32 == 0 && _Threads > 0 && _Threads <= 1024, "a slot is a whole number of warps");
  static constexpr bool kBarrierZero = false;
  unsigned local, worker_;
  __device__ __forceinline__ bool leader() const { return local == 0; }
  __device__ __forceinline__ void sync() const { bar_sync<_Bar, _Threads>(); }
  __device__ __forceinline__ unsigned worker() const { return worker_; }
};

// The task loop of one worker (every thread of the group calls it once). Runs task(blockIdx, gridDim)
// for each task the worker gets; returns when the worker must leave.
template <TaskSync _Sync, class _Group, class _Task>
__device__ __forceinline__ void task_loop(const _Group& group, const Launch& launch, WorkerShared& sh, _Task&& task) {
  static_assert(_Sync != TaskSync::parked || _Group::kBarrierZero, "parked tasks meet at barrier 0: whole blocks only");
  // The leader publishes a run of consecutive tasks, (x, y, z) of the first and the count, in entry r & 1
  // before barrier r; every thread reads it after the barrier and walks the run with its own copy of the
  // coordinates. Entry r & 1 is written again only before barrier r + 2, which every thread passes
  // after its read. Within a run: one barrier between consecutive tasks (TaskSync::block) or none; the
  // barrier that publishes the next run also separates the run's last task from the next one. With
  // TaskSync::parked every thread parks where it leaves the task body (task_exit), and the park's last
  // barrier, which the whole block passes together, separates the task from the next one.
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
    s.__k = 0; // read the cap before the first task (since >= k)
    s.since = 0;
    s.last_check = clock64();
    s.thin_look = s.last_check + kThinAfterCycles;
    bool joined = true;
    if (launch.flags & kResume) {
      // Resume workers on SMs the policy does not allow leave; the launch may still be thin (it asks again).
      const unsigned cap = vload(launch.caps + s.sm);
      // The host answered (a stale add to a reused control block only delays a spill).
      atomicAdd(&launch.control->heard, 1u);
      joined = cap != 0 && join(launch);
      if (!joined && cap == 0) ask_if_thin(launch);
    } else {
      // One store, by worker 0, not one per worker: every check reads this line (measured: -1 point on
      // 128-thread blocks, 2112 workers). Resume workers that come before it stay out, which costs
      // nothing (the original workers run the launch); it lands before worker 0 leaves, so before a close.
      if (s.worker == 0) {
        vstore(&launch.control->started, static_cast<unsigned>(globaltimer() >> 10) | 1u); // (ask_if_thin)
        vstore(&launch.control->running, 1u);
      }
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
  for (unsigned __r = 0;; ++__r) {
    if (leader) {
      uint4 v = make_uint4(0, 0, 0, 0);
      if (sh.joined) {
        const unsigned go = next_run(launch, sh.state);
        if (go) {
          const uint3 c = coords(launch, sh.state.cur);
          v = make_uint4(c.x, c.y, c.z, go);
        }
      }
      sh.next[__r & 1] = v;
#ifdef PTB_DEBUG_STAMPS
      if (__r == 0) ptb_debug_stamp(1, group.worker());
      if (!v.w) ptb_debug_stamp(2, group.worker());
#endif
    }
    group.sync();
    const uint4 v = sh.next[__r & 1];
    if (!v.w) {
      // Every thread has finished every task this worker ran.
      if (leader) sh.rejoin = sh.joined && leave(launch, sh.state);
      group.sync();
      if (!sh.rejoin) break;
      continue;
    }
    unsigned x = v.x, y = v.y, z = v.z;
    for (unsigned __j = v.w;;) {
      task(make_uint3(x, y, z), grid); // a parking body parks at its own exits (task_exit)
      if (--__j == 0) break;
      if (++x == launch.gx) {
        x = 0;
        if (++y == launch.gy) {
          y = 0;
          ++z;
        }
      }
      if constexpr (_Sync == TaskSync::block) group.sync();
    }
  }
}

} // namespace detail

} // namespace ptb

// ptb/barriers.cuh: what separates a worker's tasks (TaskSync), the task barriers of a parking task body
// (task_sync and its forms), and the named barriers of a fused kernel's slots (bar_sync, bar_red_*).
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include "detail/intrinsics.cuh"

namespace ptb {

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
//   `return` followed by `__syncthreads()`; docs/user/ptb-transform.md, "Parking"). Every block barrier of the
//   body must be one of the task barriers below, and the body must leave the task through task_exit()
//   at each of its exits, each `return` and its end (ptb-transform writes both). A thread that leaves
//   the task parks there: it arrives at barrier 0 with "done" until an arrival of the whole block says
//   "done", so it meets every barrier the rest of the task still passes, and the block leaves the task
//   together. That last arrival is a barrier of the whole block, so no other barrier is needed between
//   tasks. Only for whole-block workers (run_tasks), not for fused slots.
//   Why the park is at the exit itself, not after the body: the compiler may make the threads of a warp
//   that took different paths wait for each other where the paths join (a convergence barrier at the end
//   of the body). A thread that returned early would wait there for warp-mates that wait at a task
//   barrier for it: a deadlock (H100: every parking program of the corpus hung). Parked
//   where it leaves, it arrives at barrier 0 before any such join.
enum class TaskSync { block, none, parked };
#define PTB_HAS_TASK_SYNC 1
#define PTB_HAS_TASK_PARKING 1

namespace detail {
// One arrival at barrier 0 in a task of a parking body, reporting `not_done`; returns whether any thread
// of the block reported "not done" in this barrier. barrier.red without .aligned: the threads of one warp
// may arrive at different barrier instructions (the body's and the park loop's), which the aligned forms
// (bar.sync, bar.red, i.e. __syncthreads and __syncthreads_or) do not allow. One reduction operator (.or)
// for every barrier of the task: bar.red must not be mixed with other forms on the same barrier.
// Not inlined: every arrival of every thread is then the same instruction. PTX has a thread at a
// non-aligned barrier wait for the non-exited threads of its warp; when those wait at another barrier
// instruction (a parked thread's, while its warp-mates pass the body's), that wait never ended on the
// H100 (the parking corpus programs hung with the barrier inlined at each site).
#ifdef PTB_TASK_BARRIER_INLINE
__device__ __forceinline__
#else
inline __device__ __noinline__
#endif
    bool
    task_barrier(bool not_done) {
  unsigned __r;
  asm volatile("{ .reg .pred p, q; setp.ne.u32 p, %1, 0; barrier.red.or.pred q, 0, p; selp.u32 %0, 1, 0, q; }"
               : "=r"(__r)
               : "r"(static_cast<unsigned>(not_done))
               : "memory");
  return __r != 0;
}
// A thread that left the task waits here until every thread of the block has left it.
__device__ __forceinline__ void task_park() {
  while (task_barrier(false)) {}
}
} // namespace detail

// Where a thread of a parking task body leaves the task (before each `return` of the kernel's body, and
// at its end; TaskSync::parked): it waits until every thread of the block has left the task.
__device__ __forceinline__ void task_exit() { detail::task_park(); }

// The block barriers of a parking task body (TaskSync::parked), as ptb-transform writes them:
// __syncthreads() -> task_sync(), __barrier_sync(0) -> task_barrier_sync(0), a thread_block's sync() or
// cooperative_groups::sync(block) -> task_group_sync(block), __syncthreads_count/_and/_or(p) ->
// task_sync_count/_and/_or(p). Each is met by the threads that still run the task and by the parked ones;
// the counting forms count the threads that still run it (in the original kernel: the threads that have
// not exited).
__device__ __forceinline__ void task_sync() { (void)detail::task_barrier(true); }
__device__ __forceinline__ void task_barrier_sync(unsigned) { task_sync(); } // only ever called with 0
template <class _Group> __device__ __forceinline__ void task_group_sync(const _Group&) { task_sync(); }
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

// __syncthreads() and its reducing forms over one slot's threads (named barrier Bar, Threads threads).
template <unsigned _Bar, unsigned _Threads> __device__ __forceinline__ void bar_sync() {
  asm volatile("bar.sync %0, %1;" ::"n"(_Bar), "n"(_Threads) : "memory");
}
template <unsigned _Bar, unsigned _Threads> __device__ __forceinline__ int bar_red_popc(int pred) {
  int __r;
  asm volatile("{ .reg .pred p; setp.ne.s32 p, %1, 0; bar.red.popc.u32 %0, %2, %3, p; }"
               : "=r"(__r)
               : "r"(pred), "n"(_Bar), "n"(_Threads)
               : "memory");
  return __r;
}
template <unsigned _Bar, unsigned _Threads> __device__ __forceinline__ int bar_red_and(int pred) {
  int __r;
  asm volatile("{ .reg .pred p, q; setp.ne.s32 p, %1, 0; bar.red.and.pred q, %2, %3, p; selp.s32 %0, 1, 0, q; }"
               : "=r"(__r)
               : "r"(pred), "n"(_Bar), "n"(_Threads)
               : "memory");
  return __r;
}
template <unsigned _Bar, unsigned _Threads> __device__ __forceinline__ int bar_red_or(int pred) {
  int __r;
  asm volatile("{ .reg .pred p, q; setp.ne.s32 p, %1, 0; bar.red.or.pred q, %2, %3, p; selp.s32 %0, 1, 0, q; }"
               : "=r"(__r)
               : "r"(pred), "n"(_Bar), "n"(_Threads)
               : "memory");
  return __r;
}

} // namespace ptb

// ptb/fused_slots.cuh: the device side of a fused kernel (fuse-kernels): its slots, each a worker of one
// part's launch, their task loop, thread index and block group. Launching one: fused.cuh.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include "barriers.cuh"
#include "detail/task_loop.cuh"
#include "twin_params.cuh"

namespace ptb {

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

// Register budgets (fuse-kernels --reg-budget; docs/fuse-kernels.md, "Register budgets"): every thread of
// a warpgroup (4 consecutive warps, 128 threads, aligned) runs the same one at its slots' entry, before any
// barrier. dec gives the registers above N back to the block's pool; inc waits until the pool holds enough
// to raise the warpgroup to N (the fuser checks that the budgets of all warpgroups fit the block's launch
// registers, so the decs of the other warpgroups always come). PTX setmaxnreg, sm_90a only (PTX ISA 8.0):
// on any other target these do nothing, and every warpgroup keeps the launch count.
template <unsigned N>
__device__ __forceinline__ void setmaxnreg_inc() {
  static_assert(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg takes a multiple of 8 from 24 to 256");
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
}
template <unsigned N>
__device__ __forceinline__ void setmaxnreg_dec() {
  static_assert(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg takes a multiple of 8 from 24 to 256");
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
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

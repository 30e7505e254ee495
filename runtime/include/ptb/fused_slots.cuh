// ptb/fused_slots.cuh: the device side of a fused kernel (fuse-kernels): its slots, each a worker of one
// part's launch, their task loop, thread index and block group. Launching one: fused.cuh.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include "barriers.cuh"
#include "detail/task_loop.cuh"
#include "launch_params.cuh"

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

// Every thread of slot (_Bar - 1) calls it once: the task loop of one worker of `launch` made of the
// slot's _Threads threads; `local` is the thread's index in the slot, `worker` the worker's index among
// the launch's workers (fused block * slots of this kernel + the slot's rank among them).
template <TaskSync _Sync, unsigned _Bar, unsigned _Threads, class _Task>
__device__ __forceinline__ void run_slot_tasks(const Launch& launch, SlotShared& shared, unsigned local,
                                               unsigned worker, _Task&& task) {
  detail::task_loop<_Sync>(detail::SlotGroup<_Bar, _Threads>{local, worker}, launch, shared,
                           static_cast<_Task&&>(task));
}

// Register budgets (fuse-kernels --reg-budget; docs/user/fuse-kernels.md, "Register budgets"): every thread of
// a warpgroup (4 consecutive warps, 128 threads, aligned) runs the same one at its slots' entry, before any
// barrier. dec gives the registers above _Np back to the block's pool; inc waits until the pool holds enough
// to raise the warpgroup to _Np (the fuser checks that the budgets of all warpgroups fit the block's launch
// registers, so the decs of the other warpgroups always come). PTX setmaxnreg, sm_90a only (PTX ISA 8.0):
// on any other target these do nothing, and every warpgroup keeps the launch count.
template <unsigned _Np> __device__ __forceinline__ void setmaxnreg_inc() {
  static_assert(_Np >= 24 && _Np <= 256 && _Np % 8 == 0, "setmaxnreg takes a multiple of 8 from 24 to 256");
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(_Np));
#endif
}
template <unsigned _Np> __device__ __forceinline__ void setmaxnreg_dec() {
  static_assert(_Np >= 24 && _Np <= 256 && _Np % 8 == 0, "setmaxnreg takes a multiple of 8 from 24 to 256");
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(_Np));
#endif
}

// The thread's index within its slot's original block shape (bx, by, *) from its linear index there.
__device__ __forceinline__ uint3 slot_thread_index(unsigned local, unsigned bx, unsigned by) {
  const unsigned __q = local / bx;
  return make_uint3(local - __q * bx, __q % by, __q / by);
}

// What cooperative_groups::this_thread_block() gives in a slot: the slot's threads as a group (the fuser
// rewrites this_thread_block() to slot_block() there). sync() is the slot's named barrier;
// cooperative_groups::sync(g) works too (it calls g.sync()). group_index() is the task's blockIdx.
template <unsigned _Bar, unsigned _Threads> struct SlotBlock {
  uint3 tidx, bidx;
  dim3 bdim;
  __device__ __forceinline__ void sync() const { bar_sync<_Bar, _Threads>(); }
  __device__ __forceinline__ unsigned long long num_threads() const { return _Threads; }
  __device__ __forceinline__ unsigned long long size() const { return _Threads; }
  __device__ __forceinline__ unsigned long long thread_rank() const {
    return (static_cast<unsigned long long>(tidx.z) * bdim.y + tidx.y) * bdim.x + tidx.x;
  }
  __device__ __forceinline__ dim3 group_index() const { return dim3(bidx.x, bidx.y, bidx.z); }
  __device__ __forceinline__ dim3 thread_index() const { return dim3(tidx.x, tidx.y, tidx.z); }
  __device__ __forceinline__ dim3 dim_threads() const { return bdim; }
  __device__ __forceinline__ dim3 group_dim() const { return bdim; }
};
template <unsigned _Bar, unsigned _Threads>
__device__ __forceinline__ SlotBlock<_Bar, _Threads> slot_block(uint3 thread_idx, dim3 block_dim, uint3 block_idx) {
  return SlotBlock<_Bar, _Threads>{thread_idx, block_idx, block_dim};
}

} // namespace ptb

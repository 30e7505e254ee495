// ptb/run_tasks.cuh: ptb::run_tasks, the task loop of a twin's worker (a whole thread block).
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include "barriers.cuh"
#include "detail/task_loop.cuh"
#include "launch_params.cuh"

namespace ptb {

// Every thread of the worker block calls it once. Runs task(blockIdx, gridDim) for each task the worker
// gets, with one block-wide barrier between consecutive tasks (Sync == TaskSync::block; with
// TaskSync::parked, the park where each thread leaves the task: task_exit); returns when the worker must leave.
template <TaskSync _Sync = TaskSync::block, class _Task>
__device__ __forceinline__ void run_tasks(const Launch& launch, _Task&& task) {
  __shared__ detail::WorkerShared ptb_worker_;
  detail::task_loop<_Sync>(detail::WholeBlock{}, launch, ptb_worker_, static_cast<_Task&&>(task));
}

} // namespace ptb

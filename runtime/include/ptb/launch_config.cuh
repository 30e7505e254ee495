// ptb/launch_config.cuh: ptb::LaunchConfig, a launch's grid, block, shared memory, stream and policy.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "policy.cuh"

namespace ptb {

struct LaunchConfig {
  dim3 grid, block;
  size_t shmem;
  cudaStream_t stream;
  Policy policy; // optional, per launch (empty: the stream's or the process's)
  LaunchConfig(dim3 grid_, dim3 block_, size_t shmem_ = 0, cudaStream_t stream_ = 0)
      : grid(grid_), block(block_), shmem(shmem_), stream(stream_) {}
};

} // namespace ptb

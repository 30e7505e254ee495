// A block-wise sum in a local header: BLOCK threads, one partial sum per block.
#pragma once

#ifndef BLOCK
#error "BLOCK must be defined (-DBLOCK=256: the target's compile options)"
#endif

__global__ void block_sum_kernel(const float *x, float *partial, int n) {
  __shared__ float s[BLOCK];
  int i = blockIdx.x * BLOCK + threadIdx.x;
  s[threadIdx.x] = i < n ? x[i] : 0.f;
  __syncthreads();
  for (int half = BLOCK / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) s[threadIdx.x] += s[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
}

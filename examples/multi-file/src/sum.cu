#include "ops.h"
#include "kernels/sum.cuh"

#include <vector>

float sum(const float *x, float *partial, int n) {
  int blocks = (n + BLOCK - 1) / BLOCK;
  block_sum_kernel<<<blocks, BLOCK>>>(x, partial, n);
  std::vector<float> host(blocks);
  cudaMemcpy(host.data(), partial, blocks * sizeof(float), cudaMemcpyDeviceToHost);
  float total = 0.f;
  for (float v : host) total += v;
  return total;
}

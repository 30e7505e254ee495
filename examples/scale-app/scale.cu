#include "scale.h"
#include "check.h"

__global__ void scale_add_kernel(const float *x, float *y, int n, float a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

void scale_add(const float *x, float *y, int n, float a, int launches) {
  int per = (n + launches - 1) / launches;
  for (int start = 0; start < n; start += per) {
    int count = start + per <= n ? per : n - start;
    scale_add_kernel<<<(count + SCALE_BLOCK - 1) / SCALE_BLOCK, SCALE_BLOCK>>>(x + start, y + start, count, a);
    CHECK(cudaGetLastError());
  }
}

#include "fill.h"
#include "fill_kernel.cuh"

__device__ float helper_twice(float x) { return 2.f * x; }

void fill(float *x, int n, float value) { fill_kernel<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(x, n, value); }

// A kernel in a local header (included by src/scale.cu only). helper_twice() is defined in another
// translation unit (helpers/fill.cu): the program needs separable compilation (-rdc=true).
#pragma once
#include "helpers/fill.h"

#ifndef BLOCK
#error "BLOCK must be defined (-DBLOCK=256: the target's compile options)"
#endif

__global__ void scale_kernel(float *y, const float *x, int n) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i < n) y[i] = helper_twice(x[i]);
}

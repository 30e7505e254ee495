// The helper folder: a device function other translation units call (separable compilation) and a fill.
#pragma once

__device__ float helper_twice(float x);
void fill(float *x, int n, float value);

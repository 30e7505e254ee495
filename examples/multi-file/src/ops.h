#pragma once

void scale(float *y, const float *x, int n);          // y = 2 x
float sum(const float *x, float *partial, int n);     // the sum of x[0..n)

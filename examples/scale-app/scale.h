// A local header beside the sources (a quoted include: it must still be found from the transformed copy).
#pragma once

// y[i] = a * x[i] + y[i] for i < n, on the GPU, in `launches` short launches of `n / launches` elements.
void scale_add(const float *x, float *y, int n, float a, int launches);

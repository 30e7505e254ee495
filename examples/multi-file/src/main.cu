// Fills x with 1, scales it into y (y = 2 x) and sums y: prints PASS when the sum is 2 n.
#include "ops.h"
#include "helpers/fill.h"

#include <cstdio>

int main() {
  const int n = 1 << 20;
  float *x, *y, *partial;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&y, n * sizeof(float));
  cudaMalloc(&partial, (n / BLOCK + 1) * sizeof(float));
  fill(x, n, 1.f);
  scale(y, x, n);
  float total = sum(y, partial, n);
  bool ok = cudaGetLastError() == cudaSuccess && total == 2.f * n;
  std::printf("multi-file: sum %.0f, expected %.0f: %s\n", total, 2.f * n, ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}

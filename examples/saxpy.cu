// A small CUDA program: the bundled example that the README's first command transforms.
#include <cstdio>
#include <vector>

#define GLOBAL_ID (blockIdx.x * blockDim.x + threadIdx.x)

__device__ float scale_of(int block) { return 1.0f + 0.0f * block; }

__device__ float block_scale() { return scale_of(blockIdx.x); }

template <typename T>
__global__ void __launch_bounds__(256) saxpy(int n, T a, const T *__restrict__ x, T *__restrict__ y) {
  int i = GLOBAL_ID;
  if (i < n) y[i] = a * block_scale() * x[i] + y[i];
}

__global__ void fill(float *p, float v, int n) {
  for (int i = GLOBAL_ID; i < n; i += gridDim.x * blockDim.x) p[i] = v;
}

// A host loop as real programs have: each iteration copies y to the device on the legacy stream, runs
// saxpy, copies y back and checks it on the host (y <- 3 x + y, from y = 2 with x = 1: 5, 8, 11, ...).
int main() {
  const int n = 1 << 20, iterations = 10;
  float *x, *y;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&y, n * sizeof(float));
  fill<<<256, 256>>>(x, 1.0f, n);
  std::vector<float> h(n, 2.0f);
  int bad = 0;
  for (int it = 0; it < iterations; ++it) {
    cudaMemcpy(y, h.data(), n * sizeof(float), cudaMemcpyHostToDevice);
    saxpy<<<(n + 255) / 256, 256>>>(n, 3.0f, x, y);
    cudaMemcpy(h.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost);
    const float want = 2.0f + 3.0f * (it + 1);
    for (int i = 0; i < n; ++i) bad += h[i] != want;
  }
  const cudaError_t e = cudaGetLastError();
  std::printf("%s: %d wrong of %d x %d (%s)\n", bad || e ? "FAIL" : "PASS", bad, n, iterations, cudaGetErrorName(e));
  cudaFree(x);
  cudaFree(y);
  return bad != 0 || e != cudaSuccess;
}

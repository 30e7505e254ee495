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

int main() {
  const int n = 1 << 20;
  float *x, *y;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&y, n * sizeof(float));
  fill<<<256, 256>>>(x, 1.0f, n);
  fill<<<256, 256>>>(y, 2.0f, n);
  saxpy<<<(n + 255) / 256, 256>>>(n, 3.0f, x, y);
  std::vector<float> h(n);
  cudaMemcpy(h.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += h[i] != 5.0f;
  std::printf("%s: %d wrong of %d\n", bad ? "FAIL" : "PASS", bad, n);
  cudaFree(x);
  cudaFree(y);
  return bad != 0;
}

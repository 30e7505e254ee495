// (c) A naive 2-D matrix multiply, C = A B (2048 x 2048 floats), one thread per element, 32x8 blocks:
// a long 2-D kernel (milliseconds) of the kind a first CUDA port has.
//   matmul_naive [--n 2048]
// A and B hold small integers (-2..2), so every sum is exact in float and the check is exact: one
// element of every block (at a position that varies from block to block) against the CPU; C starts
// poisoned (NaN).
#include "bp.cuh"

#include <algorithm>
#include <vector>

__global__ void matmul(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int n) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= n || col >= n) return;
  float s = 0.f;
  for (int k = 0; k < n; ++k) s += A[(size_t)row * n + k] * B[(size_t)k * n + col];
  C[(size_t)row * n + col] = s;
}

int main(int argc, char** argv) {
  bp::program_name() = "matmul_naive";
  const int n = (int)bp::arg(argc, argv, "--n", 2048);
  const size_t nn = (size_t)n * n;
  std::vector<signed char> a(nn), bt(nn);  // A row-major, B transposed (for the check)
  std::vector<float> fa(nn), fb(nn);
  for (size_t i = 0; i < nn; ++i) {
    a[i] = (signed char)((int)(bp::hash32((uint32_t)i) % 5) - 2);
    const signed char b = (signed char)((int)(bp::hash32((uint32_t)i + 0x51ed270bu) % 5) - 2);
    fa[i] = a[i];
    fb[i] = b;
    bt[(i % n) * n + i / n] = b;
  }
  float *dA, *dB, *dC;
  BP_CK(cudaMalloc(&dA, nn * 4));
  BP_CK(cudaMalloc(&dB, nn * 4));
  BP_CK(cudaMalloc(&dC, nn * 4));
  BP_CK(cudaMemcpy(dA, fa.data(), nn * 4, cudaMemcpyHostToDevice));
  BP_CK(cudaMemcpy(dB, fb.data(), nn * 4, cudaMemcpyHostToDevice));
  BP_CK(cudaMemset(dC, 0xff, nn * 4));
  bp::Timer t;
  BP_CK(cudaDeviceSynchronize());

  t.start();
  const dim3 block(32, 8), grid((n + 31) / 32, (n + 7) / 8);
  matmul<<<grid, block>>>(dA, dB, dC, n);
  const float ms = t.stop();

  BP_CK(cudaMemcpy(fa.data(), dC, nn * 4, cudaMemcpyDeviceToHost));  // fa: C from here on
  size_t bad = 0, checked = 0;
  for (unsigned by = 0; by < grid.y; ++by)
    for (unsigned bx = 0; bx < grid.x; ++bx) {
      const uint32_t hsh = bp::hash32(by * grid.x + bx);
      const int row = std::min(n - 1, (int)(by * 8 + hsh % 8)), col = std::min(n - 1, (int)(bx * 32 + (hsh >> 8) % 32));
      int ref = 0;
      for (int k = 0; k < n; ++k) ref += a[(size_t)row * n + k] * bt[(size_t)col * n + k];
      const float got = fa[(size_t)row * n + col];
      ++checked;
      if (!(got == (float)ref) && bad++ < 5) std::printf("  C[%d][%d] = %g, want %d\n", row, col, got, ref);
    }
  if (bad) bp::fail("%zu of %zu checked elements wrong", bad, checked);
  bp::result(ms, 1);
  return 0;
}

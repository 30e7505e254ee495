// (d) A triangular 2-D kernel: the lower triangle of C = A B (2048 x 2048 floats), 16x16 blocks over the
// whole square; a block above the diagonal returns at once (half the grid does no work), threads of a
// diagonal block above the diagonal compute nothing.
//   tri_matmul [--n 2048]
// Small integers (-2..2) in A and B: exact sums, exact check of one element per block (below the
// diagonal: the product; above: C must still hold its poison).
#include "bp.cuh"

#include <algorithm>
#include <cstring>
#include <vector>

__global__ void lower_product(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int n) {
  if (blockIdx.x > blockIdx.y) return;  // the whole block is above the diagonal
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= n || col >= n || col > row) return;
  float s = 0.f;
  for (int k = 0; k < n; ++k) s += A[(size_t)row * n + k] * B[(size_t)k * n + col];
  C[(size_t)row * n + col] = s;
}

int main(int argc, char** argv) {
  bp::program_name() = "tri_matmul";
  const int n = (int)bp::arg(argc, argv, "--n", 2048);
  const size_t nn = (size_t)n * n;
  std::vector<signed char> a(nn), bt(nn);
  std::vector<float> fa(nn), fb(nn);
  for (size_t i = 0; i < nn; ++i) {
    a[i] = (signed char)((int)(bp::hash32((uint32_t)i + 77u) % 5) - 2);
    const signed char b = (signed char)((int)(bp::hash32((uint32_t)i + 0x2545f491u) % 5) - 2);
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
  const dim3 block(16, 16), grid((n + 15) / 16, (n + 15) / 16);
  lower_product<<<grid, block>>>(dA, dB, dC, n);
  const float ms = t.stop();

  BP_CK(cudaMemcpy(fa.data(), dC, nn * 4, cudaMemcpyDeviceToHost));
  const uint32_t poison = 0xffffffffu;
  size_t bad = 0, checked = 0;
  for (unsigned by = 0; by < grid.y; ++by)
    for (unsigned bx = 0; bx < grid.x; ++bx) {
      const uint32_t hsh = bp::hash32(by * grid.x + bx + 999u);
      int r = (int)(hsh % 16), c = (int)((hsh >> 8) % 16);
      if (bx == by && c > r) std::swap(r, c);  // on the diagonal block: an element on or below the diagonal
      const int row = std::min(n - 1, (int)(by * 16 + r)), col = std::min(n - 1, (int)(bx * 16 + c));
      const float got = fa[(size_t)row * n + col];
      ++checked;
      if (col > row) {
        uint32_t bits;
        std::memcpy(&bits, &got, 4);
        if (bits != poison && bad++ < 5) std::printf("  C[%d][%d] above the diagonal was written: %g\n", row, col, got);
        continue;
      }
      int ref = 0;
      for (int k = 0; k < n; ++k) ref += a[(size_t)row * n + k] * bt[(size_t)col * n + k];
      if (!(got == (float)ref) && bad++ < 5) std::printf("  C[%d][%d] = %g, want %d\n", row, col, got, ref);
    }
  if (bad) bp::fail("%zu of %zu checked elements wrong", bad, checked);
  bp::result(ms, 1);
  return 0;
}

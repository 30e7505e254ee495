// (g) A tensor-core GEMM with WMMA: C (float) = A B (half), 4096 x 4096 x 4096, row-major, each warp one
// 16 x 16 tile of C straight from global memory (no shared-memory staging), 4 warps (2 x 2 tiles) per
// 128-thread block.
//   wmma_gemm [--n 4096]
// A and B hold small integers (-2..2): products and sums are exact in half / float, so the check is
// exact: one element of every warp's tile (at a varying position) against the CPU; C starts poisoned.
#include "bp.cuh"

#include <cuda_fp16.h>
#include <mma.h>

#include <vector>

__global__ void wmma_gemm(const half* __restrict__ A, const half* __restrict__ B, float* __restrict__ C, int n) {
  using namespace nvcuda;
  const int warp = threadIdx.x / 32;
  const int tile_row = blockIdx.y * 2 + warp / 2, tile_col = blockIdx.x * 2 + warp % 2;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
  wmma::fill_fragment(c, 0.f);
  for (int k = 0; k < n; k += 16) {
    wmma::load_matrix_sync(a, A + (size_t)tile_row * 16 * n + k, n);
    wmma::load_matrix_sync(b, B + (size_t)k * n + tile_col * 16, n);
    wmma::mma_sync(c, a, b, c);
  }
  wmma::store_matrix_sync(C + (size_t)tile_row * 16 * n + tile_col * 16, c, n, wmma::mem_row_major);
}

int main(int argc, char** argv) {
  bp::program_name() = "wmma_gemm";
  const int n = (int)bp::arg(argc, argv, "--n", 4096);
  if (n % 32) bp::fail("--n must be a multiple of 32");
  const size_t nn = (size_t)n * n;
  std::vector<signed char> a(nn), bt(nn);
  std::vector<half> ha(nn), hb(nn);
  for (size_t i = 0; i < nn; ++i) {
    a[i] = (signed char)((int)(bp::hash32((uint32_t)i + 3u) % 5) - 2);
    const signed char b = (signed char)((int)(bp::hash32((uint32_t)i + 0x68e31da4u) % 5) - 2);
    ha[i] = __float2half((float)a[i]);
    hb[i] = __float2half((float)b);
    bt[(i % n) * n + i / n] = b;
  }
  half *dA, *dB;
  float* dC;
  BP_CK(cudaMalloc(&dA, nn * sizeof(half)));
  BP_CK(cudaMalloc(&dB, nn * sizeof(half)));
  BP_CK(cudaMalloc(&dC, nn * 4));
  BP_CK(cudaMemcpy(dA, ha.data(), nn * sizeof(half), cudaMemcpyHostToDevice));
  BP_CK(cudaMemcpy(dB, hb.data(), nn * sizeof(half), cudaMemcpyHostToDevice));
  BP_CK(cudaMemset(dC, 0xff, nn * 4));
  bp::Timer t;
  BP_CK(cudaDeviceSynchronize());

  t.start();
  const dim3 grid(n / 32, n / 32);
  wmma_gemm<<<grid, 128>>>(dA, dB, dC, n);
  const float ms = t.stop();

  std::vector<float> c(nn);
  BP_CK(cudaMemcpy(c.data(), dC, nn * 4, cudaMemcpyDeviceToHost));
  size_t bad = 0, checked = 0;
  for (int tr = 0; tr < n / 16; ++tr)
    for (int tc = 0; tc < n / 16; ++tc) {
      const uint32_t hsh = bp::hash32((uint32_t)(tr * (n / 16) + tc));
      const int row = tr * 16 + (int)(hsh % 16), col = tc * 16 + (int)((hsh >> 8) % 16);
      const signed char* ar = &a[(size_t)row * n];
      const signed char* bc = &bt[(size_t)col * n];
      int ref = 0;
      for (int k = 0; k < n; ++k) ref += ar[k] * bc[k];
      ++checked;
      const float got = c[(size_t)row * n + col];
      if (!(got == (float)ref) && bad++ < 5) std::printf("  C[%d][%d] = %g, want %d\n", row, col, got, ref);
    }
  if (bad) bp::fail("%zu of %zu checked elements wrong", bad, checked);
  bp::result(ms, 1);
  return 0;
}

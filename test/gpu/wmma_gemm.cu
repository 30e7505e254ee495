// Tensor-core GEMM with WMMA (mma.h): half inputs, float accumulation, 16x16x16 fragments, one warp per
// 16x16 output tile, 2x2 warps per block. Inputs are multiples of 1/8 in [-4, 4] and K <= 512, so every
// product and partial sum is exactly representable in float: the result is exact whatever the order.
#include "common.cuh"

#include <cuda_fp16.h>
#include <mma.h>

using namespace nvcuda;

__global__ void wmma_gemm(int M, int N, int K, const half* A, const half* B, float* C) {
  int warp = threadIdx.x / 32;
  int row = (blockIdx.y * 2 + warp / 2) * 16, col = (blockIdx.x * 2 + warp % 2) * 16;
  if (row >= M || col >= N) return;  // warp-uniform, no barrier follows
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  for (int k = 0; k < K; k += 16) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> b;
    wmma::load_matrix_sync(a, A + (size_t)row * K + k, K);
    wmma::load_matrix_sync(b, B + (size_t)k * N + col, N);
    wmma::mma_sync(acc, a, b, acc);
  }
  wmma::store_matrix_sync(C + (size_t)row * N + col, acc, N, wmma::mem_row_major);
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "wmma_gemm");
  if (tg::bench_mode()) {
    int M = 2048, N = 2048, K = 2048;
    tg::DevBuf<half> A((size_t)M * K), B((size_t)K * N);
    tg::DevBuf<float> C((size_t)M * N);
    A.fill_bytes(0);
    B.fill_bytes(0);
    dim3 grid(N / 32, M / 32);
    return tg::bench("wmma_gemm", [&] { wmma_gemm<<<grid, 128>>>(M, N, K, A, B, C); });
  }
  for (int it = 0; it < 3; ++it) {
    int M = 16 * (int)tg::rand_int(1, 16), N = 16 * (int)tg::rand_int(1, 16), K = 16 * (int)tg::rand_int(1, 32);
    auto qa = tg::random_ints<int>((size_t)M * K, -32, 32), qb = tg::random_ints<int>((size_t)K * N, -32, 32);
    std::vector<half> hA(qa.size()), hB(qb.size());
    for (size_t i = 0; i < qa.size(); ++i) hA[i] = __float2half(qa[i] / 8.0f);
    for (size_t i = 0; i < qb.size(); ++i) hB[i] = __float2half(qb[i] / 8.0f);
    tg::DevBuf<half> A(hA.size()), B(hB.size());
    tg::DevBuf<float> C((size_t)M * N);
    A.upload(hA);
    B.upload(hB);
    C.poison();
    dim3 grid((N + 31) / 32, (M + 31) / 32);
    wmma_gemm<<<grid, 128>>>(M, N, K, A, B, C);
    tg::sync_check("wmma_gemm");
    std::vector<float> want((size_t)M * N);
    for (int r = 0; r < M; ++r)
      for (int c = 0; c < N; ++c) {
        long long acc = 0;  // in units of 1/64
        for (int k = 0; k < K; ++k) acc += (long long)qa[(size_t)r * K + k] * qb[(size_t)k * N + c];
        want[(size_t)r * N + c] = (float)acc / 64.0f;
      }
    tg::compare_exact(C.download(), want, "WMMA C = A*B");
  }
  return tg::finish();
}

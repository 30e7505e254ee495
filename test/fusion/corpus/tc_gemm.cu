// tc_gemm: C = A * B on the Tensor Cores (WMMA 16x16x16, half inputs, float accumulation).
//
//   A: M x K half, row-major      B: K x N half, row-major      C: M x N float, row-major
//   block: 128 threads (4 warps, 1-D); grid: (N / 64, M / 64); static shared memory 9728 bytes
//   M, N multiples of 64; K a multiple of 32.
//
// Each block computes one 64 x 64 tile of C. Per K step of 32 the block stages a 64 x 32 tile of A and a
// 32 x 64 tile of B in shared memory (16-byte vector loads), then each warp computes its 32 x 32 quarter
// of the C tile (2 x 2 accumulator fragments, 2 x 4 mma_sync per K step). C is stored straight from the
// accumulators. One task per block; blocks are independent.
#include <mma.h>
#include <cuda_fp16.h>

constexpr int tc_gemm_tile_m = 64;
constexpr int tc_gemm_tile_n = 64;
constexpr int tc_gemm_tile_k = 32;
constexpr int tc_gemm_pad = 8;  // halves of padding per shared row (keeps 32-byte alignment of fragments)

__global__ void tc_gemm_wmma(const half* A, const half* B, float* C, int M, int N, int K)
{
  using namespace nvcuda;
  __shared__ __align__(32) half tc_gemm_As[tc_gemm_tile_m][tc_gemm_tile_k + tc_gemm_pad];
  __shared__ __align__(32) half tc_gemm_Bs[tc_gemm_tile_k][tc_gemm_tile_n + tc_gemm_pad];

  const int warp = threadIdx.x / 32;
  const int warp_m = warp / 2;  // 0..1: which 32 rows of the tile
  const int warp_n = warp % 2;  // 0..1: which 32 columns of the tile
  const int row0 = blockIdx.y * tc_gemm_tile_m;
  const int col0 = blockIdx.x * tc_gemm_tile_n;

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      wmma::fill_fragment(acc[i][j], 0.0f);

  for (int k0 = 0; k0 < K; k0 += tc_gemm_tile_k) {
    // A tile: 64 rows x 32 halves = 256 vectors of 8 halves; B tile: 32 rows x 64 halves = 256 vectors.
    for (int v = threadIdx.x; v < 256; v += 128) {
      const int r = v / 4, c = (v % 4) * 8;
      *reinterpret_cast<int4*>(&tc_gemm_As[r][c]) =
          *reinterpret_cast<const int4*>(&A[(size_t)(row0 + r) * K + k0 + c]);
    }
    for (int v = threadIdx.x; v < 256; v += 128) {
      const int r = v / 8, c = (v % 8) * 8;
      *reinterpret_cast<int4*>(&tc_gemm_Bs[r][c]) =
          *reinterpret_cast<const int4*>(&B[(size_t)(k0 + r) * N + col0 + c]);
    }
    __syncthreads();

    for (int kk = 0; kk < tc_gemm_tile_k; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a[2];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> b[2];
      for (int i = 0; i < 2; ++i)
        wmma::load_matrix_sync(a[i], &tc_gemm_As[warp_m * 32 + i * 16][kk], tc_gemm_tile_k + tc_gemm_pad);
      for (int j = 0; j < 2; ++j)
        wmma::load_matrix_sync(b[j], &tc_gemm_Bs[kk][warp_n * 32 + j * 16], tc_gemm_tile_n + tc_gemm_pad);
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j)
          wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }

  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      wmma::store_matrix_sync(&C[(size_t)(row0 + warp_m * 32 + i * 16) * N + col0 + warp_n * 32 + j * 16],
                              acc[i][j], N, wmma::mem_row_major);
}

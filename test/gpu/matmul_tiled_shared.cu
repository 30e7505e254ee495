// Tiled SGEMM C = A*B with static __shared__ 16x16 tiles and two __syncthreads per tile step; sizes not
// multiples of the tile (out-of-range loads are 0). The kernel uses explicit fmaf in a fixed order, and
// the CPU replays the same order (padding included) with std::fmaf: bit-exact.
#include "common.cuh"

constexpr int T = 16;

__global__ void sgemm_tiled(int M, int N, int K, const float* A, const float* B, float* C) {
  __shared__ float As[T][T];
  __shared__ float Bs[T][T];
  int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += T) {
    As[threadIdx.y][threadIdx.x] = (row < M && k0 + threadIdx.x < K) ? A[(size_t)row * K + k0 + threadIdx.x] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] = (col < N && k0 + threadIdx.y < K) ? B[(size_t)(k0 + threadIdx.y) * N + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < T; ++k) acc = fmaf(As[threadIdx.y][k], Bs[k][threadIdx.x], acc);
    __syncthreads();
  }
  if (row < M && col < N) C[(size_t)row * N + col] = acc;
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "matmul_tiled_shared");
  if (tg::bench_mode()) {
    int M = 1024, N = 1024, K = 1024;
    tg::DevBuf<float> A((size_t)M * K), B((size_t)K * N), C((size_t)M * N);
    A.fill_bytes(0);
    B.fill_bytes(0);
    dim3 grid(N / T, M / T), block(T, T);
    return tg::bench("matmul_tiled_shared", [&] { sgemm_tiled<<<grid, block>>>(M, N, K, A, B, C); });
  }
  for (int it = 0; it < 3; ++it) {
    int M = (int)tg::rand_int(1, 192), N = (int)tg::rand_int(1, 192), K = (int)tg::rand_int(1, 192);
    auto hA = tg::random_reals<float>((size_t)M * K, -1, 1), hB = tg::random_reals<float>((size_t)K * N, -1, 1);
    tg::DevBuf<float> A(hA.size()), B(hB.size()), C((size_t)M * N);
    A.upload(hA);
    B.upload(hB);
    C.poison();
    dim3 grid((N + T - 1) / T, (M + T - 1) / T), block(T, T);
    sgemm_tiled<<<grid, block>>>(M, N, K, A, B, C);
    tg::sync_check("sgemm_tiled");
    int Kp = (K + T - 1) / T * T;
    std::vector<float> want((size_t)M * N);
    for (int r = 0; r < M; ++r)
      for (int c = 0; c < N; ++c) {
        float acc = 0.0f;
        for (int k = 0; k < Kp; ++k) {
          float a = k < K ? hA[(size_t)r * K + k] : 0.0f, b = k < K ? hB[(size_t)k * N + c] : 0.0f;
          acc = std::fmaf(a, b, acc);
        }
        want[(size_t)r * N + c] = acc;
      }
    tg::compare_exact(C.download(), want, "C = A*B");
  }
  return tg::finish();
}

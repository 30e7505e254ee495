// Tiled SGEMM whose tile size is chosen at run time (8, 16, 32): both tiles live in one dynamic
// `extern __shared__` array of 2*T*T floats, launched with an explicit shared-memory size and stream.
// Explicit fmaf in a fixed order, replayed by the CPU: bit-exact.
#include "common.cuh"

__global__ void sgemm_dyn(int M, int N, int K, const float* A, const float* B, float* C) {
  extern __shared__ float smem[];
  const int T = blockDim.x;  // square blocks: blockDim.x == blockDim.y == tile
  float* As = smem;
  float* Bs = smem + T * T;
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += T) {
    As[ty * T + tx] = (row < M && k0 + tx < K) ? A[(size_t)row * K + k0 + tx] : 0.0f;
    Bs[ty * T + tx] = (col < N && k0 + ty < K) ? B[(size_t)(k0 + ty) * N + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < T; ++k) acc = fmaf(As[ty * T + k], Bs[k * T + tx], acc);
    __syncthreads();
  }
  if (row < M && col < N) C[(size_t)row * N + col] = acc;
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "matmul_dynamic_shared");
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  if (tg::bench_mode()) {
    int M = 1024, N = 1024, K = 1024, T = 32;
    tg::DevBuf<float> A((size_t)M * K), B((size_t)K * N), C((size_t)M * N);
    A.fill_bytes(0);
    B.fill_bytes(0);
    dim3 grid(N / T, M / T), block(T, T);
    size_t shmem = 2 * T * T * sizeof(float);
    return tg::bench("matmul_dynamic_shared", stream,
                     [&] { sgemm_dyn<<<grid, block, shmem, stream>>>(M, N, K, A, B, C); });
  }
  for (int T : {8, 16, 32}) {
    int M = (int)tg::rand_int(1, 192), N = (int)tg::rand_int(1, 192), K = (int)tg::rand_int(1, 192);
    auto hA = tg::random_reals<float>((size_t)M * K, -1, 1), hB = tg::random_reals<float>((size_t)K * N, -1, 1);
    tg::DevBuf<float> A(hA.size()), B(hB.size()), C((size_t)M * N);
    A.upload(hA);
    B.upload(hB);
    C.poison();
    dim3 grid((N + T - 1) / T, (M + T - 1) / T), block(T, T);
    sgemm_dyn<<<grid, block, 2 * T * T * sizeof(float), stream>>>(M, N, K, A, B, C);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    tg::sync_check("sgemm_dyn");
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
    tg::compare_exact(C.download(), want, T == 8 ? "T=8" : T == 16 ? "T=16" : "T=32");
  }
  CUDA_CHECK(cudaStreamDestroy(stream));
  return tg::finish();
}

// Host-side problem for tc_gemm.cu (include after it). See problems.cuh for the interface.
//
// Sizes: M = 4096 * scale (rounded to a multiple of 64, at least 64), N = K = 2048.
// Inputs: A, B uniform in [-1, 1), rounded to half, filled on the device (a host
// std::mt19937 took seconds at 10 ms sizes): A[j] = tc_gemm_input(seed, j), B[j] = tc_gemm_input(seed ^
// 0x2545F491, j). Output: C (M x N float).
// Check: sampled C elements against a double-precision dot product of the same half values, tolerance
// 2e-4 * sum_k |a_ik * b_kj| + 1e-5 (float accumulation on the Tensor Cores).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>
#include <cuda_fp16.h>
#include "problems.cuh"

// Input element j: a uniform value in [-1, 1) from fusion_input_bits, rounded to half (the same on the host).
__host__ __device__ inline half tc_gemm_input(unsigned seed, size_t j)
{
  return __float2half(fusion_unit_float(fusion_input_bits(seed, j)) * 2.0f - 1.0f);
}
__global__ void tc_gemm_fill(half* p, size_t n, unsigned seed)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    p[i] = tc_gemm_input(seed, i);
}

struct TcGemmProblem {
  static constexpr const char* name = "tc_gemm";
  dim3 grid, block;
  size_t shmem = 0;

  int M = 0, N = 0, K = 0;
  half* dA = nullptr;
  half* dB = nullptr;
  float* dC = nullptr;
  unsigned seed_a = 0, seed_b = 0;

  void setup(double scale, unsigned seed)
  {
    release();
    M = std::max(64, (int)std::lround(4096.0 * scale / 64.0) * 64);
    N = 2048;
    K = 2048;
    grid = dim3(N / 64, M / 64, 1);
    block = dim3(128, 1, 1);
    shmem = 0;

    seed_a = seed;
    seed_b = seed ^ 0x2545F491u;
    FUSION_CHECK(cudaMalloc(&dA, sizeof(half) * (size_t)M * K));
    tc_gemm_fill<<<1024, 256>>>(dA, (size_t)M * K, seed_a);
    FUSION_CHECK(cudaGetLastError());
    FUSION_CHECK(cudaMalloc(&dB, sizeof(half) * (size_t)K * N));
    tc_gemm_fill<<<1024, 256>>>(dB, (size_t)K * N, seed_b);
    FUSION_CHECK(cudaGetLastError());
    FUSION_CHECK(cudaMalloc(&dC, sizeof(float) * (size_t)M * N));
    poison();
  }

  void poison() { FUSION_CHECK(cudaMemset(dC, 0xFF, sizeof(float) * (size_t)M * N)); }

  std::vector<unsigned char> outputs() const
  {
    std::vector<unsigned char> out(sizeof(float) * (size_t)M * N);
    FUSION_CHECK(cudaMemcpy(out.data(), dC, out.size(), cudaMemcpyDeviceToHost));
    return out;
  }

  std::vector<FusionBuffer> device_outputs() const { return {{dC, sizeof(float) * (size_t)M * N}}; }

  bool check_cpu() const
  {
    const std::vector<size_t> idx = fusion_sample((size_t)M * N);
    const std::vector<unsigned> words = fusion_gather_words(dC, idx);
    for (size_t s = 0; s < idx.size(); ++s) {
      const size_t e = idx[s], i = e / N, j = e % N;
      float got;
      std::memcpy(&got, &words[s], sizeof got);
      double ref = 0.0, mag = 0.0;
      for (int k = 0; k < K; ++k) {
        const double p = (double)__half2float(tc_gemm_input(seed_a, i * K + k)) *
                         (double)__half2float(tc_gemm_input(seed_b, (size_t)k * N + j));
        ref += p;
        mag += std::fabs(p);
      }
      const double err = std::fabs((double)got - ref);
      if (!(err <= 2e-4 * mag + 1e-5)) {
        fprintf(stderr, "tc_gemm: mismatch at C[%zu][%zu]: got %.9g, expected %.9g (|err| %.3g, tol %.3g)\n", i, j,
                (double)got, ref, err, 2e-4 * mag + 1e-5);
        return false;
      }
    }
    return true;
  }

  template <class F>
  void with_args(F&& f) const
  {
    f(grid, block, shmem, (const half*)dA, (const half*)dB, dC, M, N, K);
  }

  void release()
  {
    if (dA) FUSION_CHECK(cudaFree(dA));
    if (dB) FUSION_CHECK(cudaFree(dB));
    if (dC) FUSION_CHECK(cudaFree(dC));
    dA = dB = nullptr;
    dC = nullptr;
  }
};

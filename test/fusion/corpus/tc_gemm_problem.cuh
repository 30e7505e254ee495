// Host-side problem for tc_gemm.cu (include after it). See problems.cuh for the interface.
//
// Sizes: M = 4096 * scale (rounded to a multiple of 64, at least 64), N = K = 2048.
// Inputs: A, B uniform in [-1, 1], rounded to half. Output: C (M x N float).
// Check: sampled C elements against a double-precision dot product of the same half values, tolerance
// 2e-4 * sum_k |a_ik * b_kj| + 1e-5 (float accumulation on the Tensor Cores).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
#include <cuda_fp16.h>
#include "problems.cuh"

struct TcGemmProblem {
  static constexpr const char* name = "tc_gemm";
  dim3 grid, block;
  size_t shmem = 0;

  int M = 0, N = 0, K = 0;
  half* dA = nullptr;
  half* dB = nullptr;
  float* dC = nullptr;
  std::vector<float> hA, hB;  // the inputs, exactly (half values as float)

  void setup(double scale, unsigned seed)
  {
    release();
    M = std::max(64, (int)std::lround(4096.0 * scale / 64.0) * 64);
    N = 2048;
    K = 2048;
    grid = dim3(N / 64, M / 64, 1);
    block = dim3(128, 1, 1);
    shmem = 0;

    std::mt19937 rng(seed);
    auto fill = [&](std::vector<float>& h, std::vector<half>& hh, size_t n) {
      h.resize(n);
      hh.resize(n);
      for (size_t i = 0; i < n; ++i) {
        const float u = (float)(rng() >> 8) * (1.0f / 8388608.0f) - 1.0f;  // [-1, 1)
        hh[i] = __float2half(u);
        h[i] = __half2float(hh[i]);
      }
    };
    std::vector<half> tmp;
    fill(hA, tmp, (size_t)M * K);
    FUSION_CHECK(cudaMalloc(&dA, sizeof(half) * (size_t)M * K));
    FUSION_CHECK(cudaMemcpy(dA, tmp.data(), sizeof(half) * (size_t)M * K, cudaMemcpyHostToDevice));
    fill(hB, tmp, (size_t)K * N);
    FUSION_CHECK(cudaMalloc(&dB, sizeof(half) * (size_t)K * N));
    FUSION_CHECK(cudaMemcpy(dB, tmp.data(), sizeof(half) * (size_t)K * N, cudaMemcpyHostToDevice));
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

  bool check_cpu() const
  {
    const std::vector<unsigned char> bytes = outputs();
    const float* c = reinterpret_cast<const float*>(bytes.data());
    for (size_t e : fusion_sample((size_t)M * N)) {
      const size_t i = e / N, j = e % N;
      double ref = 0.0, mag = 0.0;
      for (int k = 0; k < K; ++k) {
        const double p = (double)hA[i * K + k] * (double)hB[(size_t)k * N + j];
        ref += p;
        mag += std::fabs(p);
      }
      const double err = std::fabs((double)c[e] - ref);
      if (!(err <= 2e-4 * mag + 1e-5)) {
        fprintf(stderr, "tc_gemm: mismatch at C[%zu][%zu]: got %.9g, expected %.9g (|err| %.3g, tol %.3g)\n", i, j,
                (double)c[e], ref, err, 2e-4 * mag + 1e-5);
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

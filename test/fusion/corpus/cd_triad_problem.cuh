// Host-side problem for cd_triad.cu (include after it). See problems.cuh for the interface.
//
// Sizes: n4 = 67108864 * scale float4 (rounded to a multiple of 256, at least 256): 1 GiB per array at 1.0.
// s = 3.0. Inputs b, c filled on the device: b[j] = fusion_unit_float(fusion_input_bits(seed, j)), c likewise
// with seed ^ 0x9E3779B9 (j the float's index). Output: a (4 * n4 floats).
// Check: sampled floats against b + s * c on the host, tolerance 1e-6 * (|b| + |s * c|) + 1e-30 (the
// device contracts to FMA).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include "problems.cuh"

struct TriadProblem {
  static constexpr const char* name = "triad";
  dim3 grid, block;
  size_t shmem = 0;

  int n4 = 0;
  float s = 3.0f;
  unsigned seed_b = 0, seed_c = 0;
  float4* dA = nullptr;
  float4* dB = nullptr;
  float4* dC = nullptr;

  size_t floats() const { return (size_t)n4 * 4; }

  void setup(double scale, unsigned seed)
  {
    release();
    n4 = (int)std::max(256.0, std::round(67108864.0 * scale / 256.0) * 256.0);
    s = 3.0f;
    grid = dim3((unsigned)((n4 + 255) / 256), 1, 1);
    block = dim3(256, 1, 1);
    shmem = 0;
    seed_b = seed;
    seed_c = seed ^ 0x9E3779B9u;
    FUSION_CHECK(cudaMalloc(&dA, sizeof(float4) * (size_t)n4));
    FUSION_CHECK(cudaMalloc(&dB, sizeof(float4) * (size_t)n4));
    FUSION_CHECK(cudaMalloc(&dC, sizeof(float4) * (size_t)n4));
    fusion_fill_unit((float*)dB, floats(), seed_b);
    fusion_fill_unit((float*)dC, floats(), seed_c);
    poison();
    FUSION_CHECK(cudaDeviceSynchronize());
  }

  void poison() { FUSION_CHECK(cudaMemset(dA, 0xFF, sizeof(float4) * (size_t)n4)); }

  std::vector<unsigned char> outputs() const
  {
    std::vector<unsigned char> out(sizeof(float4) * (size_t)n4);
    FUSION_CHECK(cudaMemcpy(out.data(), dA, out.size(), cudaMemcpyDeviceToHost));
    return out;
  }

  std::vector<FusionBuffer> device_outputs() const { return {{dA, sizeof(float4) * (size_t)n4}}; }

  bool check_cpu() const
  {
    const std::vector<size_t> idx = fusion_sample(floats());
    const std::vector<unsigned> got = fusion_gather_words(dA, idx);
    for (size_t k = 0; k < idx.size(); ++k) {
      const size_t j = idx[k];
      const float b = fusion_unit_float(fusion_input_bits(seed_b, j));
      const float c = fusion_unit_float(fusion_input_bits(seed_c, j));
      float a;
      std::memcpy(&a, &got[k], sizeof a);
      const double ref = (double)b + (double)s * c;
      const double tol = 1e-6 * (std::fabs((double)b) + std::fabs((double)s * c)) + 1e-30;
      if (!(std::fabs((double)a - ref) <= tol)) {
        fprintf(stderr, "triad: mismatch at a[%zu]: got %.9g, expected %.9g\n", j, (double)a, ref);
        return false;
      }
    }
    return true;
  }

  template <class F>
  void with_args(F&& f) const
  {
    f(grid, block, shmem, dA, (const float4*)dB, (const float4*)dC, s, n4);
  }

  void release()
  {
    if (dA) FUSION_CHECK(cudaFree(dA));
    if (dB) FUSION_CHECK(cudaFree(dB));
    if (dC) FUSION_CHECK(cudaFree(dC));
    dA = dB = dC = nullptr;
  }
};

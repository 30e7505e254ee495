// Host-side problem for cd_transpose.cu (include after it). See problems.cuh for the interface.
//
// Sizes: cols = 16384, rows = 16384 * scale (rounded to a multiple of 32, at least 32): 1 GiB per matrix at
// 1.0. Input filled on the device: in[j] = fusion_unit_float(fusion_input_bits(seed, j)) (j = r * cols + c).
// Output: out (cols x rows floats). Check: sampled elements, exact (a copy).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include "problems.cuh"

struct TransposeProblem {
  static constexpr const char* name = "transpose";
  dim3 grid, block;
  size_t shmem = 0;

  int rows = 0, cols = 0;
  unsigned seed_in = 0;
  float* dIn = nullptr;
  float* dOut = nullptr;

  size_t count() const { return (size_t)rows * cols; }

  void setup(double scale, unsigned seed)
  {
    release();
    cols = 16384;
    rows = (int)std::max(32.0, std::round(16384.0 * scale / 32.0) * 32.0);
    grid = dim3((cols + 31) / 32, (rows + 31) / 32, 1);
    block = dim3(32, 8, 1);
    shmem = 0;
    seed_in = seed;
    FUSION_CHECK(cudaMalloc(&dIn, sizeof(float) * count()));
    FUSION_CHECK(cudaMalloc(&dOut, sizeof(float) * count()));
    fusion_fill_unit(dIn, count(), seed_in);
    poison();
    FUSION_CHECK(cudaDeviceSynchronize());
  }

  void poison() { FUSION_CHECK(cudaMemset(dOut, 0xFF, sizeof(float) * count())); }

  std::vector<unsigned char> outputs() const
  {
    std::vector<unsigned char> out(sizeof(float) * count());
    FUSION_CHECK(cudaMemcpy(out.data(), dOut, out.size(), cudaMemcpyDeviceToHost));
    return out;
  }

  std::vector<FusionBuffer> device_outputs() const { return {{dOut, sizeof(float) * count()}}; }

  bool check_cpu() const
  {
    std::vector<size_t> idx = fusion_sample(count());
    idx.push_back((size_t)rows - 1);  // out[0][rows - 1] and out[cols - 1][0]
    idx.push_back((size_t)(cols - 1) * rows);
    const std::vector<unsigned> got = fusion_gather_words(dOut, idx);
    for (size_t k = 0; k < idx.size(); ++k) {
      const size_t c = idx[k] / rows, r = idx[k] % rows;
      const float ref = fusion_unit_float(fusion_input_bits(seed_in, r * cols + c));
      unsigned want;
      std::memcpy(&want, &ref, sizeof want);
      if (got[k] != want) {
        fprintf(stderr, "transpose: mismatch at out[%zu][%zu]: got 0x%08x, expected 0x%08x\n", c, r, got[k], want);
        return false;
      }
    }
    return true;
  }

  template <class F>
  void with_args(F&& f) const
  {
    f(grid, block, shmem, (const float*)dIn, dOut, rows, cols);
  }

  void release()
  {
    if (dIn) FUSION_CHECK(cudaFree(dIn));
    if (dOut) FUSION_CHECK(cudaFree(dOut));
    dIn = dOut = nullptr;
  }
};

// Host-side problem for cd_histogram.cu (include after it). See problems.cuh for the interface.
//
// Sizes: n4 = 33554432 * scale uint4 (rounded to a multiple of 1024, at least 1024): 512 MiB of input at
// 1.0; blocks = n4 / 1024. Input filled on the device: word j = fusion_input_bits(seed, j).
// Output: partial (blocks x 256 unsigned). Check: sampled bins against a host count of the block's bytes;
// exact.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "problems.cuh"

struct HistogramProblem {
  static constexpr const char* name = "histogram";
  dim3 grid, block;
  size_t shmem = 0;

  int n4 = 0;
  unsigned seed_in = 0;
  uint4* dIn = nullptr;
  unsigned* dPartial = nullptr;

  size_t blocks() const { return (size_t)grid.x; }

  void setup(double scale, unsigned seed)
  {
    release();
    n4 = (int)std::max(1024.0, std::round(33554432.0 * scale / 1024.0) * 1024.0);
    grid = dim3((unsigned)((n4 + 1023) / 1024), 1, 1);
    block = dim3(256, 1, 1);
    shmem = 0;
    seed_in = seed;
    FUSION_CHECK(cudaMalloc(&dIn, sizeof(uint4) * (size_t)n4));
    FUSION_CHECK(cudaMalloc(&dPartial, sizeof(unsigned) * 256 * blocks()));
    fusion_fill_bits((unsigned*)dIn, (size_t)n4 * 4, seed_in);
    poison();
    FUSION_CHECK(cudaDeviceSynchronize());
  }

  void poison() { FUSION_CHECK(cudaMemset(dPartial, 0xFF, sizeof(unsigned) * 256 * blocks())); }

  std::vector<unsigned char> outputs() const
  {
    std::vector<unsigned char> out(sizeof(unsigned) * 256 * blocks());
    FUSION_CHECK(cudaMemcpy(out.data(), dPartial, out.size(), cudaMemcpyDeviceToHost));
    return out;
  }

  std::vector<FusionBuffer> device_outputs() const { return {{dPartial, sizeof(unsigned) * 256 * blocks()}}; }

  bool check_cpu() const
  {
    std::vector<size_t> idx = fusion_sample(256 * blocks());
    std::sort(idx.begin(), idx.end());
    const std::vector<unsigned> got = fusion_gather_words(dPartial, idx);
    size_t counted = (size_t)-1;
    std::vector<unsigned> hist(256);
    for (size_t k = 0; k < idx.size(); ++k) {
      const size_t b = idx[k] / 256, v = idx[k] % 256;
      if (b != counted) {  // the block's histogram, once per block (the samples are sorted)
        std::fill(hist.begin(), hist.end(), 0u);
        const size_t end = std::min((size_t)n4, (b + 1) * 1024) * 4;
        for (size_t j = b * 1024 * 4; j < end; ++j) {
          const unsigned w = fusion_input_bits(seed_in, j);
          for (int s = 0; s < 32; s += 8) ++hist[(w >> s) & 255u];
        }
        counted = b;
      }
      if (got[k] != hist[v]) {
        fprintf(stderr, "histogram: mismatch at partial[%zu][%zu]: got %u, expected %u\n", b, v, got[k], hist[v]);
        return false;
      }
    }
    return true;
  }

  template <class F>
  void with_args(F&& f) const
  {
    f(grid, block, shmem, (const uint4*)dIn, dPartial, n4);
  }

  void release()
  {
    if (dIn) FUSION_CHECK(cudaFree(dIn));
    if (dPartial) FUSION_CHECK(cudaFree(dPartial));
    dIn = nullptr;
    dPartial = nullptr;
  }
};

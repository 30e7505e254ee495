// Host-side problem for cd_stencil.cu (include after it). See problems.cuh for the interface.
//
// Sizes: nx = 8192, ny = 32768 * scale (rounded to a multiple of 8, at least 8): 1 GiB per array at 1.0.
// Coefficients c0 = 0.5, c1 = 0.125. Input: in uniform in [0, 1), filled on the device (a
// host std::mt19937 took tens of seconds at 10 ms sizes): in[j] = fusion_unit_float(fusion_input_bits(seed, j)).
// Output: out (ny x nx float).
// Check: sampled points (plus the four corners) against the same float expression on the host, tolerance
// 1e-5 * (|c0 * c| + |c1| * (w + e + n + s)) + 1e-7 (the device may contract to FMA).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>
#include "problems.cuh"

struct StencilProblem {
  static constexpr const char* name = "stencil";
  dim3 grid, block;
  size_t shmem = 0;

  int nx = 0, ny = 0;
  float c0 = 0.5f, c1 = 0.125f;
  float* dIn = nullptr;
  float* dOut = nullptr;
  unsigned seed_in = 0;

  void setup(double scale, unsigned seed)
  {
    release();
    nx = 8192;
    ny = std::max(8, (int)std::lround(32768.0 * scale / 8.0) * 8);
    c0 = 0.5f;
    c1 = 0.125f;
    grid = dim3((nx + 31) / 32, (ny + 7) / 8, 1);
    block = dim3(32, 8, 1);
    shmem = 0;

    seed_in = seed;
    const size_t n = (size_t)nx * ny;
    FUSION_CHECK(cudaMalloc(&dIn, sizeof(float) * n));
    fusion_fill_unit(dIn, n, seed_in);
    FUSION_CHECK(cudaMalloc(&dOut, sizeof(float) * n));
    poison();
  }

  void poison() { FUSION_CHECK(cudaMemset(dOut, 0xFF, sizeof(float) * (size_t)nx * ny)); }

  std::vector<unsigned char> outputs() const
  {
    std::vector<unsigned char> out(sizeof(float) * (size_t)nx * ny);
    FUSION_CHECK(cudaMemcpy(out.data(), dOut, out.size(), cudaMemcpyDeviceToHost));
    return out;
  }

  std::vector<FusionBuffer> device_outputs() const { return {{dOut, sizeof(float) * (size_t)nx * ny}}; }

  bool check_cpu() const
  {
    std::vector<size_t> idx = fusion_sample((size_t)nx * ny);
    idx.push_back((size_t)nx - 1);                 // the other two corners
    idx.push_back((size_t)(ny - 1) * nx);
    const std::vector<unsigned> words = fusion_gather_words(dOut, idx);
    auto at = [&](int x, int y) {
      x = std::min(std::max(x, 0), nx - 1);
      y = std::min(std::max(y, 0), ny - 1);
      return fusion_unit_float(fusion_input_bits(seed_in, (size_t)y * nx + x));
    };
    for (size_t k = 0; k < idx.size(); ++k) {
      const size_t e = idx[k];
      float got;
      std::memcpy(&got, &words[k], sizeof got);
      const int x = (int)(e % nx), y = (int)(e / nx);
      const float c = at(x, y), w = at(x - 1, y), ea = at(x + 1, y), n = at(x, y - 1), s = at(x, y + 1);
      const float ref = c0 * c + c1 * ((w + ea) + (n + s));
      const double tol = 1e-5 * (std::fabs((double)c0 * c) + std::fabs((double)c1) * (w + ea + n + s)) + 1e-7;
      const double err = std::fabs((double)got - (double)ref);
      if (!(err <= tol)) {
        fprintf(stderr, "stencil: mismatch at out[%d][%d]: got %.9g, expected %.9g (|err| %.3g, tol %.3g)\n", y, x,
                (double)got, (double)ref, err, tol);
        return false;
      }
    }
    return true;
  }

  template <class F>
  void with_args(F&& f) const
  {
    f(grid, block, shmem, (const float*)dIn, dOut, nx, ny, c0, c1);
  }

  void release()
  {
    if (dIn) FUSION_CHECK(cudaFree(dIn));
    if (dOut) FUSION_CHECK(cudaFree(dOut));
    dIn = nullptr;
    dOut = nullptr;
  }
};

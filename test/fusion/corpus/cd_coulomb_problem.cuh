// Host-side problem for cd_coulomb.cu (include after it). See problems.cuh for the interface.
//
// Sizes: nx = 1024, ny = 1024 * scale (rounded to a multiple of 4, at least 4), natoms = 4096,
// spacing h = 0.1, slice plane z0 = 0.
// Inputs: atoms with x in [0, nx*h), y in [0, ny*h), z = +-[1, 4) (so every distance is >= 1),
// q in [-1, 1). Output: pot (ny x nx float).
// Check: sampled points against a double-precision sum over the same float inputs, tolerance
// 2e-4 * sum_j |q_j / r_j| + 1e-6 (float accumulation of 4096 terms, rsqrtf within 2 ulp).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
#include "problems.cuh"

struct CoulombProblem {
  static constexpr const char* name = "coulomb";
  dim3 grid, block;
  size_t shmem = 0;

  int nx = 0, ny = 0, natoms = 0;
  float spacing = 0.1f, z0 = 0.0f;
  float4* dAtoms = nullptr;
  float* dPot = nullptr;
  std::vector<float4> hAtoms;

  void setup(double scale, unsigned seed)
  {
    release();
    nx = 1024;
    ny = std::max(4, (int)std::lround(1024.0 * scale / 4.0) * 4);
    natoms = 4096;  // a multiple of 128
    spacing = 0.1f;
    z0 = 0.0f;
    grid = dim3((nx + 31) / 32, (ny + 3) / 4, 1);
    block = dim3(32, 4, 1);
    shmem = 0;

    std::mt19937 rng(seed);
    auto unit = [&]() { return (float)(rng() >> 8) * (1.0f / 16777216.0f); };  // [0, 1)
    hAtoms.resize(natoms);
    for (int j = 0; j < natoms; ++j) {
      float4 a;
      a.x = unit() * nx * spacing;
      a.y = unit() * ny * spacing;
      const float dz = 1.0f + 3.0f * unit();
      a.z = (rng() & 1u) ? z0 + dz : z0 - dz;
      a.w = 2.0f * unit() - 1.0f;
      hAtoms[j] = a;
    }
    FUSION_CHECK(cudaMalloc(&dAtoms, sizeof(float4) * natoms));
    FUSION_CHECK(cudaMemcpy(dAtoms, hAtoms.data(), sizeof(float4) * natoms, cudaMemcpyHostToDevice));
    FUSION_CHECK(cudaMalloc(&dPot, sizeof(float) * (size_t)nx * ny));
    poison();
  }

  void poison() { FUSION_CHECK(cudaMemset(dPot, 0xFF, sizeof(float) * (size_t)nx * ny)); }

  std::vector<unsigned char> outputs() const
  {
    std::vector<unsigned char> out(sizeof(float) * (size_t)nx * ny);
    FUSION_CHECK(cudaMemcpy(out.data(), dPot, out.size(), cudaMemcpyDeviceToHost));
    return out;
  }

  std::vector<FusionBuffer> device_outputs() const { return {{dPot, sizeof(float) * (size_t)nx * ny}}; }

  bool check_cpu() const
  {
    const std::vector<unsigned char> bytes = outputs();
    const float* pot = reinterpret_cast<const float*>(bytes.data());
    for (size_t e : fusion_sample((size_t)nx * ny)) {
      const int ix = (int)(e % nx), iy = (int)(e / nx);
      const double px = (double)((float)ix * spacing), py = (double)((float)iy * spacing);
      double ref = 0.0, mag = 0.0;
      for (int j = 0; j < natoms; ++j) {
        const float4 a = hAtoms[j];
        const double dx = a.x - px, dy = a.y - py, dz = (double)a.z - z0;
        const double t = a.w / std::sqrt(dx * dx + dy * dy + dz * dz + (double)coulomb_eps);
        ref += t;
        mag += std::fabs(t);
      }
      const double tol = 2e-4 * mag + 1e-6;
      const double err = std::fabs((double)pot[e] - ref);
      if (!(err <= tol)) {
        fprintf(stderr, "coulomb: mismatch at pot[%d][%d]: got %.9g, expected %.9g (|err| %.3g, tol %.3g)\n", iy, ix,
                (double)pot[e], ref, err, tol);
        return false;
      }
    }
    return true;
  }

  template <class F>
  void with_args(F&& f) const
  {
    f(grid, block, shmem, (const float4*)dAtoms, natoms, dPot, nx, ny, spacing, z0);
  }

  void release()
  {
    if (dAtoms) FUSION_CHECK(cudaFree(dAtoms));
    if (dPot) FUSION_CHECK(cudaFree(dPot));
    dAtoms = nullptr;
    dPot = nullptr;
  }
};

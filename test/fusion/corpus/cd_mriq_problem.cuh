// Host-side problem for cd_mriq.cu (include after it). See problems.cuh for the interface.
//
// Sizes: numX = 1048576 * scale (rounded to a multiple of 256, at least 256), numK = 2048.
// Inputs: x, y, z in [-0.5, 0.5); kx, ky, kz in [-16, 16); phiMag in [0, 1). Outputs: Qr then Qi
// (numX floats each).
// Check: sampled voxels against a double-precision sum (double sin/cos) over the same float inputs,
// tolerance 2e-4 * sum_k phi_k + 1e-5 (dominated by rounding of the float argument, up to ~24 turns).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
#include "problems.cuh"

struct MriqProblem {
  static constexpr const char* name = "mriq";
  dim3 grid, block;
  size_t shmem = 0;

  int numK = 0, numX = 0;
  float4* dK = nullptr;
  float *dX = nullptr, *dY = nullptr, *dZ = nullptr;
  float *dQr = nullptr, *dQi = nullptr;
  std::vector<float4> hK;
  std::vector<float> hX, hY, hZ;

  void setup(double scale, unsigned seed)
  {
    release();
    numX = std::max(256, (int)std::lround(1048576.0 * scale / 256.0) * 256);
    numK = 2048;
    grid = dim3((numX + 255) / 256, 1, 1);
    block = dim3(256, 1, 1);
    shmem = 0;

    std::mt19937 rng(seed);
    auto unit = [&]() { return (float)(rng() >> 8) * (1.0f / 16777216.0f); };  // [0, 1)
    hK.resize(numK);
    for (int k = 0; k < numK; ++k) {
      float4 v;
      v.x = 32.0f * unit() - 16.0f;
      v.y = 32.0f * unit() - 16.0f;
      v.z = 32.0f * unit() - 16.0f;
      v.w = unit();
      hK[k] = v;
    }
    hX.resize(numX);
    hY.resize(numX);
    hZ.resize(numX);
    for (int t = 0; t < numX; ++t) {
      hX[t] = unit() - 0.5f;
      hY[t] = unit() - 0.5f;
      hZ[t] = unit() - 0.5f;
    }
    FUSION_CHECK(cudaMalloc(&dK, sizeof(float4) * numK));
    FUSION_CHECK(cudaMemcpy(dK, hK.data(), sizeof(float4) * numK, cudaMemcpyHostToDevice));
    float** in[3] = {&dX, &dY, &dZ};
    const std::vector<float>* hin[3] = {&hX, &hY, &hZ};
    for (int i = 0; i < 3; ++i) {
      FUSION_CHECK(cudaMalloc(in[i], sizeof(float) * numX));
      FUSION_CHECK(cudaMemcpy(*in[i], hin[i]->data(), sizeof(float) * numX, cudaMemcpyHostToDevice));
    }
    FUSION_CHECK(cudaMalloc(&dQr, sizeof(float) * numX));
    FUSION_CHECK(cudaMalloc(&dQi, sizeof(float) * numX));
    poison();
  }

  void poison()
  {
    FUSION_CHECK(cudaMemset(dQr, 0xFF, sizeof(float) * numX));
    FUSION_CHECK(cudaMemset(dQi, 0xFF, sizeof(float) * numX));
  }

  std::vector<unsigned char> outputs() const
  {
    const size_t bytes = sizeof(float) * numX;
    std::vector<unsigned char> out(2 * bytes);
    FUSION_CHECK(cudaMemcpy(out.data(), dQr, bytes, cudaMemcpyDeviceToHost));
    FUSION_CHECK(cudaMemcpy(out.data() + bytes, dQi, bytes, cudaMemcpyDeviceToHost));
    return out;
  }

  std::vector<FusionBuffer> device_outputs() const
  {
    return {{dQr, sizeof(float) * numX}, {dQi, sizeof(float) * numX}};
  }

  bool check_cpu() const
  {
    const std::vector<unsigned char> bytes = outputs();
    const float* qr = reinterpret_cast<const float*>(bytes.data());
    const float* qi = qr + numX;
    const double two_pi = 6.283185307179586476925;
    double phisum = 0.0;
    for (int k = 0; k < numK; ++k) phisum += hK[k].w;
    const double tol = 2e-4 * phisum + 1e-5;
    for (size_t t : fusion_sample((size_t)numX)) {
      double rr = 0.0, ri = 0.0;
      for (int k = 0; k < numK; ++k) {
        const float4 v = hK[k];
        const double arg = two_pi * ((double)v.x * hX[t] + (double)v.y * hY[t] + (double)v.z * hZ[t]);
        rr += v.w * std::cos(arg);
        ri += v.w * std::sin(arg);
      }
      const double er = std::fabs((double)qr[t] - rr), ei = std::fabs((double)qi[t] - ri);
      if (!(er <= tol) || !(ei <= tol)) {
        fprintf(stderr, "mriq: mismatch at voxel %zu: got (%.9g, %.9g), expected (%.9g, %.9g) (tol %.3g)\n", t,
                (double)qr[t], (double)qi[t], rr, ri, tol);
        return false;
      }
    }
    return true;
  }

  template <class F>
  void with_args(F&& f) const
  {
    f(grid, block, shmem, numK, numX, (const float4*)dK, (const float*)dX, (const float*)dY, (const float*)dZ, dQr,
      dQi);
  }

  void release()
  {
    if (dK) FUSION_CHECK(cudaFree(dK));
    dK = nullptr;
    float** bufs[5] = {&dX, &dY, &dZ, &dQr, &dQi};
    for (float** b : bufs) {
      if (*b) FUSION_CHECK(cudaFree(*b));
      *b = nullptr;
    }
  }
};

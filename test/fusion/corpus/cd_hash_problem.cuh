// Host-side problem for cd_hash.cu (include after it). See problems.cuh for the interface.
//
// Sizes: n = 16777216 * scale (rounded to a multiple of 256, at least 256), rounds = 64, nsalt = 1024
// (dynamic shared memory 4096 bytes per block).
// Inputs: salts, raw 32-bit std::mt19937 draws; in, filled on the device (for the 10 ms
// sizes): in[t] = fusion_input_bits(seed, t). Output: out (n unsigned).
// Check: sampled elements against the same integer computation on the host; exact.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
#include "problems.cuh"

struct HashProblem {
  static constexpr const char* name = "hash";
  dim3 grid, block;
  size_t shmem = 0;

  int n = 0, nsalt = 0, rounds = 0;
  unsigned* dIn = nullptr;
  unsigned* dOut = nullptr;
  unsigned* dSalts = nullptr;
  std::vector<unsigned> hSalts;
  unsigned seed_in = 0;

  void setup(double scale, unsigned seed)
  {
    release();
    n = std::max(256, (int)std::lround(16777216.0 * scale / 256.0) * 256);
    nsalt = 1024;  // a power of two
    rounds = 64;
    grid = dim3((n + 255) / 256, 1, 1);
    block = dim3(256, 1, 1);
    shmem = sizeof(unsigned) * (size_t)nsalt;

    std::mt19937 rng(seed);
    hSalts.resize(nsalt);
    for (int i = 0; i < nsalt; ++i) hSalts[i] = (unsigned)rng();
    FUSION_CHECK(cudaMalloc(&dSalts, sizeof(unsigned) * nsalt));
    FUSION_CHECK(cudaMemcpy(dSalts, hSalts.data(), sizeof(unsigned) * nsalt, cudaMemcpyHostToDevice));
    FUSION_CHECK(cudaMalloc(&dIn, sizeof(unsigned) * (size_t)n));
    seed_in = seed;
    fusion_fill_bits(dIn, (size_t)n, seed_in);
    FUSION_CHECK(cudaMalloc(&dOut, sizeof(unsigned) * (size_t)n));
    poison();
  }

  void poison() { FUSION_CHECK(cudaMemset(dOut, 0xFF, sizeof(unsigned) * (size_t)n)); }

  std::vector<unsigned char> outputs() const
  {
    std::vector<unsigned char> out(sizeof(unsigned) * (size_t)n);
    FUSION_CHECK(cudaMemcpy(out.data(), dOut, out.size(), cudaMemcpyDeviceToHost));
    return out;
  }

  std::vector<FusionBuffer> device_outputs() const { return {{dOut, sizeof(unsigned) * (size_t)n}}; }

  bool check_cpu() const
  {
    const std::vector<size_t> idx = fusion_sample((size_t)n);
    const std::vector<unsigned> out = fusion_gather_words(dOut, idx);
    const unsigned mask = (unsigned)nsalt - 1u;
    for (size_t k = 0; k < idx.size(); ++k) {
      const size_t t = idx[k];
      const unsigned block_salt = (unsigned)(t / block.x) * hash_block_salt;
      unsigned x = fusion_input_bits(seed_in, t);
      for (int r = 0; r < rounds; ++r) {
        x += hSalts[(x ^ (unsigned)r) & mask] ^ block_salt;
        x ^= x >> 16;
        x *= 0x85EBCA6Bu;
        x ^= x >> 13;
        x *= 0xC2B2AE35u;
        x ^= x >> 16;
        x = ((x << 13) | (x >> 19)) * 5u + 0xE6546B64u;
      }
      if (out[k] != x) {
        fprintf(stderr, "hash: mismatch at out[%zu]: got 0x%08x, expected 0x%08x\n", t, out[k], x);
        return false;
      }
    }
    return true;
  }

  template <class F>
  void with_args(F&& f) const
  {
    f(grid, block, shmem, (const unsigned*)dIn, dOut, (const unsigned*)dSalts, nsalt, n, rounds);
  }

  void release()
  {
    if (dIn) FUSION_CHECK(cudaFree(dIn));
    if (dOut) FUSION_CHECK(cudaFree(dOut));
    if (dSalts) FUSION_CHECK(cudaFree(dSalts));
    dIn = dOut = dSalts = nullptr;
  }
};

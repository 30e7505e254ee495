// Helpers shared by the runtime's GPU tests.
#pragma once
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <random>
#include <vector>

#define CK(x)                                                                                     \
  do {                                                                                            \
    cudaError_t e_ = (x);                                                                         \
    if (e_ != cudaSuccess) {                                                                      \
      std::printf("FAIL %s:%d: %s -> %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));      \
      std::exit(1);                                                                               \
    }                                                                                             \
  } while (0)

static int g_failures = 0;
#define EXPECT(cond, ...)                                                                         \
  do {                                                                                            \
    if (!(cond)) {                                                                                \
      ++g_failures;                                                                               \
      std::printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                                 \
      std::printf(__VA_ARGS__);                                                                   \
      std::printf("\n");                                                                          \
    }                                                                                             \
  } while (0)

inline std::mt19937_64& rng() {
  static std::mt19937_64 r(std::random_device{}());
  return r;
}
inline unsigned rnd(unsigned lo, unsigned hi) {  // inclusive
  return std::uniform_int_distribution<unsigned>(lo, hi)(rng());
}
inline std::vector<float> random_floats(size_t n) {
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng());
  return v;
}
inline int finish(const char* name) {
  if (g_failures) {
    std::printf("%s: %d FAILURES\n", name, g_failures);
    return 1;
  }
  std::printf("%s: PASS\n", name);
  return 0;
}

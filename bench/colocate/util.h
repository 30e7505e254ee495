// bench/colocate/util.h: what every part of the co-location benchmark shares: the CUDA error check and
// the host clock. Host only.
#pragma once
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

// Any CUDA error ends the benchmark at once, with where and what: a measurement after an error means nothing.
#define CK(x)                                                                                      \
  do {                                                                                             \
    cudaError_t e_ = (x);                                                                          \
    if (e_ != cudaSuccess) {                                                                       \
      std::fprintf(stderr, "colocate: FATAL %s:%d: %s -> %s\n", __FILE__, __LINE__, #x,            \
                   cudaGetErrorString(e_));                                                        \
      std::exit(3);                                                                                \
    }                                                                                              \
  } while (0)

namespace colo {
using Clock = std::chrono::steady_clock;
inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}
}  // namespace colo

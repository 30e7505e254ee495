// bench/colocate/util.h: what every part of the co-location benchmark shares: the CUDA error check, the
// host clock, and a thread's context. Host only.
#pragma once
#include <cuda.h>
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

// A thread the benchmark starts works in its starter's context: a green context (colocate --green-sms) is
// current per thread, and a new thread would otherwise launch in the device's primary context, on every SM.
// The starter takes current_context() (null before CUDA's first call) and the new thread adopts it.
inline CUcontext current_context() {
  CUcontext ctx = nullptr;
  return cuCtxGetCurrent(&ctx) == CUDA_SUCCESS ? ctx : nullptr;
}
inline void adopt_context(CUcontext ctx, const char* who) {
  if (ctx && cuCtxSetCurrent(ctx) != CUDA_SUCCESS) {
    std::fprintf(stderr, "colocate: %s could not make its starter's context current\n", who);
    std::exit(1);
  }
}
}  // namespace colo

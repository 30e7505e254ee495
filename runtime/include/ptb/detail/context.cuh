// ptb/detail/context.cuh: which CUDA context the calling thread is in, as a number that changes when the
// device is reset (cudaDeviceReset destroys the primary context; the next CUDA call makes a new one).
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

namespace ptb {

namespace detail {

// The driver's cuCtxGetCurrent and cuCtxGetId (CUDA 12.0), found through the runtime so that a program
// need not link libcuda. Their types are spelt here (CUcontext is a pointer, CUresult an int) so that the
// runtime does not include <cuda.h>.
struct ContextCalls {
  using GetCurrent = int (*)(void**);
  using GetId = int (*)(void*, unsigned long long*);
  GetCurrent get_current = nullptr;
  GetId get_id = nullptr;
};

inline const ContextCalls& context_calls() {
  static const ContextCalls calls = [] {
    ContextCalls c;
    void* f = nullptr;
    cudaDriverEntryPointQueryResult __q = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &f, 12000, cudaEnableDefault, &__q) == cudaSuccess &&
        __q == cudaDriverEntryPointSuccess)
      c.get_current = reinterpret_cast<ContextCalls::GetCurrent>(f);
    f = nullptr;
    if (cudaGetDriverEntryPointByVersion("cuCtxGetId", &f, 12000, cudaEnableDefault, &__q) == cudaSuccess &&
        __q == cudaDriverEntryPointSuccess)
      c.get_id = reinterpret_cast<ContextCalls::GetId>(f);
    return c;
  }();
  return calls;
}

// The unique id of the calling thread's current context (ids are never reused within a process), or 0
// when it cannot be told (no context, or a driver without the calls: then a reset is not detected).
// Call it after a runtime call that made the device's context current (cudaGetDevice does not; a launch,
// cudaSetDevice, or cudaStreamIsCapturing on the launch's stream does).
inline unsigned long long current_context_id() {
  const ContextCalls& c = context_calls();
  if (!c.get_current || !c.get_id) return 0;
  void* ctx = nullptr;
  if (c.get_current(&ctx) != 0 || !ctx) return 0;
  unsigned long long id = 0;
  return c.get_id(ctx, &id) == 0 ? id : 0;
}

} // namespace detail

} // namespace ptb

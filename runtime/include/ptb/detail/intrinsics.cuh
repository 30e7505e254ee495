// ptb/detail/intrinsics.cuh: device helpers: %smid, %nsmid, %globaltimer, volatile loads and stores.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

namespace ptb {

namespace detail {

__device__ __forceinline__ unsigned smid() {
  unsigned __r;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(__r));
  return __r;
}
__device__ __forceinline__ unsigned nsmid() {
  unsigned __r;
  asm volatile("mov.u32 %0, %%nsmid;" : "=r"(__r));
  return __r;
}
__device__ __forceinline__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
template <class _Tp> __device__ __forceinline__ _Tp vload(const _Tp* p) { return *static_cast<const volatile _Tp*>(p); }
template <class _Tp> __device__ __forceinline__ void vstore(_Tp* p, _Tp v) { *static_cast<volatile _Tp*>(p) = v; }

} // namespace detail

} // namespace ptb

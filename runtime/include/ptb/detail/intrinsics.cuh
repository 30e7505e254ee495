// ptb/detail/intrinsics.cuh: device helpers: %smid, %nsmid, %globaltimer, volatile loads and stores.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

namespace ptb {

namespace detail {

__device__ __forceinline__ unsigned smid() {
  unsigned r;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned nsmid() {
  unsigned r;
  asm volatile("mov.u32 %0, %%nsmid;" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
template <class T>
__device__ __forceinline__ T vload(const T* p) {
  return *static_cast<const volatile T*>(p);
}
template <class T>
__device__ __forceinline__ void vstore(T* p, T v) {
  *static_cast<volatile T*>(p) = v;
}

}  // namespace detail

}  // namespace ptb

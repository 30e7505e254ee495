// A slot copy of a called device function keeps the original's exception specification.
// RUN: %fuse-kernels %s --kernel k=64 --kernel other=64 --ratio 1:1 -o %t.cu 2>/dev/null
// RUN: %strip-directives %t.cu | FileCheck %s
// RUN: %if nvcc %{ %nvcc -c %t.cu -o %t.o %}
__device__ int a() noexcept { return threadIdx.x; }
__device__ int b() noexcept(sizeof(int) == 4) { return threadIdx.y; }
__device__ auto c() noexcept -> int { return threadIdx.z; }
__global__ void k(int *out) {
  static_assert(noexcept(a()) && noexcept(b()) && noexcept(c()), "noexcept");
  out[threadIdx.x] = a() + b() + c();
}
__global__ void other(float *p) { p[threadIdx.x] = 0.f; }

// CHECK: static __device__ __forceinline__ int a__slot(const uint3 blockIdx, const dim3 gridDim, const uint3 threadIdx, const dim3 blockDim, unsigned char* const ptb_dyn_shared) noexcept
// CHECK: static __device__ __forceinline__ int b__slot(const uint3 blockIdx, const dim3 gridDim, const uint3 threadIdx, const dim3 blockDim, unsigned char* const ptb_dyn_shared) noexcept(sizeof(int) == 4)
// CHECK: static __device__ __forceinline__ int c__slot(const uint3 blockIdx, const dim3 gridDim, const uint3 threadIdx, const dim3 blockDim, unsigned char* const ptb_dyn_shared) noexcept

// A slot copy of a called device function keeps its default arguments: calls that rely on them stay
// short and must still compile. The default may come from the definition or from an earlier declaration.
// RUN: %fuse-kernels %s --kernel k=64 --kernel other=64 --ratio 1:1 -o %t.cu 2>/dev/null
// RUN: %strip-directives %t.cu | FileCheck %s
// RUN: %if nvcc %{ %nvcc -c %t.cu -o %t.o %}
__device__ void f(float2 *v, int j, int stride = 1) { v[threadIdx.x * stride + j].x += 1.f; }
__device__ int g(int a, int b = 2, unsigned c = sizeof(float2));
__device__ int g(int a, int b, unsigned c) { return a * b + static_cast<int>(threadIdx.x + c); }
__global__ void k(float2 *v, int *out) {
  f(v, 0);
  f(v, 1, 2);
  out[threadIdx.x] = g(3) + g(4, 5);
}
__global__ void other(float *p) { p[threadIdx.x] = 0.f; }

// CHECK: static __device__ __forceinline__ void f__slot(const uint3 blockIdx, const dim3 gridDim, const uint3 threadIdx, const dim3 blockDim, unsigned char* const ptb_dyn_shared, float2 *v, int j, int stride = 1)
// CHECK: static __device__ __forceinline__ int g__slot(const uint3 blockIdx, const dim3 gridDim, const uint3 threadIdx, const dim3 blockDim, unsigned char* const ptb_dyn_shared, int a, int b = 2, unsigned c = sizeof(float2))
// CHECK:      void k__slot(
// CHECK:        f__slot<PtbBar, PtbThreads>(blockIdx, gridDim, threadIdx, blockDim, ptb_dyn_shared, v, 0);
// CHECK-NEXT:   f__slot<PtbBar, PtbThreads>(blockIdx, gridDim, threadIdx, blockDim, ptb_dyn_shared, v, 1, 2);
// CHECK-NEXT:   out[threadIdx.x] = g__slot<PtbBar, PtbThreads>(blockIdx, gridDim, threadIdx, blockDim, ptb_dyn_shared, 3) + g__slot<PtbBar, PtbThreads>(blockIdx, gridDim, threadIdx, blockDim, ptb_dyn_shared, 4, 5);

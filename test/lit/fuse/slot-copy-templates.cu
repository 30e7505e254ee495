// A called function template that needs a slot copy is copied as a template: the slot's two template
// parameters lead the original's (defaults kept), the copy is written once for all the instantiations
// the slot calls, and each call keeps its own template arguments after the slot's (a deduced call gets
// only the slot's). A template that calls another one, and a barrier inside a template, are copied the
// same way. An explicit specialization is refused, and so are instantiations that would need different
// copies (an overload that reads threadIdx for one type and not for another).
// RUN: %fuse-kernels %s --kernel k=64 --kernel other=64 --ratio 1:1 -o %t.cu 2>/dev/null
// RUN: %strip-directives %t.cu | FileCheck %s
// RUN: %if nvcc %{ %nvcc -c %t.cu -o %t.o %}
// RUN: not %fuse-kernels %s --kernel spec=64 --kernel other=64 --ratio 1:1 -o %t.spec.cu 2>&1 | FileCheck %s --check-prefix=SPEC
// RUN: not %fuse-kernels %s --kernel mixed=64 --kernel other=64 --ratio 1:1 -o %t.mixed.cu 2>&1 | FileCheck %s --check-prefix=MIXED
// RUN: not test -e %t.spec.cu
template <typename T, int S = 2>
__device__ T load(const T *p, int j = 0) { return p[threadIdx.x * S + j]; }
template <typename T>
__device__ T twice(const T *p) { __syncthreads(); return load<T, 1>(p) + load(p); }
__global__ void k(float *a, int *b) {
  a[threadIdx.x] = load<float>(a) + load<float, 1>(a, 1) + twice(a);
  b[threadIdx.x] = load(b);
}
__global__ void other(float *p) { p[threadIdx.x] = 0.f; }

template <typename T> __device__ T pick(const T *p) { return p[0]; }
template <> __device__ float pick<float>(const float *p) { return p[threadIdx.x]; }
__global__ void spec(float *a) { a[threadIdx.x] = pick(a); }

__device__ float g(float x) { return x + threadIdx.x; }
__device__ int g(int x) { return x; }
template <typename T> __device__ T h(T x) { return g(x) + static_cast<T>(threadIdx.x); }
__global__ void mixed(float *a, int *b) { a[threadIdx.x] = h(a[0]); b[threadIdx.x] = h(b[0]); }

// CHECK:      template <unsigned PtbBar, unsigned PtbThreads, typename T, int S = 2>
// CHECK-NEXT: static __device__ __forceinline__ T load__slot(const uint3 blockIdx, const dim3 gridDim, const uint3 threadIdx, const dim3 blockDim, unsigned char* const ptb_dyn_shared, const T *p, int j = 0)
// CHECK-NOT:  load__slot(
// CHECK:      template <unsigned PtbBar, unsigned PtbThreads, typename T>
// CHECK-NEXT: static __device__ __forceinline__ T twice__slot(const uint3 blockIdx, const dim3 gridDim, const uint3 threadIdx, const dim3 blockDim, unsigned char* const ptb_dyn_shared, const T *p)
// CHECK:      { ::ptb::bar_sync<PtbBar, PtbThreads>(); return load__slot<PtbBar, PtbThreads, T, 1>(blockIdx, gridDim, threadIdx, blockDim, ptb_dyn_shared, p) + load__slot<PtbBar, PtbThreads>(blockIdx, gridDim, threadIdx, blockDim, ptb_dyn_shared, p); }
// CHECK:      void k__slot(
// CHECK:        a[threadIdx.x] = load__slot<PtbBar, PtbThreads, float>(blockIdx, gridDim, threadIdx, blockDim, ptb_dyn_shared, a) + load__slot<PtbBar, PtbThreads, float, 1>(blockIdx, gridDim, threadIdx, blockDim, ptb_dyn_shared, a, 1) + twice__slot<PtbBar, PtbThreads>(blockIdx, gridDim, threadIdx, blockDim, ptb_dyn_shared, a);
// CHECK-NEXT:   b[threadIdx.x] = load__slot<PtbBar, PtbThreads>(blockIdx, gridDim, threadIdx, blockDim, ptb_dyn_shared, b);

// SPEC: error: kernel 'spec' cannot be fused: it calls 'pick', which reads the thread/block index, meets at a barrier or uses shared memory, and cannot be copied for a slot: it is an explicit specialization of a template
// MIXED: error: kernel 'mixed' cannot be fused: the instantiations of 'h' it calls would need different slot copies

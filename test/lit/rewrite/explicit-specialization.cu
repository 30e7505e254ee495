// An explicit specialization of a device function template that reads blockIdx: its clone is an explicit
// specialization of the primary template's clone, so the primary is cloned too (and declared early
// enough), and the explicit template arguments are kept (they may not be deducible).
// RUN: %ptb-transform %s -o %t.cu
// RUN: %strip-directives %t.cu | FileCheck %s
// RUN: %if nvcc %{ %nvcc -c %t.cu -o %t.o %}

template <typename T> __device__ T idx(T v);
template <> __device__ float idx<float>(float v) { return v * blockIdx.x; }
template <typename T> __device__ T idx(T v) { return v + 1; }

template <int N> __device__ int row() { return N; }
template <> __device__ int row<2>() { return 2 * gridDim.x; }

__global__ void k(float *p) { p[threadIdx.x] = idx(1.0f) + row<2>(); }
void run(float *p) { k<<<1, 1>>>(p); }

// CHECK:      template <typename T> __device__ T idx(T v);
// CHECK-NEXT: template <typename T>
// CHECK-NEXT:  __device__ T idx__ptb(const uint3 blockIdx, const dim3 gridDim, T v);
// CHECK:      template <> __device__ float idx<float>(float v) { return v * blockIdx.x; }
// CHECK-NEXT: // PTB clone of idx
// CHECK-NEXT: template <> __device__ float idx__ptb<float>(const uint3 blockIdx, const dim3 gridDim, float v)
// CHECK:      template <typename T> __device__ T idx(T v) { return v + 1; }
// CHECK-NEXT: // PTB clone of idx
// CHECK-NEXT: template <typename T> __device__ T idx__ptb(const uint3 blockIdx, const dim3 gridDim, T v)
// CHECK:      template <int N> __device__ int row() { return N; }
// CHECK-NEXT: // PTB clone of row
// CHECK-NEXT: template <int N> __device__ int row__ptb(const uint3 blockIdx, const dim3 gridDim)
// CHECK:      template <> __device__ int row__ptb<2>(const uint3 blockIdx, const dim3 gridDim)
// CHECK:      p[threadIdx.x] = idx__ptb(blockIdx, gridDim, 1.0f) + row__ptb<2>(blockIdx, gridDim);

// A template's clone has one text for every instantiation: a call it sends to a clone in one
// instantiation goes to a clone in the others too. Here f<float> calls g(float), which reads blockIdx,
// and f<int> calls g(int), which reads neither index: g(int) gets a clone as well (it only passes the
// indices on). Before, f__ptb<int> called g__ptb(float) through a conversion, the wrong function.
// RUN: %ptb-transform %s -o %t.cu
// RUN: %strip-directives %t.cu | FileCheck %s
// RUN: %if nvcc %{ %nvcc -c %s -o %t.orig.o %}
// RUN: %if nvcc %{ %nvcc -c %t.cu -o %t.o %}

__device__ float g(float v) { return v + blockIdx.x; }
__device__ int g(int v) { return v * 2; }
template <typename T> __device__ T f(T v) { return g(v) + T(gridDim.x); }
__global__ void k(float *a, int *b) { a[0] = f(1.0f); b[0] = f(1); }
void run(float *a, int *b) { k<<<2, 1>>>(a, b); }

// CHECK:      __device__ float g__ptb(const uint3 blockIdx, const dim3 gridDim, float v)
// CHECK:      __device__ int g(int v) { return v * 2; }
// CHECK-NEXT: // PTB clone of g
// CHECK-NEXT: __device__ int g__ptb(const uint3 blockIdx, const dim3 gridDim, int v)
// CHECK:      template <typename T> __device__ T f__ptb(const uint3 blockIdx, const dim3 gridDim, T v)
// CHECK:      { return g__ptb(blockIdx, gridDim, v) + T(gridDim.x); }
// CHECK:      { a[0] = f__ptb(blockIdx, gridDim, 1.0f); b[0] = f__ptb(blockIdx, gridDim, 1); }

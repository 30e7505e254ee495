// A call to a device function that reads blockIdx, written in a macro argument, is redirected where it
// is written (once, even when the macro expands its argument twice).
// RUN: %ptb-transform %s -o %t.cu
// RUN: %strip-directives %t.cu | FileCheck %s
// RUN: %if nvcc %{ %nvcc -c %t.cu -o %t.o %}
#define TWICE(x) ((x) + (x))
#define ID(x) x
__device__ int bid() { return blockIdx.x; }
__global__ void k(int *p) { p[threadIdx.x] = TWICE(bid()) + ID(bid()); }
void run(int *p) { k<<<2, 32>>>(p); }
// CHECK: static __device__ __forceinline__ void k__ptb_task(
// CHECK-NEXT: #line
// CHECK-NEXT: { p[threadIdx.x] = TWICE(bid__ptb(blockIdx, gridDim)) + ID(bid__ptb(blockIdx, gridDim)); }

// blockIdx/gridDim read two calls deep: the device functions on the way get PTB clones that take the
// virtual indices; the originals stay for the code that still calls them (the original kernel, a
// second kernel, host-device code). Macros expanded in the body need no edit.
// RUN: %ptb-transform %s -o %t.cu
// RUN: %strip-directives %t.cu | FileCheck %s
// RUN: %if nvcc %{ %nvcc -c %t.cu -o %t.o %}

#define BLOCK_BASE (blockIdx.x * blockDim.x)

__device__ unsigned grid_threads() { return gridDim.x * blockDim.x; }
template <typename T>
__device__ T shift(T v) { return v + blockIdx.x + grid_threads(); }
__device__ int no_index(int v) { return v * 2; }

template <typename T>
__global__ void chain(T *out) {
  unsigned i = BLOCK_BASE + threadIdx.x;
  out[i] = shift(T(no_index(1)));
}

__global__ void other(unsigned *out) { out[0] = grid_threads(); }

void run(float *f, unsigned *u) {
  chain<<<8, 64>>>(f);
  other<<<1, 1>>>(u);
}

// CHECK:      __device__ unsigned grid_threads() { return gridDim.x * blockDim.x; }
// CHECK-NEXT: // PTB clone of grid_threads
// CHECK-NEXT: __device__ unsigned grid_threads__ptb(const uint3 blockIdx, const dim3 gridDim)
// CHECK:      { return gridDim.x * blockDim.x; }
// CHECK:      __device__ T shift(T v) { return v + blockIdx.x + grid_threads(); }
// CHECK-NEXT: // PTB clone of shift
// CHECK-NEXT: template <typename T>
// CHECK-NEXT: __device__ T shift__ptb(const uint3 blockIdx, const dim3 gridDim, T v)
// CHECK:      { return v + blockIdx.x + grid_threads__ptb(blockIdx, gridDim); }
// CHECK:      __device__ int no_index(int v) { return v * 2; }
// CHECK-NOT:  no_index__ptb
// CHECK:      static __device__ __forceinline__ void chain__ptb_task(
// CHECK:        unsigned i = BLOCK_BASE + threadIdx.x;
// CHECK-NEXT:   out[i] = shift__ptb(blockIdx, gridDim, T(no_index(1)));
// CHECK:      __global__ void other(unsigned *out) { out[0] = grid_threads(); }
// CHECK:      static __device__ __forceinline__ void other__ptb_task(
// CHECK-NEXT: #line
// CHECK-NEXT: { out[0] = grid_threads__ptb(blockIdx, gridDim); }

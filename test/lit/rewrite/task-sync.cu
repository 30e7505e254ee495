// The barrier between a worker's tasks is dropped (run_tasks<TaskSync::none>) only when no thread of a
// task can depend on another: no shared memory, barrier, warp-level operation or inline asm in the
// kernel or in anything it calls (docs/generated-code.md).
// RUN: %ptb-transform %s -o %t.cu
// RUN: %strip-directives %t.cu | FileCheck %s
// RUN: %if nvcc %{ %nvcc -c %t.cu -o %t.o %}

__device__ float twice(float v) { return 2.0f * v; }
__device__ float warp_sum(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}

__global__ void independent(float *p) { p[blockIdx.x * blockDim.x + threadIdx.x] = twice(1.0f); }
__global__ void shuffles_in_callee(float *p) { p[blockIdx.x] = warp_sum(p[threadIdx.x]); }
__global__ void shared_tile(float *p) {
  __shared__ float t[32];
  t[threadIdx.x] = p[threadIdx.x];
  p[blockIdx.x * 32 + threadIdx.x] = t[31 - threadIdx.x];
}
__global__ void with_asm(unsigned *p) {
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  p[blockIdx.x * 32 + threadIdx.x] = lane;
}

// CHECK:      __global__ void independent__ptb(
// CHECK-NEXT:   ::ptb::run_tasks<::ptb::TaskSync::none>(ptb_launch,
// CHECK:      __global__ void shuffles_in_callee__ptb(
// CHECK-NEXT:   ::ptb::run_tasks(ptb_launch,
// CHECK:      __global__ void shared_tile__ptb(
// CHECK-NEXT:   ::ptb::run_tasks(ptb_launch,
// CHECK:      __global__ void with_asm__ptb(
// CHECK-NEXT:   ::ptb::run_tasks(ptb_launch,

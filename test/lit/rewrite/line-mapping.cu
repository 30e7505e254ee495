// #line maps the output back: nvcc reports an error in the copied kernel body at this file's line.
// REQUIRES: nvcc
// RUN: %ptb-transform %s -o %t.cu
// RUN: not %nvcc -DBREAK_IT -c %t.cu -o %t.o 2>&1 | FileCheck %s
__global__ void k(int *p) {
  p[blockIdx.x] = 1;
#ifdef BREAK_IT
  static_assert(sizeof(int) == 3, "line mapping probe");
#endif
}
void run(int *p) { k<<<1, 1>>>(p); }
// CHECK: line-mapping.cu(8): error: static assertion failed with "line mapping probe"

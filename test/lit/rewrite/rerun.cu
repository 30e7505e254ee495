// Transforming an output again is detected and refused; nothing is written.
// RUN: %ptb-transform %s -o %t.cu
// RUN: rm -f %t.again.cu
// RUN: not %ptb-transform %t.cu -o %t.again.cu 2>&1 | FileCheck %s
// RUN: not test -e %t.again.cu
__global__ void k(int *p) { p[blockIdx.x] = 1; }
void run(int *p) { k<<<1, 1>>>(p); }
// CHECK: error: this file was already transformed by ptb-transform; transform the original source instead
// CHECK: nothing written

// Regression test (fixed): fuse-kernels looks for its marker only after parsing, so a fuse-kernels output given again without
// -I <runtime/include> fails with "fatal error: 'ptb/ptb.cuh' file not found" instead of the marker error
// (ptb-transform checks its marker before parsing: test/lit/rewrite/rerun.cu). Expected: the marker error
// whatever the include path.
// RUN: %fuse-kernels %s --kernel a=32 --kernel b=32 --ratio 1:1 -o %t.cu 2> /dev/null
// RUN: rm -f %t.again.cu
// RUN: not %fuse-kernels %t.cu --kernel a=32 --kernel b=32 --ratio 1:1 -o %t.again.cu 2>&1 | FileCheck %s
// RUN: not test -e %t.again.cu
__global__ void a(int *p) { p[blockIdx.x * blockDim.x + threadIdx.x] = 1; }
__global__ void b(int *p) { p[blockIdx.x * blockDim.x + threadIdx.x] = 2; }
// CHECK: {{.*}}.tmp.cu:1:1: error: this file was written by fuse-kernels; fuse the original sources instead

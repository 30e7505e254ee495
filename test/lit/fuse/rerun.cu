// A file written by fuse-kernels (its first line is the marker) is not fused again: an error at its
// first line, nothing written.
// RUN: %fuse-kernels %s --kernel a=32 --kernel b=32 --ratio 1:1 -o %t.cu 2> /dev/null
// RUN: rm -f %t.again.cu
// RUN: not %fuse-kernels %t.cu --kernel a=32 --kernel b=32 --ratio 1:1 -o %t.again.cu -- -I %S/../../../runtime/include 2>&1 | FileCheck %s
// RUN: not test -e %t.again.cu
__global__ void a(int *p) { p[blockIdx.x * blockDim.x + threadIdx.x] = 1; }
__global__ void b(int *p) { p[blockIdx.x * blockDim.x + threadIdx.x] = 2; }
// CHECK: {{.*}}rerun.cu.tmp.cu:1:1: error: this file was written by fuse-kernels; fuse the original sources instead
// CHECK: fuse-kernels: nothing written (errors above)

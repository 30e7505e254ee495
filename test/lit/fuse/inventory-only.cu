// fuse-kernels parses its inputs and prints the inventory of the kernels named with --kernel (the fusion
// itself is not implemented yet).
// RUN: %fuse-kernels %s --kernel tc --kernel cd | FileCheck %s
// RUN: %fuse-kernels --version | FileCheck %s --check-prefix=VERSION
#include <mma.h>
__global__ void tc(const half *a, float *c) { c[blockIdx.x] = __half2float(a[threadIdx.x]); }
__global__ void cd(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = sinf(p[i]);
}
__global__ void other(float *p) { p[0] = 0; }
// CHECK: {{.*}}inventory-only.cu: 2 kernels
// CHECK: tc  ({{.*}}inventory-only.cu:6:17)
// CHECK: cd  ({{.*}}inventory-only.cu:7:17)
// CHECK-NOT: other
// VERSION: fuse-kernels {{[0-9.]+}} (clang 19.

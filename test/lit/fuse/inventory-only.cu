// --list-kernels prints the inventory of every kernel in the inputs (as ptb-transform --list-kernels
// does) instead of fusing; --kernel and --ratio are not needed then.
// RUN: %fuse-kernels --list-kernels %s | FileCheck %s
// RUN: %fuse-kernels --list-kernels --format=json %s | FileCheck %s --check-prefix=JSON
// RUN: %fuse-kernels --version | FileCheck %s --check-prefix=VERSION
#include <mma.h>
__global__ void tc(const half *a, float *c) { c[blockIdx.x] = __half2float(a[threadIdx.x]); }
__global__ void cd(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = sinf(p[i]);
}
__global__ void other(float *p) { p[0] = 0; }
// CHECK: {{.*}}inventory-only.cu: 3 kernels
// CHECK: tc  ({{.*}}inventory-only.cu:7:17)
// CHECK: cd  ({{.*}}inventory-only.cu:8:17)
// CHECK: other  ({{.*}}inventory-only.cu:12:17)
// JSON: "name": "tc",
// JSON: "name": "cd",
// JSON: "name": "other",
// VERSION: fuse-kernels {{[0-9.]+}} (clang 19.

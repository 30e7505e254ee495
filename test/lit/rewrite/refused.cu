// Kernels the PTB rewrite cannot handle are left byte for byte as they were, each with a warning that
// names the construct and where it is; their launches stay plain launches; the other kernels go on.
// RUN: %ptb-transform %s -o %t.cu 2> %t.err
// RUN: FileCheck %s --check-prefix=DIAG < %t.err
// RUN: %strip-directives %t.cu | FileCheck %s
// RUN: %if nvcc %{ %nvcc -rdc=true -c %t.cu -o %t.o %}
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void grid_sync(int *p) {
  cg::this_grid().sync();
  p[0] = 1;
}

__global__ void child(int *p) { p[threadIdx.x] = 2; }
__global__ void parent(int *p) { child<<<1, 32>>>(p); }

__global__ void reads_smid(unsigned *p) {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  p[blockIdx.x] = id;
}

__global__ void __cluster_dims__(2, 1, 1) clustered(int *p) { p[blockIdx.x] = 3; }

__device__ int by_value(int x) { return x + blockIdx.x; }
__global__ void lambda_no_capture(int *p) {
  auto f = [](int x) { return x + blockIdx.x; };
  p[threadIdx.x] = f(1) + by_value(0);
}

__global__ void fine(int *p) { p[blockIdx.x] = 4; }

void run(int *p, unsigned *u) {
  grid_sync<<<1, 32>>>(p);
  parent<<<1, 1>>>(p);
  reads_smid<<<1, 1>>>(u);
  clustered<<<2, 32>>>(p);
  lambda_no_capture<<<1, 32>>>(p);
  fine<<<1, 1>>>(p);
}

// DIAG: refused.cu:11:3: warning: kernel 'grid_sync' is left as it is (no PTB twin): grid-wide sync
// DIAG: refused.cu:16:34: warning: kernel 'parent' is left as it is (no PTB twin): dynamic parallelism: launches a kernel from device code
// DIAG: refused.cu:20:3: warning: kernel 'reads_smid' is left as it is (no PTB twin): %smid read
// DIAG: refused.cu:24:{{[0-9]+}}: warning: kernel 'clustered' is left as it is (no PTB twin): thread-block cluster
// DIAG: refused.cu:28:12: warning: kernel 'lambda_no_capture' is left as it is (no PTB twin): lambda without capture default
// CHECK-NOT: grid_sync__ptb
// CHECK-NOT: parent__ptb
// CHECK:     child__ptb_task
// CHECK-NOT: reads_smid__ptb
// CHECK-NOT: clustered__ptb
// CHECK-NOT: lambda_no_capture__ptb
// CHECK:     fine__ptb_task
// CHECK:     grid_sync<<<1, 32>>>(p);
// CHECK-NEXT: parent<<<1, 1>>>(p);
// CHECK-NEXT: reads_smid<<<1, 1>>>(u);
// CHECK-NEXT: clustered<<<2, 32>>>(p);
// CHECK-NEXT: lambda_no_capture<<<1, 32>>>(p);
// CHECK-NEXT: fine__ptb_launch(::ptb::LaunchConfig(1, 1), p);

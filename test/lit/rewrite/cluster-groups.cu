// Cluster kernels (issue 38): cooperative_groups.h declares cluster groups only for nvcc (or where the
// cluster intrinsics are said to exist); the parse must still see them, so that a kernel that uses
// cg::this_cluster() is refused with a located warning, as every cluster kernel is, and the rest written.
// RUN: %ptb-transform %s -o %t.cu 2> %t.err
// RUN: FileCheck %s --check-prefix=DIAG < %t.err
// RUN: %strip-directives %t.cu | FileCheck %s
// RUN: %if nvcc %{ %nvcc -c %t.cu -o %t.o %}
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void __cluster_dims__(2, 1, 1) with_dims(float *p) {
  cg::cluster_group c = cg::this_cluster();
  c.sync();
  p[threadIdx.x] = c.block_rank();
}

__device__ unsigned rank_in_cluster() { return cg::this_cluster().block_rank(); }

__global__ void through_callee(float *p) { p[threadIdx.x] = rank_in_cluster(); }

__global__ void plain(float *p) { p[threadIdx.x] = 1.0f; }

void run(float *p) {
  with_dims<<<2, 32>>>(p);
  through_callee<<<2, 32>>>(p);
  plain<<<2, 32>>>(p);
}

// DIAG: cluster-groups.cu:11:{{[0-9]+}}: warning: kernel 'with_dims' is left as it is (no PTB twin): thread-block cluster
// DIAG: cluster-groups.cu:17:{{[0-9]+}}: warning: kernel 'through_callee' is left as it is (no PTB twin): thread-block cluster: uses cooperative_groups cluster group
// DIAG: 1 kernel made PTB, 2 left as they are, 1 launch rewritten
// CHECK-NOT: with_dims__ptb
// CHECK-NOT: through_callee__ptb
// CHECK:     with_dims<<<2, 32>>>(p);
// CHECK-NEXT: through_callee<<<2, 32>>>(p);
// CHECK-NEXT: plain__ptb_launch(::ptb::LaunchConfig(2, 32), p);

// Kernels that cannot run in a slot are refused with a located error naming the reason; nothing is
// written and the exit code is non-zero: a called function that reads threadIdx but cannot be copied for
// the slot (an explicit specialization of a template), a block barrier in a called function defined after the kernel, cooperative
// groups beyond the block group, kernel templates, a thread-dependent return before a barrier.
// RUN: rm -f %t.out
// RUN: not %fuse-kernels %s --kernel reads_tid=32 --kernel ok=32 --ratio 1:1 -o %t.out 2>&1 | FileCheck %s --check-prefixes=TID,ALL
// RUN: not test -e %t.out
// RUN: not %fuse-kernels %s --kernel ok=32 --kernel calls_bar=32 --ratio 1:1 -o %t.out 2>&1 | FileCheck %s --check-prefixes=BAR,ALL
// RUN: not test -e %t.out
// RUN: not %fuse-kernels %s --kernel uses_cg=64 --kernel ok=32 --ratio 1:1 -o %t.out 2>&1 | FileCheck %s --check-prefixes=CG,ALL
// RUN: not test -e %t.out
// RUN: not %fuse-kernels %s --kernel templ=32 --kernel ok=32 --ratio 1:1 -o %t.out 2>&1 | FileCheck %s --check-prefixes=TEMPL,ALL
// RUN: not test -e %t.out
// RUN: not %fuse-kernels %s --kernel early=64 --kernel ok=32 --ratio 1:1 -o %t.out 2>&1 | FileCheck %s --check-prefixes=EARLY,ALL
// RUN: not test -e %t.out
// Two refused kernels: both reported.
// RUN: not %fuse-kernels %s --kernel reads_tid=32 --kernel templ=32 --ratio 1:1 -o %t.out 2>&1 | FileCheck %s --check-prefixes=TID,TEMPL,ALL
// RUN: not test -e %t.out
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

template <int N> __device__ int tid() { return threadIdx.x + N; }
template <> __device__ int tid<0>() { return threadIdx.x; }
__device__ void sync_here();

__global__ void ok(float *p) { p[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f; }
__global__ void reads_tid(int *p) { p[blockIdx.x] = tid<0>(); }
// TID: {{.*}}errors-kernels.cu:[[# @LINE - 1]]:53: error: kernel 'reads_tid' cannot be fused: it calls 'tid', which reads the thread/block index, meets at a barrier or uses shared memory, and cannot be copied for a slot: it is an explicit specialization of a template
__global__ void calls_bar(int *p) {
  sync_here();
  p[blockIdx.x] = 1;
}
// BAR: {{.*}}errors-kernels.cu:[[# @LINE - 3]]:3: error: kernel 'calls_bar' cannot be fused: it calls 'sync_here', which reads the thread/block index, meets at a barrier or uses shared memory, and cannot be copied for a slot: it is defined after 'calls_bar', which calls it (define it before)
__device__ void sync_here() { __syncthreads(); }
__global__ void uses_cg(int *p) {
  cg::thread_block b = cg::this_thread_block();
  auto t = cg::tiled_partition<32>(b);
  t.sync();
  p[blockIdx.x] = 1;
}
// CG: {{.*}}errors-kernels.cu:[[# @LINE - 4]]:12: error: kernel 'uses_cg' cannot be fused: it uses cooperative groups ('cooperative_groups::{{.*}}tiled_partition'); in a slot only this_thread_block() and its sync, thread_rank, size, group_index, thread_index and dim_threads work
template <typename T> __global__ void templ(T *p) { p[blockIdx.x] = T(1); }
// TEMPL: {{.*}}errors-kernels.cu:[[# @LINE - 1]]:39: error: kernel 'templ' cannot be fused: kernel templates are not fused
void instantiate(int *p) { templ<<<1, 32>>>(p); }
__global__ void early(int *p, int n) {
  if (threadIdx.x >= n) return;
  __syncthreads();
  p[threadIdx.x] = 1;
}
// EARLY: {{.*}}errors-kernels.cu:[[# @LINE - 4]]:25: error: kernel 'early' cannot be fused: thread-dependent return before a barrier: {{.*}}; a fused slot cannot park the threads that return

// ALL: fuse-kernels: nothing written (errors above)

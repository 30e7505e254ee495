// cub headers parse; the barriers inside cub's block reduction count as the kernel's (reached through
// the call), so a thread-dependent return before the reduction is refused.
// RUN: %ptb-transform --list-kernels %s | FileCheck %s
#include <cub/block/block_reduce.cuh>

template <int Threads>
__global__ void block_sum(const int *in, int *out) {
  using Reduce = cub::BlockReduce<int, Threads>;
  __shared__ typename Reduce::TempStorage temp;
  int v = in[blockIdx.x * Threads + threadIdx.x];
  int s = Reduce(temp).Sum(v);
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}

template <int Threads>
__global__ void early_exit_sum(const int *in, int *out, int n) {
  using Reduce = cub::BlockReduce<int, Threads>;
  __shared__ typename Reduce::TempStorage temp;
  if (threadIdx.x >= n) return;
  int s = Reduce(temp).Sum(in[threadIdx.x]);
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}

template __global__ void early_exit_sum<128>(const int *, int *, int);

template __global__ void block_sum<256>(const int *, int *);

// CHECK:      block_sum <int Threads>  ({{.*}}cub.cu:7:17)
// CHECK-NEXT:   parameters: const int * in, int * out
// CHECK-NEXT:   instantiations: block_sum<256>
// CHECK-NEXT:   blockIdx: direct
// CHECK:        barrier: __syncthreads at {{.*}}cub.cu:11:11 via
// CHECK:        shared: static typename Reduce::TempStorage temp at {{.*}}cub.cu:9:
// CHECK-NOT:    blocks PTB
// CHECK:      early_exit_sum <int Threads>  ({{.*}}cub.cu:{{[0-9]+}}:17)  [not PTB-eligible]
// CHECK:        blocks PTB: thread-dependent return before a barrier at {{.*}}cub.cu:19:{{[0-9]+}}: the return at {{.*}} depends on threadIdx and can be followed by __syncthreads

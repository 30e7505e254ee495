// Cooperative-groups block sync in a slot: this_thread_block() becomes the slot's group
// (::ptb::slot_block: sync on the slot's named barrier, thread_rank/size/group_index of the slot and task),
// a declared cooperative_groups::thread_block becomes auto; cg::sync(g) and g.sync() then work unchanged.
// The original kernel is left as it is.
// RUN: %fuse-kernels %s --kernel reduce=128 --kernel plain=64 --ratio 1:2 -o %t.cu 2>/dev/null
// RUN: %strip-directives %t.cu | FileCheck %s
// RUN: %if nvcc %{ %nvcc -c %t.cu -o %t.o %}
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void reduce(const float *in, float *out, int n) {
  cg::thread_block block = cg::this_thread_block();
  __shared__ float s[128];
  const unsigned r = block.thread_rank();
  const int i = block.group_index().x * block.size() + r;
  s[r] = i < n ? in[i] : 0.f;
  block.sync();
  for (unsigned w = block.size() / 2; w > 0; w /= 2) {
    if (r < w) s[r] += s[r + w];
    cg::sync(block);
  }
  auto again = cg::this_thread_block();
  again.sync();
  if (r == 0) out[blockIdx.x] = s[0];
}
__global__ void plain(int *p) { p[blockIdx.x * blockDim.x + threadIdx.x] = 3; }

// CHECK:      __global__ void reduce(const float *in, float *out, int n) {
// CHECK-NEXT:   cg::thread_block block = cg::this_thread_block();
// CHECK:      void reduce__slot(
// CHECK:        auto block = ::ptb::slot_block<PtbBar, PtbThreads>(threadIdx, blockDim, blockIdx);
// CHECK:        block.sync();
// CHECK:        cg::sync(block);
// CHECK:        auto again = ::ptb::slot_block<PtbBar, PtbThreads>(threadIdx, blockDim, blockIdx);
// CHECK:      reduce__slot<1, 128>(

// Cooperative groups: block sync is a block-wide barrier, tile sync a warp-level one, a grid group
// blocks the PTB rewrite, and so does reading the block index through thread_block::group_index().
// RUN: %ptb-transform --list-kernels %s | FileCheck %s
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void tiles(int *out) {
  cg::thread_block block = cg::this_thread_block();
  auto warp = cg::tiled_partition<32>(block);
  out[blockIdx.x * blockDim.x + threadIdx.x] = warp.thread_rank();
  warp.sync();
  block.sync();
  cg::sync(block);
}

__global__ void gridwide(int *out) {
  cg::grid_group grid = cg::this_grid();
  out[grid.thread_rank()] = 1;
  grid.sync();
}

__global__ void index_through_cg(int *out) {
  cg::thread_block block = cg::this_thread_block();
  out[block.group_index().x] = 1;
}

// CHECK:      tiles  ({{.*}}cooperative-groups.cu:7:17)
// CHECK:        barrier: cg::thread_block_tile::sync (warp-level) at {{.*}}:11:3
// CHECK-NEXT:   barrier: cg::thread_block::sync at {{.*}}:12:3
// CHECK-NEXT:   barrier: cg::thread_block::sync at {{.*}}:13:3
// CHECK-NOT:    blocks PTB
// CHECK:      gridwide  ({{.*}}:16:17)  [not PTB-eligible]
// CHECK:        blocks PTB: grid-wide sync at {{.*}}:17:
// CHECK:      index_through_cg  ({{.*}}:22:17)  [not PTB-eligible]
// CHECK:        blocks PTB: block index through a library at {{.*}}:24:7

// Cooperative groups inside a block (no grid sync): this_thread_block(), tiled_partition<32> giving a
// thread_block_tile<32> with shfl_down and cg::reduce, tiled_partition<8> (thread_block_tile<8>),
// block.sync() and tile.sync(). Integer sums: exact. (The dynamic tiled_partition(block, 8), which returns
// a generic thread_group, is in coop_groups_dynamic_partition.cu.)
#include "common.cuh"

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace cg = cooperative_groups;

__global__ void cg_block_sum(const int* in, int* out, int* tile8_out, int n) {
  __shared__ int part[32];
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? in[i] : 0;
  int s = v;
  for (int off = warp.size() / 2; off > 0; off /= 2) s += warp.shfl_down(s, off);
  if (warp.thread_rank() == 0) part[warp.meta_group_rank()] = s;
  block.sync();
  if (warp.meta_group_rank() == 0) {
    int p = warp.thread_rank() < warp.meta_group_size() ? part[warp.thread_rank()] : 0;
    p = cg::reduce(warp, p, cg::plus<int>());
    if (warp.thread_rank() == 0) out[blockIdx.x] = p;
  }
  // static partition into tiles of 8: each tile's sum written by its rank-0 thread
  cg::thread_block_tile<8> g8 = cg::tiled_partition<8>(block);
  __shared__ int acc8[128];
  if (threadIdx.x < 128) acc8[threadIdx.x] = 0;
  block.sync();
  atomicAdd(&acc8[threadIdx.x / 8], v);
  g8.sync();
  if (g8.thread_rank() == 0 && i < n) tile8_out[i / 8] = acc8[threadIdx.x / 8];
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "coop_groups_tile");
  if (tg::bench_mode()) {
    int n = 1 << 27;
    tg::DevBuf<int> in(n), out(n / 1024), o8(n / 8);
    in.fill_bytes(0);
    return tg::bench("coop_groups_tile", [&] { cg_block_sum<<<n / 1024, 1024>>>(in, out, o8, n); });
  }
  for (int bs : {1024, 256, 64, 32}) {
    int n = (int)tg::rand_int(1, 1000000);
    auto h = tg::random_ints<int>(n, -100000, 100000);
    int nb = (n + bs - 1) / bs;
    tg::DevBuf<int> in(n), out(nb), o8((n + 7) / 8);
    in.upload(h);
    out.poison();
    o8.poison();
    cg_block_sum<<<nb, bs>>>(in, out, o8, n);
    tg::sync_check("cg_block_sum");
    std::vector<int> want(nb, 0), w8((n + 7) / 8, 0);
    for (int i = 0; i < n; ++i) {
      want[i / bs] += h[i];
      w8[i / 8] += h[i];
    }
    tg::compare_exact(out.download(), want, "block sums through thread_block_tile<32>");
    tg::compare_exact(o8.download(), w8, "sums of tiled_partition<8>(block)");
  }
  return tg::finish();
}

// Cooperative groups: the dynamic cg::tiled_partition(block, N), which returns a generic cg::thread_group,
// and its sync() / thread_rank() / size() (a block-level group, not a grid group), plus block.sync().
// Each group of N threads sums its inputs through shared-memory atomics. Exact.
#include "common.cuh"

#include <cooperative_groups.h>

namespace cg = cooperative_groups;

__global__ void group_sums(const int* in, int* out, int n, unsigned gsize) {
  __shared__ int acc[1024];
  cg::thread_block block = cg::this_thread_block();
  cg::thread_group g = cg::tiled_partition(block, gsize);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  acc[threadIdx.x] = 0;
  block.sync();
  atomicAdd(&acc[threadIdx.x / g.size()], i < n ? in[i] : 0);
  g.sync();
  if (g.thread_rank() == 0 && i < n) out[i / gsize] = acc[threadIdx.x / g.size()];
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "coop_groups_dynamic_partition");
  if (tg::bench_mode()) {
    int n = 1 << 27;
    tg::DevBuf<int> in(n), out(n / 4);
    in.fill_bytes(0);
    return tg::bench("coop_groups_dynamic_partition", [&] { group_sums<<<n / 256, 256>>>(in, out, n, 4u); });
  }
  for (unsigned gs : {2u, 4u, 8u, 16u, 32u}) {
    int n = (int)tg::rand_int(1, 500000);
    int bs = 256;
    auto h = tg::random_ints<int>(n, -100000, 100000);
    tg::DevBuf<int> in(n), out((n + gs - 1) / gs);
    in.upload(h);
    out.poison();
    group_sums<<<(n + bs - 1) / bs, bs>>>(in, out, n, gs);
    tg::sync_check("group_sums");
    std::vector<int> want((n + gs - 1) / gs, 0);
    for (int i = 0; i < n; ++i) want[i / gs] += h[i];
    tg::compare_exact(out.download(), want, "sums of tiled_partition(block, N)");
  }
  return tg::finish();
}

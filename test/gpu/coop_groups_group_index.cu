// Cooperative-groups accessors that read the built-in indices inside the CUDA headers:
// this_thread_block().group_index() (blockIdx), .thread_index() (threadIdx), .group_dim() (blockDim),
// .num_threads(), .thread_rank(). In the PTB twin group_index() must still be the virtual block.
#include "common.cuh"

#include <cooperative_groups.h>

namespace cg = cooperative_groups;

__global__ void cg_indices(unsigned* out) {
  cg::thread_block block = cg::this_thread_block();
  dim3 bi = block.group_index();
  dim3 ti = block.thread_index();
  dim3 bd = block.group_dim();
  unsigned b = (bi.z * gridDim.y + bi.y) * gridDim.x + bi.x;
  unsigned nt = block.num_threads();
  unsigned t = block.thread_rank();
  out[(size_t)b * nt + t] = b * 4096u + (ti.z * bd.y + ti.y) * bd.x + ti.x;
  block.sync();
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "coop_groups_group_index");
  if (tg::bench_mode()) {
    dim3 grid(256, 256, 4), block(8, 8, 2);
    tg::DevBuf<unsigned> out((size_t)grid.x * grid.y * grid.z * 128);
    return tg::bench("coop_groups_group_index", [&] { cg_indices<<<grid, block>>>(out); });
  }
  for (int it = 0; it < 3; ++it) {
    dim3 grid((unsigned)tg::rand_int(1, 60), (unsigned)tg::rand_int(1, 30), (unsigned)tg::rand_int(1, 5));
    dim3 block((unsigned)tg::rand_int(1, 16), (unsigned)tg::rand_int(1, 8), (unsigned)tg::rand_int(1, 4));
    size_t nb = (size_t)grid.x * grid.y * grid.z, nt = (size_t)block.x * block.y * block.z;
    tg::DevBuf<unsigned> out(nb * nt);
    out.poison();
    cg_indices<<<grid, block>>>(out);
    tg::sync_check("cg_indices");
    std::vector<unsigned> want(nb * nt);
    for (size_t b = 0; b < nb; ++b)
      for (size_t t = 0; t < nt; ++t) want[b * nt + t] = (unsigned)(b * 4096u + t);
    tg::compare_exact(out.download(), want, "group_index / thread_index");
  }
  return tg::finish();
}

// blockIdx/gridDim read two calls deep: kernel -> f -> g, where only g reads blockIdx and gridDim. g is
// also called directly by a second kernel, and f by a __device__ helper that a third kernel uses, so the
// tool must clone them for the PTB twins and leave the originals usable.
#include "common.cuh"

__device__ unsigned g_block_linear() { return (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x; }

__device__ unsigned g_grid_blocks() { return gridDim.x * gridDim.y * gridDim.z; }

__device__ unsigned f_global_thread(unsigned t) {
  unsigned nb = g_grid_blocks();
  return g_block_linear() * blockDim.x + t + 0 * nb;
}

__device__ void helper_store(unsigned* out, unsigned v) { out[f_global_thread(threadIdx.x)] = v; }

// kernel -> f -> g
__global__ void via_chain(unsigned* out) {
  unsigned i = f_global_thread(threadIdx.x);
  out[i] = tg::hash32(i) ^ g_grid_blocks();
}

// second kernel calling g directly
__global__ void direct_g(unsigned* out) {
  if (threadIdx.x == 0) out[g_block_linear()] = g_grid_blocks() - g_block_linear();
}

// third kernel: kernel -> helper_store -> f -> g
__global__ void via_helper(unsigned* out, unsigned salt) { helper_store(out, salt + threadIdx.x); }

int main(int argc, char** argv) {
  tg::init(argc, argv, "device_fn_chain");
  if (tg::bench_mode()) {
    dim3 grid(512, 256, 4);
    tg::DevBuf<unsigned> out((size_t)grid.x * grid.y * grid.z * 256);
    return tg::bench("device_fn_chain", [&] { via_chain<<<grid, 256>>>(out); });
  }
  for (int it = 0; it < 3; ++it) {
    dim3 grid((unsigned)tg::rand_int(1, 100), (unsigned)tg::rand_int(1, 50), (unsigned)tg::rand_int(1, 8));
    unsigned bs = (unsigned)tg::rand_int(1, 256);
    unsigned nb = grid.x * grid.y * grid.z;
    size_t n = (size_t)nb * bs;
    tg::DevBuf<unsigned> a(n), b(nb), c(n);
    a.poison();
    b.poison();
    c.poison();
    unsigned salt = (unsigned)tg::rand_int(0, 1 << 30);
    via_chain<<<grid, bs>>>(a);
    direct_g<<<grid, bs>>>(b);
    via_helper<<<grid, bs>>>(c, salt);
    tg::sync_check("kernels");
    std::vector<unsigned> wa(n), wb(nb), wc(n);
    for (size_t i = 0; i < n; ++i) {
      wa[i] = tg::hash32((unsigned)i) ^ nb;
      wc[i] = salt + (unsigned)(i % bs);
    }
    for (unsigned k = 0; k < nb; ++k) wb[k] = nb - k;
    tg::compare_exact(a.download(), wa, "kernel -> f -> g");
    tg::compare_exact(b.download(), wb, "second kernel -> g");
    tg::compare_exact(c.download(), wc, "kernel -> helper -> f -> g");
  }
  return tg::finish();
}

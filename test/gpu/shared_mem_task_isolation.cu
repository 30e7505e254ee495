// Consecutive blocks must not race on shared memory. Each block stages its data and a tag in static
// __shared__ memory, passes one barrier, then warps wait different times (clock64 spin) before reading
// ANOTHER warp's slots; there is no barrier at the end. If a worker started its next task before all its
// threads finished the current one, a fast warp would overwrite slots a slow warp still has to read.
#include "common.cuh"

__global__ void rotate_late(const int* in, int* out, long long spin_cycles) {
  __shared__ int s[256];
  __shared__ unsigned tag;
  unsigned b = blockIdx.x;
  if (threadIdx.x == 0) tag = b;
  s[threadIdx.x] = in[(size_t)b * 256 + threadIdx.x];
  __syncthreads();
  int warp = threadIdx.x / 32;
  long long t0 = clock64();
  while (clock64() - t0 < spin_cycles * warp) {
  }
  int v = s[(threadIdx.x + 32) % 256];
  out[(size_t)b * 256 + threadIdx.x] = tag == b ? v : 0x7fffffff;
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "shared_mem_task_isolation");
  if (tg::bench_mode()) {
    int nb = 1 << 18;
    tg::DevBuf<int> in((size_t)nb * 256), out((size_t)nb * 256);
    in.fill_bytes(0);
    return tg::bench("shared_mem_task_isolation", [&] { rotate_late<<<nb, 256>>>(in, out, 0); });
  }
  for (long long spin : {0ll, 2000ll}) {
    int nb = (int)tg::rand_int(1000, 6000);
    auto h = tg::random_ints<int>((size_t)nb * 256, -1000000, 1000000);
    tg::DevBuf<int> in(h.size()), out(h.size());
    in.upload(h);
    out.poison();
    rotate_late<<<nb, 256>>>(in, out, spin);
    tg::sync_check("rotate_late");
    std::vector<int> want(h.size());
    for (int b = 0; b < nb; ++b)
      for (int t = 0; t < 256; ++t) want[(size_t)b * 256 + t] = h[(size_t)b * 256 + (t + 32) % 256];
    tg::compare_exact(out.download(), want, spin ? "with warp delays" : "no delays");
  }
  return tg::finish();
}

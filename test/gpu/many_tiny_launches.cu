// 1000 tiny launches in a loop (1 to 40 blocks each, changing shapes, two alternating kernels, two
// streams), to catch reuse of per-launch control state: each launch adds its own value, the CPU replays
// all of them. Exact.
#include "common.cuh"

__global__ void add_iter(int* acc, int n, int it) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) acc[i] += it;
}

__global__ void xor_block(int* acc, int n, int it) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    acc[i] ^= (it << 8) | (int)blockIdx.x;
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "many_tiny_launches");
  if (tg::bench_mode()) {
    // the launch path: 200 dependent tiny launches per timed unit
    tg::DevBuf<int> acc(4096);
    acc.fill_bytes(0);
    return tg::bench("many_tiny_launches", [&] {
      for (int it = 0; it < 200; ++it) add_iter<<<16, 256>>>(acc, 4096, it);
    });
  }
  const int n = 40 * 64;
  cudaStream_t s[2];
  for (auto& x : s) CUDA_CHECK(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
  tg::DevBuf<int> a(n), b(n);
  auto ha = tg::random_ints<int>(n, -1000000, 1000000), hb = tg::random_ints<int>(n, -1000000, 1000000);
  a.upload(ha);
  b.upload(hb);
  for (int it = 0; it < 1000; ++it) {
    int bs = it % 3 == 0 ? 64 : (it % 3 == 1 ? 32 : 1);
    int grid = 1 + (int)tg::rand_int(0, 39);
    int len = std::min(n, grid * bs);
    if (it % 2 == 0) {
      add_iter<<<grid, bs, 0, s[0]>>>(a, len, it);
      for (int i = 0; i < len; ++i) ha[i] += it;
    } else {
      int g2 = 1 + it % 7;
      xor_block<<<g2, 64, 0, s[1]>>>(b, len, it);
      for (int i = 0; i < len; ++i) hb[i] ^= (it << 8) | ((i / 64) % g2);
    }
  }
  tg::sync_check("1000 launches");
  tg::compare_exact(a.download(), ha, "add_iter chain");
  tg::compare_exact(b.download(), hb, "xor_block chain");
  for (auto& x : s) CUDA_CHECK(cudaStreamDestroy(x));
  return tg::finish();
}

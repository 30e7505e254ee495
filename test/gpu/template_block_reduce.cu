// Non-type template parameters that size static shared memory and unroll loops:
// block_sum<BLOCK, ITEMS, T> reduces BLOCK*ITEMS elements per block through __shared__ T s[BLOCK].
#include "common.cuh"

template <int BLOCK, int ITEMS, typename T>
__global__ void __launch_bounds__(BLOCK) block_sum(const T* in, T* out, int n) {
  __shared__ T s[BLOCK];
  size_t base = (size_t)blockIdx.x * BLOCK * ITEMS;
  T acc = 0;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    size_t i = base + (size_t)k * BLOCK + threadIdx.x;
    if (i < (size_t)n) acc += in[i];
  }
  s[threadIdx.x] = acc;
  __syncthreads();
#pragma unroll
  for (int w = BLOCK / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}

template <int BLOCK, int ITEMS, typename T>
static void test(const char* what) {
  int n = (int)tg::rand_int(1, 2000000);
  auto h = tg::random_ints<T>(n, -1000000, 1000000);
  int nb = (n + BLOCK * ITEMS - 1) / (BLOCK * ITEMS);
  tg::DevBuf<T> in(n), out(nb + 1);
  in.upload(h);
  out.poison();
  block_sum<BLOCK, ITEMS, T><<<nb, BLOCK>>>(in, out, n);
  tg::sync_check(what);
  std::vector<T> want(nb + 1);
  for (int i = 0; i < n; ++i) want[i / (BLOCK * ITEMS)] += h[i];
  auto got = out.download();
  want[nb] = got[nb];
  tg::check(tg::bits_of(got[nb]) == tg::bits_of((T)-1), "%s: wrote past the last block", what);
  tg::compare_exact(got, want, what);
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "template_block_reduce");
  if (tg::bench_mode()) {
    int n = 1 << 27;
    tg::DevBuf<int> in(n), out(n / 512);
    in.fill_bytes(0);
    return tg::bench("template_block_reduce", [&] { block_sum<128, 4, int><<<n / 512, 128>>>(in, out, n); });
  }
  test<128, 4, int>("block_sum<128, 4, int>");
  test<256, 2, long long>("block_sum<256, 2, long long>");
  test<64, 8, unsigned>("block_sum<64, 8, unsigned>");
  test<1024, 1, int>("block_sum<1024, 1, int>");
  return tg::finish();
}

// 1-D grid and block, plain int launch shapes, default shared memory and stream, and a thread-dependent
// `if (i >= n) return;` with no barrier after it. Float a+b is exact per element: bit-exact check.
#include "common.cuh"

__global__ void vecadd(int n, const float* a, const float* b, float* c) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  c[i] = a[i] + b[i];
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "vecadd_1d");
  if (tg::bench_mode()) {
    int n = 1 << 26;
    tg::DevBuf<float> a(n), b(n), c(n);
    a.fill_bytes(0x3f);
    b.fill_bytes(0x3e);
    return tg::bench("vecadd_1d", [&] { vecadd<<<(n + 255) / 256, 256>>>(n, a, b, c); });
  }
  for (int rep = 0; rep < 3; ++rep) {
    int n = (int)tg::rand_int(1, 3000000);
    int block = rep == 0 ? 256 : (int)tg::rand_int(1, 32) * 32 - (int)tg::rand_int(0, 1);  // also odd sizes
    auto ha = tg::random_reals<float>(n, -1e3, 1e3), hb = tg::random_reals<float>(n, -1e3, 1e3);
    tg::DevBuf<float> a(n), b(n), c(n + 1000);
    a.upload(ha);
    b.upload(hb);
    c.poison();
    int grid = (n + block - 1) / block;
    vecadd<<<grid, block>>>(n, a, b, c);
    tg::sync_check("vecadd");
    auto hc = c.download();
    std::vector<float> want(n + 1000);
    for (int i = 0; i < n; ++i) want[i] = ha[i] + hb[i];
    std::vector<float> got(hc.begin(), hc.begin() + n);
    want.resize(n);
    tg::compare_exact(got, want, "c = a + b");
    for (int i = n; i < n + 1000; ++i)
      if (!tg::check(tg::bits_of(hc[i]) == 0xFFFFFFFFu, "element %d past n=%d was written", i, n)) break;
  }
  return tg::finish();
}

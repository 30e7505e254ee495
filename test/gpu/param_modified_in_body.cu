// Kernels that modify their own parameters (pointer, count, scalar, a by-value struct) before using them.
// Every block of the original starts from the launch's values, so every task of the PTB twin must too.
#include "common.cuh"

struct Window {
  int offset;
  int len;
  int scale;
};

__global__ void shifted_write(int* p, int n, int base, Window w) {
  p += blockIdx.x * blockDim.x;  // pointer parameter advanced per block
  n -= blockIdx.x * blockDim.x;  // count parameter shrunk per block
  base *= 2;                     // scalar parameter changed
  w.scale += (int)blockIdx.x;    // struct parameter changed
  w.offset -= 1;
  if ((int)threadIdx.x < n) p[threadIdx.x] = base + w.scale * (int)threadIdx.x + w.offset + w.len;
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "param_modified_in_body");
  if (tg::bench_mode()) {
    int n = 1 << 26;
    tg::DevBuf<int> d(n);
    return tg::bench("param_modified_in_body",
                     [&] { shifted_write<<<(n + 255) / 256, 256>>>(d, n, 1, Window{1, 2, 3}); });
  }
  for (int bs : {256, 64, 1000}) {
    int n = (int)tg::rand_int(1, 1000000);
    int base = (int)tg::rand_int(-1000, 1000);
    Window w{(int)tg::rand_int(-100, 100), (int)tg::rand_int(0, 100), (int)tg::rand_int(-5, 5)};
    tg::DevBuf<int> d(n);
    d.poison();
    shifted_write<<<(n + bs - 1) / bs, bs>>>(d, n, base, w);
    tg::sync_check("shifted_write");
    std::vector<int> want(n);
    for (int i = 0; i < n; ++i) {
      int b = i / bs, t = i % bs;
      want[i] = 2 * base + (w.scale + b) * t + (w.offset - 1) + w.len;
    }
    tg::compare_exact(d.download(), want, "per-block parameter copies");
  }
  return tg::finish();
}

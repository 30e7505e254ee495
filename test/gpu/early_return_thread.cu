// Thread-dependent returns with no barrier after them: a data-dependent return in the middle of the body,
// a return inside a loop, and `if (i >= n) return;` as the bounds check. Elements whose thread returned
// before writing keep the poison.
#include "common.cuh"

__global__ void positive_only(const int* in, int* out, int* steps, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int v = in[i];
  if (v < 0) return;  // data-dependent
  int k = 0;
  for (; k < 64; ++k) {
    if (v == 1) {
      out[i] = k;
      steps[i] = (int)blockIdx.x;
      return;  // return from inside a loop
    }
    v = (v & 1) ? 3 * v + 1 : v / 2;
  }
  out[i] = -2 - k;
  steps[i] = -(int)blockIdx.x;
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "early_return_thread");
  if (tg::bench_mode()) {
    int n = 1 << 25;
    tg::DevBuf<int> in(n), out(n), steps(n);
    in.fill_bytes(0x07);
    return tg::bench("early_return_thread", [&] { positive_only<<<(n + 255) / 256, 256>>>(in, out, steps, n); });
  }
  for (int bs : {256, 96, 1024, 33}) {
    int n = (int)tg::rand_int(1, 1000000);
    auto h = tg::random_ints<int>(n, -100000, 100000);
    tg::DevBuf<int> in(n), out(n), steps(n);
    in.upload(h);
    out.poison();
    steps.poison();
    positive_only<<<(n + bs - 1) / bs, bs>>>(in, out, steps, n);
    tg::sync_check("positive_only");
    std::vector<int> wo(n, -1), ws(n, -1);
    for (int i = 0; i < n; ++i) {
      int v = h[i];
      if (v < 0) continue;
      int k = 0;
      bool done = false;
      for (; k < 64; ++k) {
        if (v == 1) {
          wo[i] = k;
          ws[i] = i / bs;
          done = true;
          break;
        }
        v = (v & 1) ? 3 * v + 1 : v / 2;
      }
      if (!done) {
        wo[i] = -2 - k;
        ws[i] = -(i / bs);
      }
    }
    tg::compare_exact(out.download(), wo, "out");
    tg::compare_exact(steps.download(), ws, "block ids");
  }
  return tg::finish();
}

// A thread-dependent return that comes AFTER the last barrier of the kernel: all threads stage data in
// shared memory and pass __syncthreads, then `if (i >= n) return;` and `if (v == 0) return;` precede the
// writes. Nothing after the returns synchronizes, so this is a kernel the tool must accept.
#include "common.cuh"

__global__ void neighbour_diff(const int* in, int* out, unsigned* nonzero, int n) {
  __shared__ int s[257];
  int i = blockIdx.x * 256 + threadIdx.x;
  s[threadIdx.x] = i < n ? in[i] : 0;
  if (threadIdx.x == 0) s[256] = (i + 256 < n) ? in[i + 256] : 0;
  __syncthreads();
  if (i >= n) return;
  int v = s[threadIdx.x + 1] - s[threadIdx.x];
  out[i] = v;
  if (v == 0) return;
  atomicAdd(nonzero, 1u);
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "return_after_last_barrier");
  if (tg::bench_mode()) {
    int n = 1 << 26;
    tg::DevBuf<int> in(n), out(n);
    tg::DevBuf<unsigned> nz(1);
    in.fill_bytes(0);
    return tg::bench("return_after_last_barrier", [&] { neighbour_diff<<<(n + 255) / 256, 256>>>(in, out, nz, n); });
  }
  for (int it = 0; it < 3; ++it) {
    int n = (int)tg::rand_int(1, 2000000);
    auto h = tg::random_ints<int>(n, -3, 3);  // many equal neighbours, so many v == 0 returns
    tg::DevBuf<int> in(n), out(n);
    tg::DevBuf<unsigned> nz(1);
    in.upload(h);
    out.poison();
    nz.fill_bytes(0);
    neighbour_diff<<<(n + 255) / 256, 256>>>(in, out, nz, n);
    tg::sync_check("neighbour_diff");
    std::vector<int> want(n);
    unsigned cnt = 0;
    for (int i = 0; i < n; ++i) {
      want[i] = (i + 1 < n ? h[i + 1] : 0) - h[i];
      cnt += want[i] != 0;
    }
    tg::compare_exact(out.download(), want, "neighbour differences");
    unsigned got = nz.download()[0];
    tg::check(got == cnt, "nonzero count %u, want %u", got, cnt);
  }
  return tg::finish();
}

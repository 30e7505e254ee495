// Launches with an empty range of work (n = 0): a bounds-checked kernel on a 1-block grid, a grid-stride
// loop, a block-uniform `nvalid = 0` return before a barrier, and explicit 0 bytes of dynamic shared
// memory. The output must stay untouched (poison), and a later n > 0 launch must work.
#include "common.cuh"

__global__ void copy_n(const int* in, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = in[i];
}

__global__ void stride_copy(const int* in, int* out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = in[i] + 1;
}

__global__ void valid_blocks(const int* in, int* out, int nvalid) {
  if (blockIdx.x >= nvalid) return;
  __shared__ int s[64];
  s[threadIdx.x] = in[blockIdx.x * 64 + threadIdx.x];
  __syncthreads();
  out[blockIdx.x * 64 + threadIdx.x] = s[63 - threadIdx.x];
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "zero_work_n0");
  if (tg::bench_mode()) {
    // a large grid of blocks that all return at once
    int nb = 1 << 22;
    tg::DevBuf<int> in(64), out(64);
    return tg::bench("zero_work_n0", [&] { valid_blocks<<<nb, 64>>>(in, out, 0); });
  }
  const int cap = 4096;
  auto h = tg::random_ints<int>(cap, -1000, 1000);
  tg::DevBuf<int> in(cap), out(cap);
  in.upload(h);
  out.poison();
  const std::vector<int> untouched(cap, -1);
  int n = 0;
  copy_n<<<std::max(1, (n + 255) / 256), 256>>>(in, out, n);
  stride_copy<<<132, 128>>>(in, out, n);
  valid_blocks<<<cap / 64, 64, 0>>>(in, out, n);
  copy_n<<<dim3(7), dim3(32), 0, 0>>>(in, out, n);
  tg::sync_check("n = 0 launches");
  tg::compare_exact(out.download(), untouched, "output after n = 0 launches");
  n = (int)tg::rand_int(1, cap);
  copy_n<<<(n + 255) / 256, 256>>>(in, out, n);
  tg::sync_check("n > 0 launch");
  std::vector<int> want(untouched);
  std::copy(h.begin(), h.begin() + n, want.begin());
  tg::compare_exact(out.download(), want, "output after an n > 0 launch");
  return tg::finish();
}

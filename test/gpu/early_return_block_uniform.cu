// Block-uniform early returns before barriers: `if (blockIdx.x >= nvalid) return;` ahead of a shared-memory
// reduction with __syncthreads, a 2-D variant on blockIdx.y*gridDim.x+blockIdx.x, and a return on a kernel
// parameter and blockDim. Blocks that return must leave their output untouched (poison stays).
#include "common.cuh"

__global__ void sum_valid_blocks(const int* in, int* out, int nvalid) {
  if (blockIdx.x >= nvalid) return;
  __shared__ int s[128];
  s[threadIdx.x] = in[blockIdx.x * 128 + threadIdx.x];
  __syncthreads();
  for (int w = 64; w > 0; w >>= 1) {
    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}

__global__ void max_valid_blocks_2d(const int* in, int* out, int nvalid, int mode) {
  unsigned b = blockIdx.y * gridDim.x + blockIdx.x;
  if (b >= (unsigned)nvalid) return;
  if (mode == 1 && blockDim.x * b % 3 == 0) return;  // uniform: parameter, blockDim and blockIdx only
  __shared__ int s[64];
  s[threadIdx.x] = in[b * 64 + threadIdx.x];
  __syncthreads();
  for (int w = 32; w > 0; w >>= 1) {
    if (threadIdx.x < w) s[threadIdx.x] = max(s[threadIdx.x], s[threadIdx.x + w]);
    __syncthreads();
  }
  if (threadIdx.x == 0) out[b] = s[0];
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "early_return_block_uniform");
  if (tg::bench_mode()) {
    int nb = 1 << 20, nvalid = nb / 2 + 12345;
    tg::DevBuf<int> in((size_t)nb * 128), out(nb);
    in.fill_bytes(0);
    return tg::bench("early_return_block_uniform", [&] { sum_valid_blocks<<<nb, 128>>>(in, out, nvalid); });
  }
  {
    int nb = (int)tg::rand_int(1, 20000), nvalid = (int)tg::rand_int(0, nb);
    auto h = tg::random_ints<int>((size_t)nb * 128, -1000000, 1000000);
    tg::DevBuf<int> in(h.size()), out(nb);
    in.upload(h);
    out.poison();
    sum_valid_blocks<<<nb, 128>>>(in, out, nvalid);
    tg::sync_check("sum_valid_blocks");
    std::vector<int> want(nb, -1);
    for (int b = 0; b < nvalid; ++b) {
      want[b] = 0;
      for (int t = 0; t < 128; ++t) want[b] += h[(size_t)b * 128 + t];
    }
    tg::compare_exact(out.download(), want, "sum of valid blocks");
  }
  for (int mode = 0; mode < 2; ++mode) {
    int gx = (int)tg::rand_int(1, 200), gy = (int)tg::rand_int(1, 100), nb = gx * gy;
    int nvalid = (int)tg::rand_int(0, nb);
    auto h = tg::random_ints<int>((size_t)nb * 64, -1000000, 1000000);
    tg::DevBuf<int> in(h.size()), out(nb);
    in.upload(h);
    out.poison();
    max_valid_blocks_2d<<<dim3(gx, gy), 64>>>(in, out, nvalid, mode);
    tg::sync_check("max_valid_blocks_2d");
    std::vector<int> want(nb, -1);
    for (int b = 0; b < nvalid; ++b) {
      if (mode == 1 && (64u * b) % 3 == 0) continue;
      want[b] = *std::max_element(h.begin() + (size_t)b * 64, h.begin() + (size_t)b * 64 + 64);
    }
    tg::compare_exact(out.download(), want, mode ? "2-D, parameter/blockDim return" : "2-D valid blocks");
  }
  return tg::finish();
}

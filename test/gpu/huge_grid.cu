// Grids far larger than the machine: millions of blocks, 1-D (gridDim.x > 2^22) and 2-D (4096 x 1024+).
// Each block reduces blockIdx-derived values through static shared memory and writes one word, so a
// skipped or repeated block, or a wrong virtual blockIdx, shows up exactly.
#include "common.cuh"

__global__ void per_block_1d(const unsigned* in, unsigned* out) {
  __shared__ unsigned s[64];
  unsigned t = threadIdx.x;
  s[t] = blockIdx.x + t;
  __syncthreads();
  for (unsigned w = 32; w > 0; w >>= 1) {
    if (t < w) s[t] += s[t + w];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0] + in[blockIdx.x] + gridDim.x;
}

__global__ void per_block_2d(unsigned* out, unsigned* count) {
  size_t b = (size_t)blockIdx.y * gridDim.x + blockIdx.x;
  if (threadIdx.x == 0) {
    out[b] = tg::hash32((unsigned)b) ^ (blockIdx.y << 16) ^ blockIdx.x;
    atomicAdd(count, 1u);
  }
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "huge_grid");
  if (tg::bench_mode()) {
    unsigned nb = 1u << 22;
    tg::DevBuf<unsigned> in(nb), out(nb);
    in.fill_bytes(0);
    return tg::bench("huge_grid", [&] { per_block_1d<<<nb, 64>>>(in, out); });
  }
  {
    unsigned nb = (1u << 22) + (unsigned)tg::rand_int(0, 100000);
    auto h = tg::random_ints<unsigned>(nb, 0, 0xFFFFFFFFll);
    tg::DevBuf<unsigned> in(nb), out(nb);
    in.upload(h);
    out.poison();
    per_block_1d<<<nb, 64>>>(in, out);
    tg::sync_check("per_block_1d");
    std::vector<unsigned> want(nb);
    for (unsigned b = 0; b < nb; ++b) want[b] = 64u * b + 2016u + h[b] + nb;
    tg::compare_exact(out.download(), want, "1-D huge grid");
  }
  {
    unsigned gx = 4096, gy = 1024 + (unsigned)tg::rand_int(0, 100);
    size_t nb = (size_t)gx * gy;
    tg::DevBuf<unsigned> out(nb), count(1);
    out.poison();
    count.fill_bytes(0);
    per_block_2d<<<dim3(gx, gy), 32>>>(out, count);
    tg::sync_check("per_block_2d");
    std::vector<unsigned> want(nb);
    for (size_t b = 0; b < nb; ++b) want[b] = tg::hash32((unsigned)b) ^ ((unsigned)(b / gx) << 16) ^ (unsigned)(b % gx);
    tg::compare_exact(out.download(), want, "2-D huge grid");
    unsigned c = count.download()[0];
    tg::check(c == nb, "2-D grid ran %u blocks, want %zu", c, nb);
  }
  return tg::finish();
}

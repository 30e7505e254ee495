// Float sum reduction in dynamic `extern __shared__` memory sized at launch (blockDim * 4 bytes), explicit
// shared-memory argument with the default stream and with a created stream. The summation order is fixed
// (each thread adds 2 elements, then a tree), so the CPU replays it: bit-exact check.
#include "common.cuh"

__global__ void block_reduce_dyn(const float* in, float* out, int n) {
  extern __shared__ float s[];
  unsigned t = threadIdx.x;
  size_t i = (size_t)blockIdx.x * blockDim.x * 2 + t;
  float a = i < (size_t)n ? in[i] : 0.0f;
  float b = i + blockDim.x < (size_t)n ? in[i + blockDim.x] : 0.0f;
  s[t] = a + b;
  __syncthreads();
  for (unsigned w = blockDim.x / 2; w > 0; w >>= 1) {
    if (t < w) s[t] = s[t] + s[t + w];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}

static std::vector<float> cpu(const std::vector<float>& x, int bs) {
  int n = (int)x.size(), nb = (n + 2 * bs - 1) / (2 * bs);
  std::vector<float> out(nb), s(bs);
  for (int b = 0; b < nb; ++b) {
    for (int t = 0; t < bs; ++t) {
      size_t i = (size_t)b * bs * 2 + t;
      float a = i < (size_t)n ? x[i] : 0.0f, c = i + bs < (size_t)n ? x[i + bs] : 0.0f;
      s[t] = a + c;
    }
    for (int w = bs / 2; w > 0; w >>= 1)
      for (int t = 0; t < w; ++t) s[t] = s[t] + s[t + w];
    out[b] = s[0];
  }
  return out;
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "reduce_dynamic_shared");
  if (tg::bench_mode()) {
    int n = 1 << 27, bs = 256;
    tg::DevBuf<float> in(n), out(n / 512);
    in.fill_bytes(0);
    return tg::bench("reduce_dynamic_shared",
                     [&] { block_reduce_dyn<<<n / 512, bs, bs * sizeof(float)>>>(in, out, n); });
  }
  cudaStream_t st;
  CUDA_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  for (int bs : {32, 64, 128, 256, 512, 1024}) {
    int n = (int)tg::rand_int(1, 1000000);
    auto h = tg::random_reals<float>(n, -1, 1);
    int nb = (n + 2 * bs - 1) / (2 * bs);
    tg::DevBuf<float> in(n), out(nb);
    in.upload(h);
    out.poison();
    if (bs % 64 == 0) {
      block_reduce_dyn<<<nb, bs, bs * sizeof(float)>>>(in, out, n);
    } else {
      size_t shmem = bs * sizeof(float);
      block_reduce_dyn<<<dim3(nb), dim3(bs), shmem, st>>>(in, out, n);
      CUDA_CHECK(cudaStreamSynchronize(st));
    }
    tg::sync_check("block_reduce_dyn");
    tg::compare_exact(out.download(), cpu(h, bs), "per-block float sums");
  }
  CUDA_CHECK(cudaStreamDestroy(st));
  return tg::finish();
}

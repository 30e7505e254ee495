// __launch_bounds__ (max threads, and max threads + min blocks) with __restrict__ and const pointers, on a
// plain and on a template kernel. The attributes must carry over to the PTB twin: the twin is launched with
// the same block size, which __launch_bounds__ caps. Bit-exact (explicit fmaf).
#include "common.cuh"

__global__ void __launch_bounds__(256, 2)
    fused(int n, const float* __restrict__ x, const float* __restrict__ y, float* __restrict__ out, float a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = fmaf(a, x[i], y[i]);
}

template <int BS, typename T>
__global__ void __launch_bounds__(BS) clamp_copy(const T* __restrict__ in, T* __restrict__ out, int n, T lo, T hi) {
  int i = blockIdx.x * BS + threadIdx.x;
  if (i < n) out[i] = in[i] < lo ? lo : (in[i] > hi ? hi : in[i]);
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "launch_bounds_restrict");
  if (tg::bench_mode()) {
    int n = 1 << 26;
    tg::DevBuf<float> x(n), y(n), o(n);
    x.fill_bytes(0);
    y.fill_bytes(0);
    return tg::bench("launch_bounds_restrict", [&] { fused<<<(n + 255) / 256, 256>>>(n, x, y, o, 2.0f); });
  }
  cudaFuncAttributes attr;
  CUDA_CHECK(cudaFuncGetAttributes(&attr, fused));
  tg::check(attr.maxThreadsPerBlock <= 256, "fused: maxThreadsPerBlock %d > 256", attr.maxThreadsPerBlock);
  {
    int n = (int)tg::rand_int(1, 1000000);
    float a = tg::rand_float(-3, 3);
    auto hx = tg::random_reals<float>(n, -10, 10), hy = tg::random_reals<float>(n, -10, 10);
    tg::DevBuf<float> x(n), y(n), o(n);
    x.upload(hx);
    y.upload(hy);
    o.poison();
    fused<<<(n + 255) / 256, 256>>>(n, x, y, o, a);
    tg::sync_check("fused");
    std::vector<float> want(n);
    for (int i = 0; i < n; ++i) want[i] = std::fmaf(a, hx[i], hy[i]);
    tg::compare_exact(o.download(), want, "fused");
  }
  {
    int n = (int)tg::rand_int(1, 1000000);
    auto h = tg::random_ints<int>(n, -1000, 1000);
    tg::DevBuf<int> in(n), out(n);
    in.upload(h);
    out.poison();
    clamp_copy<128, int><<<(n + 127) / 128, 128>>>(in, out, n, -100, 250);
    tg::sync_check("clamp_copy");
    for (auto& v : h) v = std::min(std::max(v, -100), 250);
    tg::compare_exact(out.download(), h, "clamp_copy<128, int>");
  }
  return tg::finish();
}

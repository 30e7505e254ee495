// Kernels inside namespaces: nested named namespaces (qualified launch a::b::K<<<>>>), a template kernel
// launched as a::b::K<float><<<>>>, a launch from inside the namespace by the unqualified name, a kernel in
// an anonymous namespace and a static kernel.
#include "common.cuh"

namespace outer {
namespace inner {
__global__ void add_block(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += (int)blockIdx.x;
}

template <typename T>
__global__ void mul(T* p, int n, T f) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] *= f;
}

void launch_from_inside(int* p, int n) { add_block<<<(n + 63) / 64, 64>>>(p, n); }
}  // namespace inner
}  // namespace outer

namespace {
__global__ void negate(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = -p[i];
}
}  // namespace

static __global__ void sub_grid(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] -= (int)gridDim.x;
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "namespace_kernel");
  if (tg::bench_mode()) {
    int n = 1 << 26;
    tg::DevBuf<int> d(n);
    d.fill_bytes(0);
    return tg::bench("namespace_kernel", [&] { outer::inner::add_block<<<(n + 255) / 256, 256>>>(d, n); });
  }
  int n = (int)tg::rand_int(1, 1000000);
  auto h = tg::random_ints<int>(n, -1000, 1000);
  tg::DevBuf<int> d(n);
  d.upload(h);
  int f = (int)tg::rand_int(-5, 5);
  outer::inner::add_block<<<(n + 127) / 128, 128>>>(d, n);
  outer::inner::mul<int><<<(n + 255) / 256, 256>>>(d, n, f);
  outer::inner::launch_from_inside(d, n);
  negate<<<(n + 31) / 32, 32>>>(d, n);
  sub_grid<<<(n + 511) / 512, 512>>>(d, n);
  {
    using namespace outer::inner;
    mul<<<(n + 255) / 256, 256>>>(d.p, n, 3);  // deduced, found through using-directive
  }
  tg::sync_check("namespace kernels");
  std::vector<int> want(n);
  for (int i = 0; i < n; ++i)
    want[i] = (-((h[i] + i / 128) * f + i / 64) - (n + 511) / 512) * 3;
  tg::compare_exact(d.download(), want, "namespaced kernels");
  {
    int m = (int)tg::rand_int(1, 100000);
    auto hf = tg::random_reals<float>(m, -10, 10);
    tg::DevBuf<float> df(m);
    df.upload(hf);
    outer::inner::mul<float><<<(m + 255) / 256, 256>>>(df, m, 0.25f);
    tg::sync_check("mul<float>");
    for (auto& x : hf) x *= 0.25f;
    tg::compare_exact(df.download(), hf, "outer::inner::mul<float>");
  }
  return tg::finish();
}

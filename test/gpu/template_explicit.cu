// Kernels templated on a type and on non-type parameters, launched with explicit template arguments
// (K<float><<<...>>>, K<3, double><<<...>>>). The FMA is explicit on both sides: bit-exact check.
#include "common.cuh"

__host__ __device__ inline float madd(float a, float b, float c) { return fmaf(a, b, c); }
__host__ __device__ inline double madd(double a, double b, double c) { return fma(a, b, c); }
__host__ __device__ inline int madd(int a, int b, int c) { return a * b + c; }

template <typename T>
__global__ void scale_add(int n, T a, const T* x, T* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = madd(a, x[i], y[i]);
}

// out[i] = in[i * STRIDE] * SCALE (STRIDE, SCALE non-type template parameters)
template <int STRIDE, typename T, int SCALE>
__global__ void gather(int n, const T* in, T* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = in[(size_t)i * STRIDE] * (T)SCALE;
}

template <typename T>
static void test_scale_add(const char* what) {
  int n = (int)tg::rand_int(1, 500000);
  T a = (T)tg::rand_int(-7, 7);
  if (!std::is_integral<T>::value) a = (T)tg::rand_double(-3, 3);
  auto hx = std::is_integral<T>::value ? tg::random_ints<T>(n, -1000, 1000) : tg::random_reals<T>(n, -10, 10);
  auto hy = std::is_integral<T>::value ? tg::random_ints<T>(n, -1000, 1000) : tg::random_reals<T>(n, -10, 10);
  tg::DevBuf<T> x(n), y(n);
  x.upload(hx);
  y.upload(hy);
  scale_add<T><<<(n + 127) / 128, 128>>>(n, a, x, y);
  tg::sync_check(what);
  std::vector<T> want(n);
  for (int i = 0; i < n; ++i) want[i] = madd(a, hx[i], hy[i]);
  tg::compare_exact(y.download(), want, what);
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "template_explicit");
  if (tg::bench_mode()) {
    int n = 1 << 26;
    tg::DevBuf<float> x(n), y(n);
    x.fill_bytes(0);
    y.fill_bytes(0);
    return tg::bench("template_explicit", [&] { scale_add<float><<<(n + 255) / 256, 256>>>(n, 1.5f, x, y); });
  }
  test_scale_add<float>("scale_add<float>");
  test_scale_add<double>("scale_add<double>");
  test_scale_add<int>("scale_add<int>");
  {
    int n = (int)tg::rand_int(1, 200000);
    auto hin = tg::random_reals<float>((size_t)n * 3, -100, 100);
    tg::DevBuf<float> in(hin.size()), out(n);
    in.upload(hin);
    out.poison();
    gather<3, float, -2><<<dim3((n + 63) / 64), dim3(64)>>>(n, in, out);
    tg::sync_check("gather<3, float, -2>");
    std::vector<float> want(n);
    for (int i = 0; i < n; ++i) want[i] = hin[(size_t)i * 3] * -2.0f;
    tg::compare_exact(out.download(), want, "gather<3, float, -2>");
  }
  {
    int n = (int)tg::rand_int(1, 200000);
    auto hin = tg::random_ints<long long>((size_t)n * 5, -100000, 100000);
    tg::DevBuf<long long> in(hin.size()), out(n);
    in.upload(hin);
    out.poison();
    gather<5, long long, 7><<<(n + 255) / 256, 256>>>(n, in, out);
    tg::sync_check("gather<5, long long, 7>");
    std::vector<long long> want(n);
    for (int i = 0; i < n; ++i) want[i] = hin[(size_t)i * 5] * 7;
    tg::compare_exact(out.download(), want, "gather<5, long long, 7>");
  }
  return tg::finish();
}

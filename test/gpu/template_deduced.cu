// Template arguments deduced at the launch: K<<<g, b>>>(args) with T deduced from the arguments, a
// non-type parameter deduced from a by-value struct (Vec<N>), and a defaulted template parameter.
#include "common.cuh"

template <typename T>
__global__ void axpy(int n, T a, const T* x, T* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

template <int N>
struct Vec {
  int v[N];
};

// out[i] = sum_k w.v[k] * x[i + k] (a correlation with N taps, N deduced from the Vec<N> argument)
template <int N, typename T = long long>
__global__ void correlate(Vec<N> w, const int* x, T* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  T acc = 0;
#pragma unroll
  for (int k = 0; k < N; ++k) acc += (T)w.v[k] * x[i + k];
  out[i] = acc;
}

template <int N>
static void test_correlate() {
  int n = (int)tg::rand_int(1, 300000);
  Vec<N> w;
  for (int k = 0; k < N; ++k) w.v[k] = (int)tg::rand_int(-1000, 1000);
  auto hx = tg::random_ints<int>((size_t)n + N, -1000000, 1000000);
  tg::DevBuf<int> x(hx.size());
  tg::DevBuf<long long> out(n);
  x.upload(hx);
  out.poison();
  correlate<<<(n + 127) / 128, 128>>>(w, x.p, out.p, n);  // N deduced, T defaulted
  tg::sync_check("correlate");
  std::vector<long long> want(n);
  for (int i = 0; i < n; ++i) {
    long long acc = 0;
    for (int k = 0; k < N; ++k) acc += (long long)w.v[k] * hx[i + k];
    want[i] = acc;
  }
  tg::compare_exact(out.download(), want, N == 3 ? "correlate<3>" : "correlate<N>");
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "template_deduced");
  if (tg::bench_mode()) {
    int n = 1 << 26;
    tg::DevBuf<float> x(n), y(n);
    x.fill_bytes(0);
    y.fill_bytes(0);
    const float* cx = x.p;
    float* py = y.p;
    return tg::bench("template_deduced", [&] { axpy<<<(n + 255) / 256, 256>>>(n, 0.5f, cx, py); });
  }
  {
    // ints: exact whatever the contraction
    int n = (int)tg::rand_int(1, 500000);
    int a = (int)tg::rand_int(-100, 100);
    auto hx = tg::random_ints<int>(n, -10000, 10000), hy = tg::random_ints<int>(n, -10000, 10000);
    tg::DevBuf<int> x(n), y(n);
    x.upload(hx);
    y.upload(hy);
    const int* cx = x.p;
    int* py = y.p;
    axpy<<<(n + 255) / 256, 256>>>(n, a, cx, py);  // T = int deduced
    tg::sync_check("axpy<int> deduced");
    std::vector<int> want(n);
    for (int i = 0; i < n; ++i) want[i] = a * hx[i] + hy[i];
    tg::compare_exact(y.download(), want, "axpy<int> deduced");
  }
  {
    // doubles: a*x+y may be contracted to an FMA on the GPU; the difference to the CPU's a*x+y is at most
    // one rounding of a*x, i.e. <= 2^-53 |a x| (+ 2^-53 |result| for the final rounding either way)
    int n = (int)tg::rand_int(1, 500000);
    double a = tg::rand_double(-2, 2);
    auto hx = tg::random_reals<double>(n, -1, 1), hy = tg::random_reals<double>(n, -1, 1);
    tg::DevBuf<double> x(n), y(n);
    x.upload(hx);
    y.upload(hy);
    const double* cx = x.p;
    double* py = y.p;
    axpy<<<dim3((n + 255) / 256), dim3(256)>>>(n, a, cx, py);  // T = double deduced
    tg::sync_check("axpy<double> deduced");
    std::vector<double> want(n), tol(n);
    for (int i = 0; i < n; ++i) {
      want[i] = a * hx[i] + hy[i];
      tol[i] = 0x1p-52 * (std::fabs(a * hx[i]) + std::fabs(want[i]));
    }
    tg::compare_tol(y.download(), want, tol, "axpy<double> deduced");
  }
  test_correlate<3>();
  test_correlate<8>();
  return tg::finish();
}

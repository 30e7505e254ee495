// Launches written inside macro arguments: CHECK((K<<<g, b>>>(x))) where CHECK evaluates its argument and
// then checks cudaGetLastError; a launch spread over several lines inside a macro argument; nested macros.
// (A macro that expands its argument twice is in launch_macro_twice.cu.)
#include "common.cuh"

static int g_checks = 0;

#define CHECK(expr)                                                                          \
  do {                                                                                       \
    (void)(expr);                                                                            \
    ++g_checks;                                                                              \
    cudaError_t e_ = cudaGetLastError();                                                     \
    if (e_ != cudaSuccess) tg::die("CHECK(%s) at line %d: %s", #expr, __LINE__, cudaGetErrorName(e_)); \
  } while (0)

#define OUTER(x) CHECK(x)

__global__ void add_one(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1;
}

__global__ void add_value(int* p, int n, int v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += v * (int)(blockIdx.x % 2 + 1);
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "launch_macro_arg");
  if (tg::bench_mode()) {
    int n = 1 << 26;
    tg::DevBuf<int> d(n);
    d.fill_bytes(0);
    return tg::bench("launch_macro_arg", [&] { CHECK((add_one<<<(n + 255) / 256, 256>>>(d, n))); });
  }
  int n = (int)tg::rand_int(1, 1000000);
  auto h = tg::random_ints<int>(n, -1000000, 1000000);
  tg::DevBuf<int> d(n);
  d.upload(h);
  int v = (int)tg::rand_int(1, 1000);
  std::vector<int> want(h);

  CHECK((add_one<<<(n + 255) / 256, 256>>>(d, n)));
  for (int i = 0; i < n; ++i) want[i] += 1;

  CHECK((add_one<<<dim3((n + 127) / 128), dim3(128)>>>(d, n)));
  for (int i = 0; i < n; ++i) want[i] += 1;

  CHECK((add_value<<<(n + 63) / 64,
                     64,
                     0,
                     0>>>(d,
                          n,
                          v)));
  for (int i = 0; i < n; ++i) want[i] += v * ((i / 64) % 2 + 1);

  OUTER((add_value<<<(n + 31) / 32, 32>>>(d, n, -v)));
  for (int i = 0; i < n; ++i) want[i] -= v * ((i / 32) % 2 + 1);

  tg::sync_check("macro launches");
  tg::compare_exact(d.download(), want, "launches in macro arguments");
  tg::check(g_checks == 4, "CHECK ran %d times, want 4", g_checks);
  return tg::finish();
}

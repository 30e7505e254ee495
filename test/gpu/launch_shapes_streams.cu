// Launch-configuration forms: int, unsigned, size_t-derived and dim3 shapes (variables, temporaries,
// dim3 of one value, conditional expressions), default and explicit shared-memory and stream arguments
// (<<<g,b>>>, <<<g,b,0>>>, <<<g,b,0,0>>>, <<<g,b,sh,s>>> with a created stream, cudaStreamPerThread and a
// non-blocking stream), a launch in a host function template and one in a lambda.
#include "common.cuh"

__global__ void fill_affine(int* out, int n, int a, int b) {
  extern __shared__ int dyn[];  // used only when the launch gives dynamic shared memory
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (blockDim.y > 1) i = (blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  if (threadIdx.x == 0 && threadIdx.y == 0 && n < 0) dyn[0] = 1;  // never taken; keeps dyn referenced
  if (i < n) out[i] = a * i + b;
}

template <typename T>
__global__ void fill_value(T* out, int n, T v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = v;
}

template <typename T>
static void launch_in_template(T* p, int n, T v, cudaStream_t s) {
  fill_value<T><<<(n + 63) / 64, 64, 0, s>>>(p, n, v);
}

static int check_fill(const tg::DevBuf<int>& d, int n, int a, int b, const char* what) {
  auto h = d.download();
  std::vector<int> want(n);
  for (int i = 0; i < n; ++i) want[i] = a * i + b;
  return (int)tg::compare_exact(h, want, what);
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "launch_shapes_streams");
  cudaStream_t s1, s2;
  CUDA_CHECK(cudaStreamCreate(&s1));
  CUDA_CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  if (tg::bench_mode()) {
    int n = 1 << 26;
    tg::DevBuf<int> d(n);
    return tg::bench("launch_shapes_streams", s1,
                     [&] { fill_affine<<<dim3((n + 255) / 256), dim3(256), 0, s1>>>(d, n, 3, 1); });
  }
  int n = (int)tg::rand_int(1, 1000000);
  tg::DevBuf<int> d(n);
  int a = (int)tg::rand_int(-100, 100), b = (int)tg::rand_int(-100000, 100000);
  const int bs = 128;
  unsigned ubs = 256;
  size_t nbytes = (size_t)n * sizeof(int);
  int k = 0;
  auto next = [&] {
    d.poison();
    ++k;
    return a + k;
  };

  int aa = next();
  fill_affine<<<(n + bs - 1) / bs, bs>>>(d, n, aa, b);  // int, int
  tg::sync_check("int shapes");
  check_fill(d, n, aa, b, "<<<int, int>>>");

  aa = next();
  fill_affine<<<(unsigned)((nbytes / sizeof(int) + ubs - 1) / ubs), ubs>>>(d, n, aa, b);  // unsigned, size_t expr
  tg::sync_check("unsigned shapes");
  check_fill(d, n, aa, b, "<<<unsigned, unsigned>>>");

  aa = next();
  dim3 grid((n + 255) / 256), block(256);
  fill_affine<<<grid, block, 0>>>(d, n, aa, b);  // dim3 variables, explicit 0 shared memory
  tg::sync_check("dim3 variables");
  check_fill(d, n, aa, b, "<<<dim3, dim3, 0>>>");

  aa = next();
  fill_affine<<<dim3((n + 511) / 512, 1, 1), dim3(64, 8), 0, 0>>>(d, n, aa, b);  // 2-D block, stream 0
  tg::sync_check("dim3 temporaries");
  check_fill(d, n, aa, b, "<<<dim3(...), dim3(64, 8), 0, 0>>>");

  aa = next();
  fill_affine<<<n > 1000 ? (n + 1023) / 1024 : 1, n > 1000 ? 1024 : 1000, 4 * sizeof(int), s1>>>(d, n, aa, b);
  CUDA_CHECK(cudaStreamSynchronize(s1));
  tg::sync_check("conditional shapes, created stream");
  check_fill(d, n, aa, b, "<<<cond ? : , cond ? :, 16, s1>>>");

  aa = next();
  fill_affine<<<(n + 31) / 32, 32, 0, cudaStreamPerThread>>>(d, n, aa, b);
  CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
  tg::sync_check("cudaStreamPerThread");
  check_fill(d, n, aa, b, "<<<g, b, 0, cudaStreamPerThread>>>");

  aa = next();
  size_t shmem = 1024;
  fill_affine<<<dim3(n / 97 + 1), 97, shmem, s2>>>(d, n, aa, b);  // odd block, non-blocking stream
  CUDA_CHECK(cudaStreamSynchronize(s2));
  tg::sync_check("non-blocking stream");
  check_fill(d, n, aa, b, "<<<dim3, 97, shmem, s2>>>");

  {
    tg::DevBuf<double> dv(n);
    dv.poison();
    double v = tg::rand_double(-1, 1);
    launch_in_template<double>(dv, n, v, s1);
    CUDA_CHECK(cudaStreamSynchronize(s1));
    tg::sync_check("launch in a template");
    tg::compare_exact(dv.download(), std::vector<double>(n, v), "launch in a host function template");
  }
  {
    tg::DevBuf<short> ds(n);
    ds.poison();
    short v = (short)tg::rand_int(-30000, 30000);
    auto launch = [&](cudaStream_t s) { fill_value<<<(n + 255) / 256, 256, 0, s>>>(ds.p, n, v); };
    launch(s2);
    CUDA_CHECK(cudaStreamSynchronize(s2));
    tg::sync_check("launch in a lambda");
    tg::compare_exact(ds.download(), std::vector<short>(n, v), "launch in a lambda (deduced T = short)");
  }
  CUDA_CHECK(cudaStreamDestroy(s1));
  CUDA_CHECK(cudaStreamDestroy(s2));
  return tg::finish();
}

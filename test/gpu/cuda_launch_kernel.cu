// The runtime-API launch form cudaLaunchKernel((const void*)K, grid, block, argv, shmem, stream): 1-D and
// 2-D shapes, dynamic shared memory, a created stream and the default stream; the returned error code for a
// good and for a bad configuration (2048 threads: cudaErrorInvalidConfiguration up to CUDA 12,
// cudaErrorInvalidValue with CUDA 13.0 / driver 580), and a good launch after it.
#include "common.cuh"

#if CUDART_VERSION >= 13000
static const cudaError_t kBadConfig = cudaErrorInvalidValue;
#else
static const cudaError_t kBadConfig = cudaErrorInvalidConfiguration;
#endif

__global__ void scale_rows(float* m, int w, int h, float s) {
  extern __shared__ float row_scale[];
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (threadIdx.x == 0) row_scale[0] = s * (float)(y % 5 + 1);
  __syncthreads();
  if (x < w && y < h) m[(size_t)y * w + x] *= row_scale[0];
}

__global__ void iota(int* p, int n, int base) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = base + i;
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "cuda_launch_kernel");
  cudaStream_t st;
  CUDA_CHECK(cudaStreamCreate(&st));
  if (tg::bench_mode()) {
    int n = 1 << 26, base = 0;
    tg::DevBuf<int> d(n);
    int* p = d.p;
    void* args[] = {&p, &n, &base};
    return tg::bench("cuda_launch_kernel", st, [&] {
      CUDA_CHECK(cudaLaunchKernel((const void*)iota, dim3((n + 255) / 256), dim3(256), args, 0, st));
    });
  }
  {
    int w = (int)tg::rand_int(1, 3000), h = (int)tg::rand_int(1, 500);
    float s = tg::rand_float(-2, 2);
    auto hm = tg::random_reals<float>((size_t)w * h, -100, 100);
    tg::DevBuf<float> m(hm.size());
    m.upload(hm);
    float* mp = m.p;
    void* args[] = {&mp, &w, &h, &s};
    cudaError_t e = cudaLaunchKernel((const void*)scale_rows, dim3((w + 127) / 128, h), dim3(128), args,
                                     sizeof(float), st);
    tg::check(e == cudaSuccess, "cudaLaunchKernel(scale_rows) returned %s", cudaGetErrorName(e));
    CUDA_CHECK(cudaStreamSynchronize(st));
    tg::sync_check("scale_rows");
    std::vector<float> want(hm.size());
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) want[(size_t)y * w + x] = hm[(size_t)y * w + x] * (s * (float)(y % 5 + 1));
    tg::compare_exact(m.download(), want, "cudaLaunchKernel 2-D with dynamic shared memory");
  }
  {
    int n = (int)tg::rand_int(1, 1000000), base = (int)tg::rand_int(-1000, 1000);
    tg::DevBuf<int> d(n);
    d.poison();
    int* p = d.p;
    void* args[] = {&p, &n, &base};
    // bad configuration first: must report the runtime's code for it and not run
    cudaError_t bad = cudaLaunchKernel((const void*)iota, dim3(1), dim3(2048), args, 0, 0);
    tg::check(bad == kBadConfig, "2048-thread cudaLaunchKernel returned %s, want %s", cudaGetErrorName(bad),
              cudaGetErrorName(kBadConfig));
    cudaGetLastError();  // clear
    CUDA_CHECK(cudaDeviceSynchronize());
    tg::compare_exact(d.download(), std::vector<int>(n, -1), "output after the failed launch");
    cudaError_t e = cudaLaunchKernel((const void*)iota, dim3((n + 255) / 256), dim3(256), args, 0, 0);
    tg::check(e == cudaSuccess, "cudaLaunchKernel(iota) returned %s", cudaGetErrorName(e));
    tg::sync_check("iota");
    std::vector<int> want(n);
    for (int i = 0; i < n; ++i) want[i] = base + i;
    tg::compare_exact(d.download(), want, "cudaLaunchKernel 1-D, default stream");
  }
  CUDA_CHECK(cudaStreamDestroy(st));
  return tg::finish();
}

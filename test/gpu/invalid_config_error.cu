// Invalid launch configurations must report the same error through cudaGetLastError() in both builds:
// 2048 threads per block (1-D and as 1024x2), blockDim.z = 65, a grid of 0 blocks and gridDim.y = 65536.
// The code is the one the CUDA runtime gives a plain launch: cudaErrorInvalidConfiguration up to CUDA 12;
// CUDA 13.0 (driver 580, H100, measured) gives cudaErrorInvalidValue for all five. The kernel
// must not run; the error must not stick (cudaPeekAtLastError sees it, cudaGetLastError clears it), and the
// next good launch must work.
#include "common.cuh"

#if CUDART_VERSION >= 13000
static const cudaError_t kBadConfig = cudaErrorInvalidValue;
#else
static const cudaError_t kBadConfig = cudaErrorInvalidConfiguration;
#endif

__global__ void mark(int* p, int n, int v) {
  int i = (blockIdx.y * gridDim.x + blockIdx.x) * (blockDim.x * blockDim.y * blockDim.z) +
          (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v;
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "invalid_config_error");
  if (tg::bench_mode()) {
    printf("NOTE invalid_config_error: no --bench for this program (error paths only)\n");
    return 0;
  }
  const int n = 1 << 16;
  tg::DevBuf<int> d(n);
  CUDA_CHECK(cudaDeviceSynchronize());
  struct Bad {
    const char* what;
    dim3 grid, block;
  };
  const Bad bads[] = {
      {"block 2048", dim3(1), dim3(2048)},          {"block 1024x2", dim3(4), dim3(1024, 2)},
      {"blockDim.z 65", dim3(1), dim3(1, 1, 65)},   {"grid 0", dim3(0), dim3(128)},
      {"gridDim.y 65536", dim3(1, 65536), dim3(32)},
  };
  for (const Bad& bad : bads) {
    d.poison();
    int v = (int)tg::rand_int(0, 1000000);
    mark<<<bad.grid, bad.block>>>(d, n, v);
    cudaError_t peek = cudaPeekAtLastError();
    cudaError_t e = cudaGetLastError();
    cudaError_t after = cudaGetLastError();
    printf("%-16s -> %s\n", bad.what, cudaGetErrorName(e));
    tg::check(peek == kBadConfig, "%s: cudaPeekAtLastError gave %s, want %s", bad.what, cudaGetErrorName(peek),
              cudaGetErrorName(kBadConfig));
    tg::check(e == kBadConfig, "%s: cudaGetLastError gave %s, want %s", bad.what, cudaGetErrorName(e),
              cudaGetErrorName(kBadConfig));
    tg::check(after == cudaSuccess, "%s: error stuck: second cudaGetLastError gave %s", bad.what,
              cudaGetErrorName(after));
    CUDA_CHECK(cudaDeviceSynchronize());
    tg::compare_exact(d.download(), std::vector<int>(n, -1), bad.what);
    // the plain int form too
    if (bad.block.x == 2048) {
      mark<<<1, 2048>>>(d, n, v);
      cudaError_t e2 = cudaGetLastError();
      tg::check(e2 == kBadConfig, "<<<1, 2048>>>: cudaGetLastError gave %s", cudaGetErrorName(e2));
    }
    mark<<<n / 256, 256>>>(d, n, v);  // a good launch right after
    tg::sync_check("good launch after a bad one");
    tg::compare_exact(d.download(), std::vector<int>(n, v), "good launch after a bad one");
  }
  return tg::finish();
}

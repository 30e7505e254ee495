// Dynamic shared memory above the 48 KB default: the program raises the kernel's limit with
// cudaFuncSetAttribute(K, cudaFuncAttributeMaxDynamicSharedMemorySize, ...) (on the original kernel, as
// any CUDA program does) and launches with 160 KB. Each block stages a 40960-int segment in shared memory
// and writes it back reversed and rotated by blockIdx. Exact check. Before the attribute is set, the same launch
// must fail (in both builds), and the failure must not stick.
#include "common.cuh"

constexpr int kSegInts = 40960;  // 160 KB

__global__ void reverse_segments(const int* in, int* out, int n) {
  extern __shared__ int seg[];
  size_t base = (size_t)blockIdx.x * kSegInts;
  for (int i = threadIdx.x; i < kSegInts; i += blockDim.x) seg[i] = base + i < (size_t)n ? in[base + i] : 0;
  __syncthreads();
  for (int i = threadIdx.x; i < kSegInts; i += blockDim.x) {
    int j = (kSegInts - 1 - i + (int)blockIdx.x) % kSegInts;
    if (base + i < (size_t)n) out[base + i] = seg[j];
  }
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "dynamic_shared_over_48k");
  const size_t shmem = kSegInts * sizeof(int);
  if (!tg::bench_mode()) {
    tg::DevBuf<int> dummy(kSegInts);
    reverse_segments<<<1, 512, shmem>>>(dummy, dummy, 0);
    cudaError_t e = cudaGetLastError();
    printf("launch with 160 KB before cudaFuncSetAttribute: %s\n", cudaGetErrorName(e));
    tg::check(e != cudaSuccess, "a launch with 160 KB of dynamic shared memory succeeded before the attribute was set");
    tg::check(cudaGetLastError() == cudaSuccess, "the launch error stuck");
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  CUDA_CHECK(cudaFuncSetAttribute(reverse_segments, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shmem));
  if (tg::bench_mode()) {
    int nb = 132 * 40, n = nb * kSegInts;
    tg::DevBuf<int> in(n), out(n);
    in.fill_bytes(0);
    return tg::bench("dynamic_shared_over_48k", [&] { reverse_segments<<<nb, 512, shmem>>>(in, out, n); });
  }
  int n = (int)tg::rand_int(1, 3000000);
  int nb = (n + kSegInts - 1) / kSegInts;
  auto h = tg::random_ints<int>(n, -1000000000, 1000000000);
  tg::DevBuf<int> in(n), out(n);
  in.upload(h);
  out.poison();
  reverse_segments<<<nb, 512, shmem>>>(in, out, n);
  tg::sync_check("reverse_segments");
  std::vector<int> want(n);
  for (int i = 0; i < n; ++i) {
    int b = i / kSegInts, k = i % kSegInts;
    size_t src = (size_t)b * kSegInts + (kSegInts - 1 - k + b) % kSegInts;
    want[i] = src < (size_t)n ? h[src] : 0;
  }
  tg::compare_exact(out.download(), want, "reversed segments");
  return tg::finish();
}

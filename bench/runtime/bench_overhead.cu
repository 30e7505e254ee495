// PTB twin with all SMs allowed vs the original kernel (same binary, ptb::set_launch_mode A/B), and the
// host cost of a launch through the runtime vs a plain <<<>>> launch.
#include <ptb/ptb.cuh>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("CUDA %s at %d: %s\n", #x, __LINE__, cudaGetErrorString(e)); std::exit(1); } } while (0)

// ---- elementwise, iters FMAs per element (probe-h100.cu's kernel)
__global__ void ew(int n, const float* x, float* y, int iters) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  for (int k = 0; k < iters; ++k) v = v * 1.0001f + 0.5f;
  y[i] = v;
}
static __device__ __forceinline__ void ew__ptb_task(const uint3 blockIdx, const dim3 gridDim, int n, const float* x, float* y, int iters) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  for (int k = 0; k < iters; ++k) v = v * 1.0001f + 0.5f;
  y[i] = v;
}
__global__ void ew__ptb(int n, const float* x, float* y, int iters, const ::ptb::Launch ptb_launch) {
  ::ptb::run_tasks(ptb_launch, [&](const uint3 ptb_block, const dim3 ptb_grid) { ew__ptb_task(ptb_block, ptb_grid, n, x, y, iters); });
}
static inline void ew__ptb_launch(const ::ptb::LaunchConfig& c, int n, const float* x, float* y, int iters) {
  ::ptb::launch(c, ew, ew__ptb, n, x, y, iters);
}

// ---- block-level reduction with shared memory and barriers (rows of 4096 floats per block)
__global__ void rowsum(const float* x, float* out) {
  __shared__ float s[256];
  float v = 0;
  for (int i = threadIdx.x; i < 4096; i += 256) v += x[(size_t)blockIdx.x * 4096 + i];
  s[threadIdx.x] = v;
  __syncthreads();
  for (int w = 128; w > 0; w >>= 1) { if ((int)threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w]; __syncthreads(); }
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}
static __device__ __forceinline__ void rowsum__ptb_task(const uint3 blockIdx, const dim3 gridDim, const float* x, float* out) {
  __shared__ float s[256];
  float v = 0;
  for (int i = threadIdx.x; i < 4096; i += 256) v += x[(size_t)blockIdx.x * 4096 + i];
  s[threadIdx.x] = v;
  __syncthreads();
  for (int w = 128; w > 0; w >>= 1) { if ((int)threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w]; __syncthreads(); }
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}
__global__ void rowsum__ptb(const float* x, float* out, const ::ptb::Launch ptb_launch) {
  ::ptb::run_tasks(ptb_launch, [&](const uint3 ptb_block, const dim3 ptb_grid) { rowsum__ptb_task(ptb_block, ptb_grid, x, out); });
}

__global__ void nop(int) {}
__global__ void nop__ptb(int a, const ::ptb::Launch ptb_launch) {
  ::ptb::run_tasks(ptb_launch, [&](const uint3, const dim3) { (void)a; });
}

int main() {
  setvbuf(stdout, nullptr, _IONBF, 0);
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  std::printf("device %s, %d SMs\n", p.name, p.multiProcessorCount);
  const int n = 1 << 26;
  float *x, *y;
  CK(cudaMalloc(&x, (size_t)n * 4));
  CK(cudaMalloc(&y, (size_t)n * 4));
  std::vector<float> hx(n);
  for (int i = 0; i < n; ++i) hx[i] = (float)((i * 7919u) % 977) * 0.001f - 0.4f;
  CK(cudaMemcpy(x, hx.data(), (size_t)n * 4, cudaMemcpyHostToDevice));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  auto timeit = [&](auto&& launch) {
    std::vector<float> ts;
    for (int r = 0; r < 25; ++r) {
      launch();
      CK(cudaEventRecord(a));
      launch();
      CK(cudaEventRecord(b));
      CK(cudaEventSynchronize(b));
      float ms;
      CK(cudaEventElapsedTime(&ms, a, b));
      ts.push_back(ms);
    }
    CK(cudaGetLastError());
    std::sort(ts.begin(), ts.end());
    return ts[ts.size() / 2];
  };
  auto ab = [&](auto&& launch) {  // original, ptb, ptb again (spread)
    ::ptb::set_launch_mode(::ptb::LaunchMode::original);
    const float t0 = timeit(launch);
    ::ptb::set_launch_mode(::ptb::LaunchMode::ptb);
    const float t1 = timeit(launch);
    ::ptb::set_launch_mode(::ptb::LaunchMode::original);
    const float t2 = timeit(launch);
    ::ptb::set_launch_mode(::ptb::LaunchMode::ptb);
    const float t3 = timeit(launch);
    return std::make_pair(std::min(t0, t2), std::min(t1, t3));
  };
  std::vector<double> ratios;
  std::printf("%-34s %10s %10s %7s\n", "kernel", "orig ms", "ptb ms", "ratio");
  for (int bs : {256, 1024, 128})
    for (int iters : {0, 16, 256}) {
      const int g = (n + bs - 1) / bs;
      auto r = ab([&] { ew__ptb_launch(::ptb::LaunchConfig(g, bs), n, x, y, iters); });
      char name[64];
      std::snprintf(name, sizeof name, "ew block %d, %d FMA/elt", bs, iters);
      std::printf("%-34s %10.4f %10.4f %7.3f\n", name, r.first, r.second, r.second / r.first);
      ratios.push_back(r.second / r.first);
    }
  {
    const int rows = n / 4096;
    auto r = ab([&] { ::ptb::launch(::ptb::LaunchConfig(rows, 256), rowsum, rowsum__ptb, (const float*)x, y); });
    std::printf("%-34s %10.4f %10.4f %7.3f\n", "rowsum 16384 x 4096", r.first, r.second, r.second / r.first);
    ratios.push_back(r.second / r.first);
  }
  {  // small grid (fewer tasks than one wave)
    auto r = ab([&] { ew__ptb_launch(::ptb::LaunchConfig(100, 256), 100 * 256, x, y, 4096); });
    std::printf("%-34s %10.4f %10.4f %7.3f\n", "ew 100 blocks, 4096 FMA/elt", r.first, r.second, r.second / r.first);
    ratios.push_back(r.second / r.first);
  }
  double lg = 0, worst = 0;
  for (double q : ratios) { lg += std::log(q); worst = std::max(worst, q); }
  std::printf("ptb/original: geometric mean %.3f, worst %.3f over %zu kernels\n", std::exp(lg / ratios.size()), worst, ratios.size());

  // Diagnosis of the per-task cost: the same kernels with the cap read (almost) never, and larger claims.
  std::printf("tuning sweep (ratio to original), ew block 256:\n%-30s %10s %10s %10s\n", "check/max/first/chunk_cycles",
              "0 FMA", "16 FMA", "256 FMA");
  // {check_cycles, max_chunk, first_chunk, chunk_cycles}; the first row is what the last GPU run measured
  for (auto t : {ptb::Tuning{16384, 64, 64, 0}, ptb::Tuning{1u << 30, 64, 64, 0}, ptb::Tuning{16384, 64, 4, 65536},
                 ptb::Tuning{16384, 16, 4, 0}, ptb::Tuning{16384, 64, 1, 16384}, ptb::Tuning{1u << 30, 127, 1, 0}}) {
    ptb::set_tuning(t);
    double r[3];
    int j = 0;
    for (int iters : {0, 16, 256}) {
      const int g = (n + 255) / 256;
      auto q = ab([&] { ew__ptb_launch(::ptb::LaunchConfig(g, 256), n, x, y, iters); });
      r[j++] = q.second / q.first;
    }
    char name[48];
    std::snprintf(name, sizeof name, "%u/%u/%u/%u", t.check_cycles, t.max_chunk, t.first_chunk, t.chunk_cycles);
    std::printf("%-30s %10.3f %10.3f %10.3f\n", name, r[0], r[1], r[2]);
  }
  ptb::set_tuning(ptb::Tuning{});

  // Host launch cost: the same 1-block kernel, 200 launches per batch, host time of the launch loop.
  auto host_us = [&](auto&& launch) {
    std::vector<double> ts;
    for (int rep = 0; rep < 30; ++rep) {
      CK(cudaDeviceSynchronize());
      const auto t0 = std::chrono::steady_clock::now();
      for (int k = 0; k < 200; ++k) launch();
      const auto t1 = std::chrono::steady_clock::now();
      ts.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / 200);
    }
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::sort(ts.begin(), ts.end());
    return ts[ts.size() / 2];
  };
  for (int grid : {1, 1000}) {
    const double plain = host_us([&] { nop<<<grid, 256>>>(1); });
    const double viar = host_us([&] { ::ptb::launch(::ptb::LaunchConfig(grid, 256), nop, nop__ptb, 1); });
    ::ptb::set_launch_mode(::ptb::LaunchMode::original);
    const double orig = host_us([&] { ::ptb::launch(::ptb::LaunchConfig(grid, 256), nop, nop__ptb, 1); });
    ::ptb::set_launch_mode(::ptb::LaunchMode::ptb);
    const double plain2 = host_us([&] { nop<<<grid, 256>>>(1); });
    std::printf("host launch cost, grid %4d: plain <<<>>> %.2f us, ptb::launch %.2f us (+%.2f us), original mode %.2f us\n",
                grid, std::min(plain, plain2), viar, viar - std::min(plain, plain2), orig);
  }
  return 0;
}

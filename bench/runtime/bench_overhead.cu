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

// ---- elementwise, iters FMAs per element (the probe kernel of docs/design/facts.md, fact 17)
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
#ifdef PTB_HAS_TASK_SYNC
// The same twin with the generated-code hint: no __shared__, no barriers, no warp intrinsics in the body.
__global__ void ew__ptb_ns(int n, const float* x, float* y, int iters, const ::ptb::Launch ptb_launch) {
  ::ptb::run_tasks<::ptb::TaskSync::none>(ptb_launch, [&](const uint3 ptb_block, const dim3 ptb_grid) { ew__ptb_task(ptb_block, ptb_grid, n, x, y, iters); });
}
#define HINT 1
#else
#define HINT 0
#endif
static bool g_hint = false;
static ptb::Tuning T(unsigned check, unsigned maxc, unsigned first, unsigned chunk) {
  ptb::Tuning t;
  t.check_cycles = check;
  t.max_chunk = maxc;
  t.first_chunk = first;
  t.chunk_cycles = chunk;
  return t;
}  // launch the hinted twin
static inline void ew_launch(const ::ptb::LaunchConfig& c, int n, const float* x, float* y, int iters) {
#if HINT
  if (g_hint) { ::ptb::launch(c, ew, ew__ptb_ns, n, x, y, iters); return; }
#else
  if (g_hint) std::abort();  // no hint in this runtime
#endif
  ::ptb::launch(c, ew, ew__ptb, n, x, y, iters);
}

// ---- elementwise over a 3D volume (nx x ny x nz floats), 3D blocks and grid (grid3d test programs)
__global__ void ew3(int nx, int ny, const float* x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y * blockDim.y + threadIdx.y,
            k = blockIdx.z * blockDim.z + threadIdx.z;
  const size_t o = ((size_t)k * ny + j) * nx + i;
  y[o] = x[o] * 2.0f + 1.0f;
}
static __device__ __forceinline__ void ew3__ptb_task(const uint3 blockIdx, const dim3 gridDim, int nx, int ny, const float* x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y * blockDim.y + threadIdx.y,
            k = blockIdx.z * blockDim.z + threadIdx.z;
  const size_t o = ((size_t)k * ny + j) * nx + i;
  y[o] = x[o] * 2.0f + 1.0f;
}
__global__ void ew3__ptb(int nx, int ny, const float* x, float* y, const ::ptb::Launch ptb_launch) {
  ::ptb::run_tasks(ptb_launch, [&](const uint3 ptb_block, const dim3 ptb_grid) { ew3__ptb_task(ptb_block, ptb_grid, nx, ny, x, y); });
}
#if HINT
__global__ void ew3__ptb_ns(int nx, int ny, const float* x, float* y, const ::ptb::Launch ptb_launch) {
  ::ptb::run_tasks<::ptb::TaskSync::none>(ptb_launch, [&](const uint3 ptb_block, const dim3 ptb_grid) { ew3__ptb_task(ptb_block, ptb_grid, nx, ny, x, y); });
}
#endif
static inline void ew3_launch(const ::ptb::LaunchConfig& c, int nx, int ny, const float* x, float* y) {
#if HINT
  if (g_hint) { ::ptb::launch(c, ew3, ew3__ptb_ns, nx, ny, x, y); return; }
#endif
  ::ptb::launch(c, ew3, ew3__ptb, nx, ny, x, y);
}

// ---- fixed cost of a launch on the device: one thread writes a word in device or host-mapped memory
__global__ void poke(unsigned* p) { if (threadIdx.x == 0 && blockIdx.x == 0) *(volatile unsigned*)p = 1; }

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
  // The table: every kernel as the tool emits it today (TaskSync::block), then the ew kernels with the
  // generated-code hint (TaskSync::none, where the body qualifies), under the current tuning.
  const int nsm = p.multiProcessorCount;
  auto table = [&](const char* title) {
    std::printf("== %s\n%-40s %10s %10s %7s\n", title, "kernel", "orig ms", "ptb ms", "ratio");
    std::vector<double> all, hinted;
    auto row = [&](const char* name, std::pair<float, float> r, std::vector<double>* v1, std::vector<double>* v2) {
      std::printf("%-40s %10.4f %10.4f %7.3f\n", name, r.first, r.second, r.second / r.first);
      if (v1) v1->push_back(r.second / r.first);
      if (v2) v2->push_back(r.second / r.first);
    };
    char name[96];
    for (int h = 0; h <= HINT; ++h) {
      g_hint = h;
      for (int bs : {256, 1024, 128})
        for (int iters : {0, 16, 256}) {
          const int g = (n + bs - 1) / bs;
          auto r = ab([&] { ew_launch(::ptb::LaunchConfig(g, bs), n, x, y, iters); });
          std::snprintf(name, sizeof name, "ew block %d, %d FMA/elt%s", bs, iters, h ? " [none]" : "");
          row(name, r, h ? nullptr : &all, h || !HINT ? &hinted : nullptr);
        }
      {
        auto r = ab([&] { ew3_launch(::ptb::LaunchConfig(dim3(64, 64, 64), dim3(8, 8, 4)), 512, 512, x, y); });
        std::snprintf(name, sizeof name, "ew3 grid 64^3, block 8x8x4%s", h ? " [none]" : "");
        row(name, r, h ? nullptr : &all, h || !HINT ? &hinted : nullptr);
      }
      {  // one full wave (grid = workers) of long blocks, >= 0.1 ms
        const int g = nsm * 8;
        auto r = ab([&] { ew_launch(::ptb::LaunchConfig(g, 256), g * 256, x, y, 16384); });
        std::snprintf(name, sizeof name, "ew %d blocks (1 wave), 16384 FMA%s", g, h ? " [none]" : "");
        row(name, r, h ? nullptr : &all, h || !HINT ? &hinted : nullptr);
      }
      {  // small grid (fewer tasks than one wave), short: < 0.1 ms, outside the target
        auto r = ab([&] { ew_launch(::ptb::LaunchConfig(100, 256), 100 * 256, x, y, 4096); });
        std::snprintf(name, sizeof name, "ew 100 blocks, 4096 FMA (<0.1 ms)%s", h ? " [none]" : "");
        row(name, r, nullptr, nullptr);
      }
    }
    g_hint = false;
    {
      const int rows = n / 4096;
      auto r = ab([&] { ::ptb::launch(::ptb::LaunchConfig(rows, 256), rowsum, rowsum__ptb, (const float*)x, y); });
      row("rowsum 16384 x 4096", r, &all, &hinted);
    }
    auto gm = [](const std::vector<double>& v) {
      double lg = 0, worst = 0;
      for (double q : v) { lg += std::log(q); worst = std::max(worst, q); }
      std::printf("geometric mean %.3f, worst %.3f over %zu kernels", std::exp(lg / v.size()), worst, v.size());
    };
    std::printf("ptb/original, as emitted today (block): "); gm(all); std::printf("\n");
    if (HINT) { std::printf("ptb/original, with the hint where it applies: "); gm(hinted); std::printf("\n"); }
  };
  {
    const ptb::Tuning t = ptb::tuning();
    char title[96];
    std::snprintf(title, sizeof title, "default tuning %u/%u/%u/%u", t.check_cycles, t.max_chunk, t.first_chunk, t.chunk_cycles);
    table(title);
  }
  // the same code under the old default tuning (and, for the old runtime, under what its run 3 measured)
  ptb::set_tuning(T(16384, 64, 4, 65536));
  table("tuning 16384/64/4/65536 (the old default)");
#if !HINT
  ptb::set_tuning(T(16384, 64, 64, 0));
  table("tuning 16384/64/64/0 (what the GPU run 3 measured)");
#endif
  ptb::set_tuning(ptb::Tuning{});

  // Fixed cost on the device: empty kernels, original vs twin, back to back (event time per launch).
  {
    auto nopr = [&](int g) { return ab([&] { ::ptb::launch(::ptb::LaunchConfig(g, 256), nop, nop__ptb, 1); }); };
    for (int g : {1, 100, nsm * 8, nsm * 64}) {
      auto r = nopr(g);
      std::printf("empty kernel, grid %6d: original %.2f us, ptb %.2f us (+%.2f us)\n", g, r.first * 1e3, r.second * 1e3,
                  (r.second - r.first) * 1e3);
    }
    unsigned *dw, *hw, *hwd;
    CK(cudaMalloc(&dw, 4));
    CK(cudaHostAlloc(&hw, 4, cudaHostAllocMapped));
    CK(cudaHostGetDevicePointer(&hwd, hw, 0));
    const float td = timeit([&] { poke<<<1, 32>>>(dw); }), th = timeit([&] { poke<<<1, 32>>>(hwd); });
    std::printf("1-thread kernel writing a word: device memory %.2f us, host-mapped memory %.2f us\n", td * 1e3, th * 1e3);
  }

  // Diagnosis of the per-task cost: the ew kernels under other tunings (ratio to original).
  std::printf("tuning sweep (ratio to original), ew block 256 unless named:\n%-36s %10s %10s %10s %10s %10s\n", "check/max/first/chunk_cycles",
              "0 FMA", "16 FMA", "256 FMA", "ew3", "b128 256FMA");
  for (int h = 0; h <= HINT; ++h) {
    g_hint = h;
    // {check_cycles, max_chunk, first_chunk, chunk_cycles}
    // {check_cycles, max_chunk, first_chunk, chunk_cycles}: the old default, the measured run 3, the new
    // default, neighbours of the new default
    for (auto t : {T(16384, 64, 4, 65536), T(16384, 64, 64, 0), T(32768, 32, 4, 131072), T(32768, 16, 4, 65536),
                   T(32768, 32, 4, 0), T(32768, 64, 4, 131072), T(24576, 32, 4, 98304), T(65536, 32, 4, 262144)}) {
      ptb::set_tuning(t);
      double r[5];
      int j = 0;
      for (int iters : {0, 16, 256}) {
        const int g = (n + 255) / 256;
        auto q = ab([&] { ew_launch(::ptb::LaunchConfig(g, 256), n, x, y, iters); });
        r[j++] = q.second / q.first;
      }
      auto q = ab([&] { ew3_launch(::ptb::LaunchConfig(dim3(64, 64, 64), dim3(8, 8, 4)), 512, 512, x, y); });
      r[3] = q.second / q.first;
      q = ab([&] { ew_launch(::ptb::LaunchConfig((n + 127) / 128, 128), n, x, y, 256); });
      r[4] = q.second / q.first;
      char name[64];
      std::snprintf(name, sizeof name, "%u/%u/%u/%u%s", t.check_cycles, t.max_chunk, t.first_chunk, t.chunk_cycles,
                    h ? " none" : "");
      std::printf("%-36s %10.3f %10.3f %10.3f %10.3f %10.3f\n", name, r[0], r[1], r[2], r[3], r[4]);
    }
  }
  g_hint = false;
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
    ::ptb::set_launch_mode(::ptb::LaunchMode::ptb);
    const double viar = host_us([&] { ::ptb::launch(::ptb::LaunchConfig(grid, 256), nop, nop__ptb, 1); });
    ::ptb::set_launch_mode(::ptb::LaunchMode::original);
    const double orig = host_us([&] { ::ptb::launch(::ptb::LaunchConfig(grid, 256), nop, nop__ptb, 1); });
    ::ptb::set_launch_mode(::ptb::LaunchMode::automatic);  // no policy: the original, dispatched by need
    const double autom = host_us([&] { ::ptb::launch(::ptb::LaunchConfig(grid, 256), nop, nop__ptb, 1); });
    ::ptb::set_launch_mode(::ptb::LaunchMode::ptb);
    const double plain2 = host_us([&] { nop<<<grid, 256>>>(1); });
    std::printf("host launch cost, grid %4d: plain <<<>>> %.2f us, ptb::launch %.2f us (+%.2f us), original mode %.2f us,"
                " automatic mode (no policy) %.2f us\n",
                grid, std::min(plain, plain2), viar, viar - std::min(plain, plain2), orig, autom);
  }
  return 0;
}

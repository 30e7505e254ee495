// Phase-1 checks of the runtime, using the interface by hand exactly as ptb-transform's output does:
// results against CPU references (fresh random inputs, poisoned outputs), every block exactly once, 3D
// grids/blocks, shared/dynamic shared memory, barriers and early returns, parameter copies, errors as a
// plain launch reports them, original mode, cudaLaunchKernel form, many launches in 4 streams, graph
// capture and replay, a grid of more than 2^32 blocks. Runs in the `ptb` launch mode (twins forced).
#include <ptb/ptb.cuh>
#include "common.cuh"
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

// ---------------------------------------------------------------- saxpy (template, __restrict__)
template <typename T>
__global__ void __launch_bounds__(256) saxpy(int n, T a, const T* __restrict__ x, T* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
template <typename T>
static __device__ __forceinline__ void saxpy__ptb_task(const uint3 blockIdx, const dim3 gridDim, int n, T a,
                                                       const T* __restrict__ x, T* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
template <typename T>
__global__ void __launch_bounds__(256) saxpy__ptb(int n, T a, const T* __restrict__ x, T* y, const ::ptb::Launch ptb_launch) {
  ::ptb::run_tasks(ptb_launch, [&](const uint3 ptb_block, const dim3 ptb_grid) {
    saxpy__ptb_task<T>(ptb_block, ptb_grid, n, a, x, y);
  });
}
template <typename T>
static inline void saxpy__ptb_launch(const ::ptb::LaunchConfig& ptb_config, int n, T a, const T* __restrict__ x, T* y) {
  ::ptb::launch(ptb_config, saxpy<T>, saxpy__ptb<T>, n, a, x, y);
}

// ---------------------------------------------------------------- mark: 3D grid and block, every block once
__global__ void mark(unsigned* cnt, unsigned* out, unsigned seed, uint3* dims) {
  const unsigned long long id = blockIdx.x + gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
  const unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned nt = blockDim.x * blockDim.y * blockDim.z;
  if (t == 0) atomicAdd(&cnt[id], 1u);
  if (id == 0 && t == 0) *dims = make_uint3(gridDim.x, gridDim.y, gridDim.z);
  out[id * nt + t] = (unsigned)(id * 2654435761ull) ^ (t * 40503u) ^ seed;
}
static __device__ __forceinline__ void mark__ptb_task(const uint3 blockIdx, const dim3 gridDim, unsigned* cnt,
                                                      unsigned* out, unsigned seed, uint3* dims) {
  const unsigned long long id = blockIdx.x + gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
  const unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned nt = blockDim.x * blockDim.y * blockDim.z;
  if (t == 0) atomicAdd(&cnt[id], 1u);
  if (id == 0 && t == 0) *dims = make_uint3(gridDim.x, gridDim.y, gridDim.z);
  out[id * nt + t] = (unsigned)(id * 2654435761ull) ^ (t * 40503u) ^ seed;
}
__device__ unsigned g_workers_seen;  // test instrumentation: size of the worker grid
__global__ void mark__ptb(unsigned* cnt, unsigned* out, unsigned seed, uint3* dims, const ::ptb::Launch ptb_launch) {
  ::ptb::run_tasks(ptb_launch, [&](const uint3 ptb_block, const dim3 ptb_grid) {
    mark__ptb_task(ptb_block, ptb_grid, cnt, out, seed, dims);
  });
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) atomicMax(&g_workers_seen, blockIdx.x + 1);
}
static inline void mark__ptb_launch(const ::ptb::LaunchConfig& ptb_config, unsigned* cnt, unsigned* out, unsigned seed, uint3* dims) {
  ::ptb::launch(ptb_config, mark, mark__ptb, cnt, out, seed, dims);
}
// The same twin with the generated-code hint TaskSync::none (the body has no __shared__, no barrier, no
// warp intrinsic): no barrier between consecutive tasks of a run.
__global__ void mark__ptb_ns(unsigned* cnt, unsigned* out, unsigned seed, uint3* dims, const ::ptb::Launch ptb_launch) {
  ::ptb::run_tasks<::ptb::TaskSync::none>(ptb_launch, [&](const uint3 ptb_block, const dim3 ptb_grid) {
    mark__ptb_task(ptb_block, ptb_grid, cnt, out, seed, dims);
  });
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) atomicMax(&g_workers_seen, blockIdx.x + 1);
}

// ---------------------------------------------------------------- bsum: shared memory, barriers, early return,
// a parameter modified in the body
__global__ void bsum(int n, const float* x, float* out, int skip) {
  __shared__ float s[256];
  if ((int)(blockIdx.x % 7) == skip) {
    if (threadIdx.x == 0) out[blockIdx.x] = -1.f;
    return;
  }
  const int i = blockIdx.x * 256 + threadIdx.x;
  s[threadIdx.x] = i < n ? x[i] : 0.f;
  __syncthreads();
  for (int w = 128; w > 0; w >>= 1) {
    if ((int)threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  skip += 1000 * (int)blockIdx.x;  // the next block must still see the original value
  if (threadIdx.x == 0) out[blockIdx.x] = s[0] + (float)(skip - 1000 * (int)blockIdx.x);
}
static __device__ __forceinline__ void bsum__ptb_task(const uint3 blockIdx, const dim3 gridDim, int n, const float* x,
                                                      float* out, int skip) {
  __shared__ float s[256];
  if ((int)(blockIdx.x % 7) == skip) {
    if (threadIdx.x == 0) out[blockIdx.x] = -1.f;
    return;
  }
  const int i = blockIdx.x * 256 + threadIdx.x;
  s[threadIdx.x] = i < n ? x[i] : 0.f;
  __syncthreads();
  for (int w = 128; w > 0; w >>= 1) {
    if ((int)threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  skip += 1000 * (int)blockIdx.x;
  if (threadIdx.x == 0) out[blockIdx.x] = s[0] + (float)(skip - 1000 * (int)blockIdx.x);
}
__global__ void bsum__ptb(int n, const float* x, float* out, int skip, const ::ptb::Launch ptb_launch) {
  ::ptb::run_tasks(ptb_launch, [&](const uint3 ptb_block, const dim3 ptb_grid) {
    bsum__ptb_task(ptb_block, ptb_grid, n, x, out, skip);
  });
}
static inline void bsum__ptb_launch(const ::ptb::LaunchConfig& ptb_config, int n, const float* x, float* out, int skip) {
  ::ptb::launch(ptb_config, bsum, bsum__ptb, n, x, out, skip);
}

// ---------------------------------------------------------------- rev: dynamic shared memory
__global__ void rev(int n, const float* x, float* y) {
  extern __shared__ float dyn[];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  dyn[threadIdx.x] = i < n ? x[i] : 0.f;
  __syncthreads();
  const int j = blockIdx.x * blockDim.x + (blockDim.x - 1 - threadIdx.x);
  if (j < n) y[j] = dyn[threadIdx.x] * 2.f;
}
static __device__ __forceinline__ void rev__ptb_task(const uint3 blockIdx, const dim3 gridDim, int n, const float* x, float* y) {
  extern __shared__ float dyn[];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  dyn[threadIdx.x] = i < n ? x[i] : 0.f;
  __syncthreads();
  const int j = blockIdx.x * blockDim.x + (blockDim.x - 1 - threadIdx.x);
  if (j < n) y[j] = dyn[threadIdx.x] * 2.f;
}
__global__ void rev__ptb(int n, const float* x, float* y, const ::ptb::Launch ptb_launch) {
  ::ptb::run_tasks(ptb_launch, [&](const uint3 ptb_block, const dim3 ptb_grid) { rev__ptb_task(ptb_block, ptb_grid, n, x, y); });
}
static inline void rev__ptb_launch(const ::ptb::LaunchConfig& ptb_config, int n, const float* x, float* y) {
  ::ptb::launch(ptb_config, rev, rev__ptb, n, x, y);
}

// ---------------------------------------------------------------- huge: more than 2^32 blocks
__global__ void huge(unsigned long long* acc) {
  if (threadIdx.x == 0) {
    atomicAdd(&acc[0], 1ull);
    atomicAdd(&acc[1], (unsigned long long)blockIdx.x);
    atomicAdd(&acc[2], (unsigned long long)blockIdx.y * 3ull + gridDim.x * 5ull);
  }
}
__global__ void huge__ptb(unsigned long long* acc, const ::ptb::Launch ptb_launch) {
  // Test instrumentation: per-worker sums in shared memory (one atomic per task on three words would
  // take seconds), checked through the same identities.
  __shared__ unsigned long long s[3];
  if (threadIdx.x == 0) s[0] = s[1] = s[2] = 0;
  ::ptb::run_tasks(ptb_launch, [&](const uint3 blockIdx, const dim3 gridDim) {
    if (threadIdx.x == 0) {
      s[0] += 1;
      s[1] += blockIdx.x;
      s[2] += (unsigned long long)blockIdx.y * 3ull + gridDim.x * 5ull;
    }
  });
  if (threadIdx.x == 0) {
    atomicAdd(&acc[0], s[0]);
    atomicAdd(&acc[1], s[1]);
    atomicAdd(&acc[2], s[2]);
  }
}

template <class T>
static T* dalloc(size_t n) {
  T* p = nullptr;
  CK(cudaMalloc(&p, n * sizeof(T)));
  return p;
}

static void test_saxpy() {
  for (int rep = 0; rep < 12; ++rep) {
    const int n = rep == 0 ? 1 : rep == 1 ? 255 : (int)rnd(1, 3 << 20);
    auto hx = random_floats(n), hy = random_floats(n);
    const float a = (float)rnd(1, 1000) / 37.f;
    float *x = dalloc<float>(n), *y = dalloc<float>(n);
    CK(cudaMemcpy(x, hx.data(), n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(y, hy.data(), n * 4, cudaMemcpyHostToDevice));
    saxpy__ptb_launch(::ptb::LaunchConfig((n + 255) / 256, 256), n, a, (const float*)x, y);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<float> out(n);
    CK(cudaMemcpy(out.data(), y, n * 4, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; ++i)
      if (out[i] != a * hx[i] + hy[i]) ++bad;  // same fma contraction? compare loosely below
    if (bad) {
      bad = 0;
      for (int i = 0; i < n; ++i)
        if (std::fabs(out[i] - (a * hx[i] + hy[i])) > 1e-5f * (1 + std::fabs(a))) ++bad;
    }
    EXPECT(bad == 0, "saxpy n=%d: %d wrong", n, bad);
    CK(cudaFree(x));
    CK(cudaFree(y));
  }
}

// rep 0..13: default twin; 14..27: the TaskSync::none twin; 28..31: the TaskSync::none twin under a policy
// (a third of the SMs, cap 2), 32..33: the default twin under the same policy.
static void test_mark_once() {
  unsigned* dws = nullptr;
  CK(cudaGetSymbolAddress((void**)&dws, g_workers_seen));
  int nsm = 0;
  CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
  const ptb::Policy third = ptb::Policy::create(ptb::SmSet::first((unsigned)nsm / 3), 2);
  for (int rep = 0; rep < 34; ++rep) {
    const int r = rep % 14;
    const bool ns = rep >= 14 && rep < 32;
    dim3 g(rnd(1, 60), rnd(1, 20), rnd(1, 12)), b(rnd(1, 16), rnd(1, 8), rnd(1, 4));
    if (r == 0) g = dim3(1, 1, 1);
    if (r == 1 || rep >= 28) g = dim3(70000, 1, 1), b = dim3(32, 1, 1);
    if (r == 2 && rep < 28) g = dim3(3, 65535, 1), b = dim3(64, 1, 1);
    const size_t nb = (size_t)g.x * g.y * g.z, nt = (size_t)b.x * b.y * b.z;
    unsigned* cnt = dalloc<unsigned>(nb);
    unsigned* out = dalloc<unsigned>(nb * nt);
    uint3* dims = dalloc<uint3>(1);
    CK(cudaMemset(cnt, 0, nb * 4));
    CK(cudaMemset(out, 0xA5, nb * nt * 4));  // poison
    CK(cudaMemset(dws, 0, 4));
    const unsigned seed = rnd(0, 0xffffffffu);
    ::ptb::LaunchConfig cfg(g, b);
    if (rep >= 28) cfg.policy = third;
    if (ns) ::ptb::launch(cfg, mark, mark__ptb_ns, cnt, out, seed, dims);
    else mark__ptb_launch(cfg, cnt, out, seed, dims);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<unsigned> hc(nb), ho(nb * nt);
    uint3 hd;
    unsigned hw = 0;
    CK(cudaMemcpy(hc.data(), cnt, nb * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(ho.data(), out, nb * nt * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&hd, dims, sizeof(hd), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&hw, dws, 4, cudaMemcpyDeviceToHost));
    size_t badc = 0, bado = 0;
    for (size_t i = 0; i < nb; ++i) {
      if (hc[i] != 1) ++badc;
      for (size_t t = 0; t < nt; ++t)
        if (ho[i * nt + t] != ((unsigned)(i * 2654435761ull) ^ (unsigned)(t * 40503u) ^ seed)) ++bado;
    }
    EXPECT(badc == 0 && bado == 0, "mark%s grid (%u,%u,%u) block (%u,%u,%u): %zu blocks not run once, %zu outputs wrong",
           ns ? " [none]" : "", g.x, g.y, g.z, b.x, b.y, b.z, badc, bado);
    EXPECT(hd.x == g.x && hd.y == g.y && hd.z == g.z, "gridDim seen (%u,%u,%u)", hd.x, hd.y, hd.z);
    EXPECT(hw >= 1 && hw <= nb, "workers %u for %zu tasks", hw, nb);
    CK(cudaFree(cnt));
    CK(cudaFree(out));
    CK(cudaFree(dims));
  }
}

static void test_bsum_and_dynamic() {
  for (int rep = 0; rep < 6; ++rep) {
    const int n = (int)rnd(1000, 2 << 20), nb = (n + 255) / 256, skip = (int)rnd(0, 6);
    auto hx = random_floats(n);
    float *x = dalloc<float>(n), *o = dalloc<float>(nb), *y = dalloc<float>(n);
    CK(cudaMemcpy(x, hx.data(), n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(o, 0xff, nb * 4));
    CK(cudaMemset(y, 0xff, n * 4));
    bsum__ptb_launch(::ptb::LaunchConfig(nb, 256), n, x, o, skip);
    CK(cudaGetLastError());
    const unsigned bs = 32u << rnd(0, 5);  // 32..1024
    const size_t sh = rep % 2 ? 64 * 1024 : bs * 4;  // above 48 KB: attribute set on the original only
    if (sh > 48 * 1024) CK(cudaFuncSetAttribute(rev, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sh));
    rev__ptb_launch(::ptb::LaunchConfig((n + bs - 1) / bs, bs, sh), n, x, y);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<float> ho(nb), hy(n);
    CK(cudaMemcpy(ho.data(), o, nb * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hy.data(), y, n * 4, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int b = 0; b < nb; ++b) {
      double ref = 0;
      for (int i = b * 256; i < std::min(n, b * 256 + 256); ++i) ref += hx[i];
      ref += skip;  // the body adds its (unmodified) parameter
      if (b % 7 == skip) ref = -1.0;
      if (std::fabs(ho[b] - ref) > 1e-4 * (1 + std::fabs(ref))) ++bad;
    }
    EXPECT(bad == 0, "bsum n=%d skip=%d: %d wrong", n, skip, bad);
    bad = 0;
    for (int i = 0; i < n; ++i) {
      const int blk = i / bs, t = i % bs, src = blk * bs + (bs - 1 - t);
      const float ref = src < n ? hx[src] * 2.f : 0.f;
      // positions whose mirrored source is past n are written only if that mirrored thread had j < n
      if (hy[i] != ref) ++bad;
    }
    EXPECT(bad == 0, "rev n=%d block=%u shmem=%zu: %d wrong", n, bs, sh, bad);
    CK(cudaFree(x));
    CK(cudaFree(o));
    CK(cudaFree(y));
  }
}

// The same launch through the plain form and through the runtime must leave the same errors behind.
static void test_errors() {
  float* y = dalloc<float>(1024);
  struct Case { const char* name; dim3 g, b; size_t sh; };
  const Case cases[] = {{"block 2048", dim3(4), dim3(2048), 0}, {"block 0", dim3(4), dim3(0), 0},
                        {"grid 0", dim3(0), dim3(256), 0},       {"grid y 0", dim3(4, 0), dim3(64), 0},
                        {"grid z 70000", dim3(1, 1, 70000), dim3(32), 0},
                        {"shmem 1 MB", dim3(4), dim3(256), 1 << 20}, {"block z 128", dim3(2), dim3(1, 1, 128), 0}};
  for (const Case& c : cases) {
    CK(cudaDeviceSynchronize());
    (void)cudaGetLastError();
    saxpy<float><<<c.g, c.b, c.sh>>>(16, 1.f, y, y);
    const cudaError_t plain = cudaGetLastError(), plain2 = cudaGetLastError();
    saxpy__ptb_launch(::ptb::LaunchConfig(c.g, c.b, c.sh), 16, 1.f, (const float*)y, y);
    const cudaError_t p1 = cudaPeekAtLastError(), p = cudaGetLastError(), p2 = cudaGetLastError();
    EXPECT(plain != cudaSuccess && p == plain && p1 == plain && p2 == plain2,
           "%s: plain %s/%s, ptb %s/%s", c.name, cudaGetErrorName(plain), cudaGetErrorName(plain2), cudaGetErrorName(p),
           cudaGetErrorName(p2));
    ::ptb::set_launch_mode(::ptb::LaunchMode::original);
    saxpy__ptb_launch(::ptb::LaunchConfig(c.g, c.b, c.sh), 16, 1.f, (const float*)y, y);
    const cudaError_t o = cudaGetLastError();
    ::ptb::set_launch_mode(::ptb::LaunchMode::ptb);
    EXPECT(o == plain, "%s (original mode): %s vs %s", c.name, cudaGetErrorName(o), cudaGetErrorName(plain));
    // launch_kernel_args returns the error as cudaLaunchKernel does
    int n = 16;
    float a = 1.f;
    const float* cx = y;
    void* argv[] = {&n, &a, &cx, &y};
    const cudaError_t r1 = cudaLaunchKernel((const void*)saxpy<float>, c.g, c.b, argv, c.sh, 0);
    const cudaError_t l1 = cudaGetLastError();
    const cudaError_t r2 = ::ptb::launch_kernel_args(saxpy<float>, saxpy__ptb<float>, c.g, c.b, argv, c.sh, 0);
    const cudaError_t l2 = cudaGetLastError();
    EXPECT(r1 == r2 && l1 == l2, "%s (cudaLaunchKernel form): %s/%s vs %s/%s", c.name, cudaGetErrorName(r1),
           cudaGetErrorName(l1), cudaGetErrorName(r2), cudaGetErrorName(l2));
  }
  // An error left pending by an earlier launch stays visible after a good PTB launch, as after a plain one.
  saxpy<float><<<1, 4096>>>(16, 1.f, y, y);
  saxpy<float><<<1, 256>>>(16, 1.f, y, y);
  const cudaError_t plain = cudaGetLastError();
  saxpy<float><<<1, 4096>>>(16, 1.f, y, y);
  saxpy__ptb_launch(::ptb::LaunchConfig(1, 256), 16, 1.f, (const float*)y, y);
  const cudaError_t p = cudaGetLastError();
  EXPECT(p == plain, "pending error: plain %s, ptb %s", cudaGetErrorName(plain), cudaGetErrorName(p));
  CK(cudaDeviceSynchronize());
  CK(cudaFree(y));
}

static void test_modes_and_argv() {
  const int n = (int)rnd(100000, 1 << 20);
  auto hx = random_floats(n), hy = random_floats(n);
  float *x = dalloc<float>(n), *y = dalloc<float>(n);
  CK(cudaMemcpy(x, hx.data(), n * 4, cudaMemcpyHostToDevice));
  for (int form = 0; form < 3; ++form) {
    CK(cudaMemcpy(y, hy.data(), n * 4, cudaMemcpyHostToDevice));
    float a = 1.5f + form;
    if (form == 1) ::ptb::set_launch_mode(::ptb::LaunchMode::original);
    EXPECT((::ptb::launch_mode() == ::ptb::LaunchMode::original) == (form == 1), "launch_mode()");
    if (form < 2) {
      saxpy__ptb_launch(::ptb::LaunchConfig((n + 255) / 256, 256), n, a, (const float*)x, y);
    } else {
      int nn = n;
      const float* cx = x;
      void* argv[] = {&nn, &a, &cx, &y};
      CK(::ptb::launch_kernel_args(saxpy<float>, saxpy__ptb<float>, dim3((n + 255) / 256), dim3(256), argv, 0, 0));
    }
    ::ptb::set_launch_mode(::ptb::LaunchMode::ptb);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<float> out(n);
    CK(cudaMemcpy(out.data(), y, n * 4, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; ++i)
      if (std::fabs(out[i] - (a * hx[i] + hy[i])) > 1e-5f * (1 + a)) ++bad;
    EXPECT(bad == 0, "form %d: %d wrong", form, bad);
  }
  CK(cudaFree(x));
  CK(cudaFree(y));
}

// Many launches in flight in 4 streams (more than the pool's first page of control blocks), with recycling.
static void test_streams() {
  const int S = 4, per = 700, maxg = 3000;
  cudaStream_t st[S];
  unsigned* cnt[S];
  std::vector<std::vector<unsigned>> ref(S, std::vector<unsigned>(maxg, 0));
  unsigned* out = dalloc<unsigned>((size_t)maxg * 64);
  uint3* dims = dalloc<uint3>(1);
  for (int s = 0; s < S; ++s) {
    CK(cudaStreamCreateWithFlags(&st[s], cudaStreamNonBlocking));
    cnt[s] = dalloc<unsigned>(maxg);
    CK(cudaMemset(cnt[s], 0, maxg * 4));
  }
  CK(cudaDeviceSynchronize());
  for (int k = 0; k < per; ++k)
    for (int s = 0; s < S; ++s) {
      const unsigned g = rnd(1, maxg);
      for (unsigned i = 0; i < g; ++i) ref[s][i]++;
      mark__ptb_launch(::ptb::LaunchConfig(g, 32, 0, st[s]), cnt[s], out, 0, dims);
    }
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  for (int s = 0; s < S; ++s) {
    std::vector<unsigned> h(maxg);
    CK(cudaMemcpy(h.data(), cnt[s], maxg * 4, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < maxg; ++i)
      if (h[i] != ref[s][i]) ++bad;
    EXPECT(bad == 0, "stream %d: %d counters wrong", s, bad);
    CK(cudaStreamDestroy(st[s]));
    CK(cudaFree(cnt[s]));
  }
  CK(cudaFree(out));
  CK(cudaFree(dims));
}

// Graph capture: captured launches keep their control blocks; replays (many, in two streams) each run every task.
static void test_graph() {
  cudaStream_t s, s2;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  const int n = (int)rnd(50000, 300000), L = 600;  // more captured launches than the pool's first blocks
  const unsigned g = (n + 255) / 256;
  auto hx = random_floats(n);
  float *x = dalloc<float>(n), *y = dalloc<float>(n);
  unsigned* cnt = dalloc<unsigned>(4096);
  unsigned* out = dalloc<unsigned>(4096 * 32);
  uint3* dims = dalloc<uint3>(1);
  CK(cudaMemcpy(x, hx.data(), n * 4, cudaMemcpyHostToDevice));
  CK(cudaMemset(y, 0, n * 4));
  CK(cudaMemset(cnt, 0, 4096 * 4));
  CK(cudaDeviceSynchronize());
  cudaGraph_t graph;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int k = 0; k < L; ++k) {
    if (k % 100 == 0) saxpy__ptb_launch(::ptb::LaunchConfig(g, 256, 0, s), n, 1.0f, (const float*)x, y);
    mark__ptb_launch(::ptb::LaunchConfig(4096, 32, 0, s), cnt, out, 0, dims);
  }
  CK(cudaGetLastError());
  CK(cudaStreamEndCapture(s, &graph));
  size_t nodes = 0;
  CK(cudaGraphGetNodes(graph, nullptr, &nodes));
  EXPECT(nodes == (size_t)L + L / 100, "graph has %zu nodes", nodes);
  cudaGraphExec_t ex;
  CK(cudaGraphInstantiate(&ex, graph, 0));
  const int R = 7;
  for (int r = 0; r < R; ++r) CK(cudaGraphLaunch(ex, r % 2 ? s2 : s));
  // meanwhile, ordinary launches recycle control blocks
  for (int k = 0; k < 300; ++k) mark__ptb_launch(::ptb::LaunchConfig(4096, 32), cnt, out, 0, dims);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<unsigned> hc(4096);
  std::vector<float> hy(n);
  CK(cudaMemcpy(hc.data(), cnt, 4096 * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hy.data(), y, n * 4, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < 4096; ++i)
    if (hc[i] != (unsigned)(R * L + 300)) ++bad;
  EXPECT(bad == 0, "graph: %d counters wrong (cnt[0]=%u, want %d)", bad, hc[0], R * L + 300);
  bad = 0;
  for (int i = 0; i < n; ++i)
    if (std::fabs(hy[i] - (float)(R * (L / 100)) * hx[i]) > 1e-4f) ++bad;
  EXPECT(bad == 0, "graph saxpy: %d wrong", bad);
  CK(cudaGraphExecDestroy(ex));
  CK(cudaGraphDestroy(graph));
  CK(cudaStreamDestroy(s));
  CK(cudaStreamDestroy(s2));
  CK(cudaFree(x));
  CK(cudaFree(y));
  CK(cudaFree(cnt));
  CK(cudaFree(out));
  CK(cudaFree(dims));
}

static void test_huge() {
  const unsigned gx = 65540, gy = 65535;  // 4295163900 blocks > 2^32
  unsigned long long* acc = dalloc<unsigned long long>(3);
  CK(cudaMemset(acc, 0, 24));
  const auto t0 = std::chrono::steady_clock::now();
  ::ptb::launch(::ptb::LaunchConfig(dim3(gx, gy), 32), huge, huge__ptb, acc);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  unsigned long long h[3];
  CK(cudaMemcpy(h, acc, 24, cudaMemcpyDeviceToHost));
  const unsigned long long N = (unsigned long long)gx * gy;
  const unsigned long long sx = (unsigned long long)gy * ((unsigned long long)gx * (gx - 1) / 2);
  const unsigned long long sy = 3ull * gx * ((unsigned long long)gy * (gy - 1) / 2) + 5ull * gx * N;
  EXPECT(h[0] == N && h[1] == sx && h[2] == sy, "huge grid: count %llu (want %llu), sums %llu/%llu, %llu/%llu", h[0], N,
         h[1], sx, h[2], sy);
  std::printf("  huge grid %u x %u = %llu tasks in %.2f s\n", gx, gy, N, s);
  CK(cudaFree(acc));
}

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IONBF, 0);
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  std::printf("device %s, %d SMs, PTB_RUNTIME_VERSION %d\n", p.name, p.multiProcessorCount, PTB_RUNTIME_VERSION);
  // This program checks the twins, most of them launched with no policy: force them (the default,
  // automatic mode would run the originals there). test_dispatch checks the automatic mode.
  ::ptb::set_launch_mode(::ptb::LaunchMode::ptb);
  test_saxpy();
  std::printf("  saxpy done\n");
  test_mark_once();
  std::printf("  mark done\n");
  test_bsum_and_dynamic();
  std::printf("  bsum/dynamic done\n");
  test_errors();
  std::printf("  errors done\n");
  test_modes_and_argv();
  std::printf("  modes done\n");
  test_streams();
  std::printf("  streams done\n");
  test_graph();
  std::printf("  graph done\n");
  if (!(argc > 1 && std::strcmp(argv[1], "--quick") == 0)) test_huge();
  return finish("test_basic");
}

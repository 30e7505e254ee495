// bench/duration_model/duration_model.cu: does a kernel's time follow a line in its block count on this
// GPU, and how well do the online duration models of ptb/qos/duration_model.h predict it (issue 17, item 1;
// docs/design/qos-duration-model.md).
//
// Six kernels in the shapes of the co-location benchmark's BE programs and of bench/programs (copied
// shapes, not the files): fma (compute-bound, 4 fmaf chains per thread), triad (memory-bound, 4096 floats
// a block), wmma (Tensor-Core GEMM, a 32x32 tile of 4 warps, K = 1024), stencil (a 5-point 2-D flux, one
// point per thread, 32x8 blocks), reduce (shared-memory tree sum of 512 values a block), fma_ptb (the fma
// body in persistent workers taking tasks from a counter: the shape of a PTB twin, tasks = the original
// blocks). Each runs at many grid sizes (1 block to 64 x SMs, log-uniform and uniform draws, every
// multiple of the SM count and each side of every wave of places), twice each, all kernels' launches in one
// random order on one stream.
//
// Timing: %globaltimer, the first block's start (atomicMin) and the last block's end (atomicMax) of each
// launch, written by thread 0 of every block. Not cudaEvents: an event pair also counts the launch's
// latency and queueing on the stream (a few us, which in co-location includes waiting behind other work)
// and the model is of the kernel's own time on the SMs, which is what the runtime's trace records too.
// The event pair is recorded as well, and the median difference printed.
//
// The models are fed in launch order, each prediction made before its launch is observed; the error of
// predictions after a warm-up of --warmup observations is reported. Over all of a kernel's launches the
// program also fits each form (line, waves, ...) and prints R^2 and residuals: whether a line holds here.
// Last, a fused kernel (WMMA warps beside FMA warps in one block, each part taking its own tasks) for the
// two-segment model in the load ratio: its parts alone first (their models), then fused at ratios 0.05-3.
//
// Output: the report on stdout; --tsv FILE gets one line per launch. Last line:
//   duration-model: kernels N median-error X% worst-median Y%
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "ptb/qos/duration_model.h"

#define CK(x)                                                                                       \
  do {                                                                                              \
    cudaError_t e_ = (x);                                                                           \
    if (e_ != cudaSuccess) {                                                                        \
      std::fprintf(stderr, "duration_model: FATAL %s:%d: %s -> %s\n", __FILE__, __LINE__, #x,       \
                   cudaGetErrorString(e_));                                                         \
      std::exit(3);                                                                                 \
    }                                                                                               \
  } while (0)

using ptb::qos::DurationFit;
using ptb::qos::DurationForm;
using ptb::qos::DurationModel;

// ---- device: the stamps ------------------------------------------------------------------------------
struct Stamp {
  unsigned long long start, end;  // %globaltimer: the first block's start, the last block's end
};
__device__ __forceinline__ unsigned long long gtimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ bool thread0() { return threadIdx.x == 0 && threadIdx.y == 0; }
__device__ __forceinline__ void stamp_start(Stamp* s) {
  if (thread0()) atomicMin(&s->start, gtimer());
}
__device__ __forceinline__ void stamp_end(Stamp* s) {
  __syncthreads();
  if (thread0()) atomicMax(&s->end, gtimer());
}

// The smallest step of %globaltimer that one thread sees (its resolution).
__global__ void k_timer_step(unsigned long long* out) {
  unsigned long long best = ~0ull, last = gtimer();
  for (int i = 0; i < 200000; ++i) {
    const unsigned long long t = gtimer();
    if (t != last) best = min(best, t - last), last = t;
  }
  *out = best;
}

// ---- device: the kernels -----------------------------------------------------------------------------
__device__ __forceinline__ float chain(unsigned tid, int iters) {
  float x0 = float(tid % 1024u) * 1e-3f, x1 = x0 + 0.25f, x2 = x0 + 0.5f, x3 = x0 + 0.75f;
  for (int k = 0; k < iters; ++k) {
    x0 = fmaf(x0, 0.9999f, 1e-4f);
    x1 = fmaf(x1, 0.99993f, 3e-5f);
    x2 = fmaf(x2, 0.99995f, 2e-5f);
    x3 = fmaf(x3, 0.99997f, 1e-5f);
  }
  return (x0 + x1) + (x2 + x3);
}

// fma: the colocate compute program's block (256 threads, 1024 steps of 4 chains).
__global__ void k_fma(float* out, int iters, Stamp* st) {
  stamp_start(st);
  const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
  out[tid] = chain(tid, iters);
  stamp_end(st);
}

// fma_ptb: the same tasks in persistent workers (a twin's shape): each worker takes the next task.
__global__ void k_fma_ptb(float* out, int iters, unsigned tasks, unsigned* next, Stamp* st) {
  stamp_start(st);
  __shared__ unsigned shared_task;
  for (;;) {
    if (threadIdx.x == 0) shared_task = atomicAdd(next, 1u);
    __syncthreads();
    const unsigned task = shared_task;
    __syncthreads();
    if (task >= tasks) break;
    const unsigned tid = task * blockDim.x + threadIdx.x;
    out[tid] = chain(tid, iters);
  }
  stamp_end(st);
}

// triad: the colocate memory program's block (4096 floats as float4, 256 threads), from `base4` on.
__global__ void k_triad(float4* a, const float4* b, const float4* c, size_t base4, unsigned chunk4, Stamp* st) {
  stamp_start(st);
  const size_t base = base4 + size_t(blockIdx.x) * chunk4;
  for (unsigned i = threadIdx.x; i < chunk4; i += blockDim.x) {
    const float4 x = b[base + i], y = c[base + i];
    a[base + i] = make_float4(x.x + 3 * y.x, x.y + 3 * y.y, x.z + 3 * y.z, x.w + 3 * y.w);
  }
  stamp_end(st);
}

// wmma: the colocate WMMA program's block (4 warps, a 32x32 tile of C = A B, K = 1024, no shared memory).
// One warp's 16x16 tile of C = A B (half in, float out, row-major, K a multiple of 16).
__device__ __forceinline__ void wmma_tile(const half* A, const half* B, float* C, int row, int col, int K, int N) {
  using namespace nvcuda;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, 0.f);
  for (int k = 0; k < K; k += 16) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> b;
    wmma::load_matrix_sync(a, A + size_t(row) * K + k, K);
    wmma::load_matrix_sync(b, B + size_t(k) * N + col, N);
    wmma::mma_sync(acc, a, b, acc);
  }
  wmma::store_matrix_sync(C + size_t(row) * N + col, acc, N, wmma::mem_row_major);
}

__global__ void k_wmma(const half* A, const half* B, float* C, int N, int K, Stamp* st) {
  stamp_start(st);
  const int warp = threadIdx.x / 32, tiles_n = N / 32;
  const int row = (blockIdx.x / tiles_n) * 32 + (warp / 2) * 16, col = (blockIdx.x % tiles_n) * 32 + (warp % 2) * 16;
  wmma_tile(A, B, C, row, col, K, N);
  stamp_end(st);
}

// stencil: bench/programs' 2-D flux (periodic, one point per thread), block b = tile b of a w x h domain.
__global__ void k_stencil(const unsigned* a, unsigned* f, int w, int h, Stamp* st) {
  stamp_start(st);
  const int tiles_x = w / 32;
  const int x = (blockIdx.x % tiles_x) * 32 + threadIdx.x, y = (blockIdx.x / tiles_x) * 8 + threadIdx.y;
  const int xm = x == 0 ? w - 1 : x - 1, xp = x == w - 1 ? 0 : x + 1;
  const int ym = y == 0 ? h - 1 : y - 1, yp = y == h - 1 ? 0 : y + 1;
  const unsigned c = a[size_t(y) * w + x];
  f[size_t(y) * w + x] = a[size_t(y) * w + xm] + a[size_t(y) * w + xp] + a[size_t(ym) * w + x] + a[size_t(yp) * w + x] - 4u * c;
  stamp_end(st);
}

// reduce: bench/programs' shared-memory block sum (256 threads, two values each, a tree).
__global__ void k_reduce(const unsigned* in, unsigned* out, Stamp* st) {
  stamp_start(st);
  constexpr unsigned T = 256;
  __shared__ unsigned s[T];
  const size_t i = size_t(blockIdx.x) * (2 * T) + threadIdx.x;
  s[threadIdx.x] = in[i] * 3u + in[i + T] * 3u;
  __syncthreads();
  for (unsigned k = T / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
  stamp_end(st);
}

// fused: warps 0-3 take Tensor-Core tasks (a 16x16 tile of C = A B, K = 1024, one warp), warps 4-7
// CUDA-core tasks (one warp of the fma chains); each part takes its own tasks until none is left.
__global__ void __launch_bounds__(256) k_fused(const half* A, const half* B, float* C, float* out, int N, int K,
                                               int iters, unsigned tc_tasks, unsigned cd_tasks, unsigned* next,
                                               Stamp* st) {
  stamp_start(st);
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const bool tc = warp < 4;
  for (;;) {
    unsigned t = 0;
    if (lane == 0) t = atomicAdd(&next[tc ? 0 : 1], 1u);
    t = __shfl_sync(~0u, t, 0);
    if (t >= (tc ? tc_tasks : cd_tasks)) break;
    if (tc) {
      const int tiles_n = N / 16, row = int(t / tiles_n) * 16, col = int(t % tiles_n) * 16;
      wmma_tile(A, B, C, row, col, K, N);
    } else {
      out[t * 32 + lane] = chain(t * 32 + lane, iters);
    }
  }
  stamp_end(st);
}

__global__ void k_fill_half(half* p, size_t n, unsigned salt) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = __float2half(float(int(((i * 2654435761u + salt) >> 13) % 5) - 2));
}
__global__ void k_fill_u32(unsigned* p, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = unsigned(i * 2654435761u);
}

// ---- host: statistics --------------------------------------------------------------------------------
double pct(std::vector<double> v, double q) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(q * (v.size() - 1) + 0.5))];
}

// ---- host: launching and timing ----------------------------------------------------------------------
struct Timer {  // the stamps and events of every launch, read back at the end
  Stamp* dev = nullptr;
  unsigned* counters = nullptr;  // two per launch (fma_ptb and the fused kernel take tasks from them)
  std::vector<cudaEvent_t> ev;
  size_t cap = 0, used = 0;
  void init(size_t n) {
    cap = n;
    CK(cudaMalloc(&dev, n * sizeof(Stamp)));
    CK(cudaMalloc(&counters, 2 * n * sizeof(unsigned)));
    std::vector<Stamp> init(n, Stamp{~0ull, 0});
    CK(cudaMemcpy(dev, init.data(), n * sizeof(Stamp), cudaMemcpyHostToDevice));
    CK(cudaMemset(counters, 0, 2 * n * sizeof(unsigned)));
    ev.resize(2 * n);
    for (auto& e : ev) CK(cudaEventCreate(&e));
  }
  // Launch `fn(stamp, counters)` between two events; returns the launch's index.
  size_t launch(cudaStream_t s, const std::function<void(Stamp*, unsigned*)>& fn) {
    if (used == cap) {
      std::fprintf(stderr, "duration_model: FATAL more launches than planned (%zu)\n", cap);
      std::exit(3);
    }
    const size_t i = used++;
    CK(cudaEventRecord(ev[2 * i], s));
    fn(dev + i, counters + 2 * i);
    CK(cudaGetLastError());
    CK(cudaEventRecord(ev[2 * i + 1], s));
    return i;
  }
  // (timer ns, event ns) of launches [from, used)
  std::vector<std::pair<double, double>> read(size_t from) {
    CK(cudaDeviceSynchronize());
    std::vector<Stamp> h(used - from);
    CK(cudaMemcpy(h.data(), dev + from, h.size() * sizeof(Stamp), cudaMemcpyDeviceToHost));
    std::vector<std::pair<double, double>> r;
    for (size_t i = from; i < used; ++i) {
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
      const Stamp& s = h[i - from];
      r.push_back({s.end > s.start ? double(s.end - s.start) : 0.0, ms * 1e6});
    }
    return r;
  }
};

struct Kernel {
  Kernel(const char* n, const char* w) : name(n), what(w) {}
  std::string name, what;
  unsigned threads = 256, per_sm = 1, slots = 1, max_tasks = 0, be_tasks = 0;  // be_tasks: colocate's grid
  std::function<void(unsigned tasks, cudaStream_t, Stamp*, unsigned*)> run;
};

struct Launch {
  unsigned kernel, tasks;
  size_t index;
};

int main(int argc, char** argv) {
  unsigned seed = std::random_device{}(), max_x = 64, repeats = 2, warmup = 8;
  const char* tsv_path = nullptr;
  for (int i = 1; i < argc; ++i) {
    auto val = [&](const char* opt) { return std::strcmp(argv[i], opt) == 0 && i + 1 < argc ? argv[++i] : nullptr; };
    if (const char* v = val("--seed")) seed = unsigned(std::strtoul(v, nullptr, 10));
    else if (const char* v2 = val("--max-x")) max_x = unsigned(std::atoi(v2));
    else if (const char* v3 = val("--repeats")) repeats = unsigned(std::atoi(v3));
    else if (const char* v4 = val("--warmup")) warmup = unsigned(std::atoi(v4));
    else if (const char* v5 = val("--tsv")) tsv_path = v5;
    else {
      std::fprintf(stderr, "usage: %s [--seed S] [--max-x X (grids up to X x SMs)] [--repeats R] [--warmup N] [--tsv FILE]\n", argv[0]);
      return 2;
    }
  }
  std::mt19937 rng(seed);
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  const unsigned sms = unsigned(prop.multiProcessorCount);
  std::printf("device: %s, %u SMs; seed %u; grids 1..%u x SMs, each size %u times; warm-up %u observations\n",
              prop.name, sms, seed, max_x, repeats, warmup);
  FILE* tsv = tsv_path ? std::fopen(tsv_path, "w") : nullptr;
  if (tsv) std::fprintf(tsv, "kernel\tseq\ttasks\ttimer_ns\tevent_ns\tpredicted_ns\tform\n");

  unsigned long long* step_dev = nullptr;
  unsigned long long step = 0;
  CK(cudaMalloc(&step_dev, sizeof step));
  k_timer_step<<<1, 1>>>(step_dev);
  CK(cudaMemcpy(&step, step_dev, sizeof step, cudaMemcpyDeviceToHost));
  std::printf("%%globaltimer resolution seen by one thread: %llu ns\n\n", step);

  // ---- buffers
  const unsigned max_blocks = std::max(max_x * sms, 65536u);
  const int kIters = 1024, kN = 4096, kK = 1024, kW = 2048, kH = 2048;
  float* fma_out = nullptr;
  CK(cudaMalloc(&fma_out, size_t(max_blocks) * 256 * sizeof(float)));
  const size_t triad_n4 = (size_t(1) << 27) / 4;  // float4 per array: 512 MiB
  float4 *ta, *tb, *tc;
  CK(cudaMalloc(&ta, triad_n4 * sizeof(float4)));
  CK(cudaMalloc(&tb, triad_n4 * sizeof(float4)));
  CK(cudaMalloc(&tc, triad_n4 * sizeof(float4)));
  CK(cudaMemset(tb, 0, triad_n4 * sizeof(float4)));
  CK(cudaMemset(tc, 0, triad_n4 * sizeof(float4)));
  size_t triad_pos = 0;  // where the next triad launch starts: launches do not reuse each other's lines in L2
  half *A, *B;
  float* C;
  CK(cudaMalloc(&A, size_t(kN) * kK * sizeof(half)));
  CK(cudaMalloc(&B, size_t(kK) * kN * sizeof(half)));
  CK(cudaMalloc(&C, size_t(kN) * kN * sizeof(float)));
  k_fill_half<<<1024, 256>>>(A, size_t(kN) * kK, 1);
  k_fill_half<<<1024, 256>>>(B, size_t(kK) * kN, 7);
  unsigned *sa, *sf, *rin, *rout;
  CK(cudaMalloc(&sa, size_t(kW) * kH * sizeof(unsigned)));
  CK(cudaMalloc(&sf, size_t(kW) * kH * sizeof(unsigned)));
  k_fill_u32<<<1024, 256>>>(sa, size_t(kW) * kH);
  const size_t rn = size_t(max_blocks) * 512;
  CK(cudaMalloc(&rin, rn * sizeof(unsigned)));
  CK(cudaMalloc(&rout, max_blocks * sizeof(unsigned)));
  k_fill_u32<<<1024, 256>>>(rin, rn);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());

  // ---- the kernels
  auto occ = [&](const void* k, int threads) {
    int n = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k, threads, 0));
    return unsigned(n);
  };
  std::vector<Kernel> ks;
  const unsigned max_tasks = max_x * sms;
  {
    Kernel k("fma", "compute-bound: 256 threads, 4 fmaf chains of 1024 steps (colocate compute)");
    k.per_sm = occ((const void*)k_fma, 256), k.be_tasks = 65536;
    k.run = [&](unsigned n, cudaStream_t s, Stamp* st, unsigned*) { k_fma<<<n, 256, 0, s>>>(fma_out, kIters, st); };
    ks.push_back(k);
  }
  {
    Kernel k("triad", "memory-bound: 256 threads, 4096 floats a block, a = b + 3c (colocate memory)");
    k.per_sm = occ((const void*)k_triad, 256), k.be_tasks = 32768;
    k.run = [&](unsigned n, cudaStream_t s, Stamp* st, unsigned*) {
      const size_t need = size_t(n) * 1024;
      if (triad_pos + need > triad_n4) triad_pos = 0;
      k_triad<<<n, 256, 0, s>>>(ta, tb, tc, triad_pos, 1024, st);
      triad_pos += need;
    };
    ks.push_back(k);
  }
  {
    Kernel k("wmma", "Tensor-Core GEMM: 4 warps, a 32x32 tile, K = 1024, half in (colocate wmma)");
    k.threads = 128, k.per_sm = occ((const void*)k_wmma, 128), k.be_tasks = 16384;
    k.run = [&](unsigned n, cudaStream_t s, Stamp* st, unsigned*) { k_wmma<<<n, 128, 0, s>>>(A, B, C, kN, kK, st); };
    ks.push_back(k);
  }
  {
    Kernel k("stencil", "2-D 5-point flux, 32x8 threads, one point each (bench/programs stencil2d_chain)");
    k.per_sm = occ((const void*)k_stencil, 256);
    k.run = [&](unsigned n, cudaStream_t s, Stamp* st, unsigned*) { k_stencil<<<n, dim3(32, 8), 0, s>>>(sa, sf, kW, kH, st); };
    ks.push_back(k);
  }
  {
    Kernel k("reduce", "shared-memory tree sum, 256 threads, 512 values a block (bench/programs reduce_shared)");
    k.per_sm = occ((const void*)k_reduce, 256);
    k.run = [&](unsigned n, cudaStream_t s, Stamp* st, unsigned*) { k_reduce<<<n, 256, 0, s>>>(rin, rout, st); };
    ks.push_back(k);
  }
  {
    Kernel k("fma_ptb", "the fma tasks in persistent workers (occupancy x SMs) taking tasks from a counter");
    k.per_sm = occ((const void*)k_fma_ptb, 256), k.be_tasks = 65536;
    k.run = [&, workers = k.per_sm * sms](unsigned n, cudaStream_t s, Stamp* st, unsigned* next) {
      k_fma_ptb<<<std::min(n, workers), 256, 0, s>>>(fma_out, kIters, n, next, st);
    };
    ks.push_back(k);
  }
  for (Kernel& k : ks) k.slots = k.per_sm * sms, k.max_tasks = k.name == "stencil" ? std::min(max_tasks, unsigned(kW / 32 * kH / 8)) : max_tasks;

  // ---- the schedule: every kernel's sizes, `repeats` times each, in one random order
  std::vector<Launch> plan;
  for (unsigned ki = 0; ki < ks.size(); ++ki) {
    const Kernel& k = ks[ki];
    std::vector<unsigned> sizes;
    std::uniform_real_distribution<double> u(0, 1);
    for (int i = 0; i < 48; ++i) sizes.push_back(unsigned(std::lround(std::exp(u(rng) * std::log(double(k.max_tasks))))));
    for (int i = 0; i < 48; ++i) sizes.push_back(1 + unsigned(u(rng) * (k.max_tasks - 1)));
    for (unsigned m = sms; m <= k.max_tasks; m += sms * std::max(1u, max_x / 32)) sizes.push_back(m);
    for (unsigned w = k.slots; w <= k.max_tasks; w += k.slots) sizes.push_back(w), sizes.push_back(w + 1);
    for (unsigned& s : sizes) s = std::max(1u, std::min(s, k.max_tasks));
    for (unsigned r = 0; r < repeats; ++r)
      for (unsigned s : sizes) plan.push_back({ki, s, 0});
  }
  std::shuffle(plan.begin(), plan.end(), rng);

  Timer timer;
  timer.init(plan.size() + ks.size() * 16 + 2048);
  cudaStream_t stream;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  // warm-up: clocks up, modules loaded, caches as in steady use (not measured)
  for (Kernel& k : ks)
    for (int i = 0; i < 3; ++i) timer.launch(stream, [&](Stamp* st, unsigned* c) { k.run(k.max_tasks, stream, st, c); });
  timer.read(0);
  const size_t first = timer.used;
  for (Launch& l : plan) l.index = timer.launch(stream, [&](Stamp* st, unsigned* c) { ks[l.kernel].run(l.tasks, stream, st, c); });
  const std::vector<std::pair<double, double>> times = timer.read(first);
  // the BE programs' own grid sizes, 3 launches each: how far the model extrapolates
  std::vector<std::pair<unsigned, size_t>> be_launches;
  const size_t be_first = timer.used;
  for (unsigned ki = 0; ki < ks.size(); ++ki)
    if (ks[ki].be_tasks && ks[ki].be_tasks <= max_blocks)
      for (int i = 0; i < 3; ++i)
        be_launches.push_back({ki, timer.launch(stream, [&](Stamp* st, unsigned* c) { ks[ki].run(ks[ki].be_tasks, stream, st, c); })});
  const std::vector<std::pair<double, double>> be_times = timer.read(be_first);

  // ---- per kernel: the online models in launch order, then each form over all launches
  std::vector<double> medians;
  std::printf("form columns: R^2 (in ns), rms and max relative residual of the fit, leave-one-out rms (%%)\n");
  for (unsigned ki = 0; ki < ks.size(); ++ki) {
    const Kernel& k = ks[ki];
    DurationModel online(sms, k.slots), all(sms, k.slots, 0);
    std::vector<double> err, err_small, err_large, ev_minus_timer;
    size_t trusted = 0, n = 0;
    double tmin = 1e300, tmax = 0;
    for (const Launch& l : plan) {
      if (l.kernel != ki) continue;
      const auto [ns, ev_ns] = times[l.index - first];
      if (!(ns > 0)) continue;
      const double pred = online.predict(l.tasks);
      if (n >= warmup) {
        const double e = std::fabs(pred - ns) / ns;
        err.push_back(e);
        (ns < 20e3 ? err_small : err_large).push_back(e);
        trusted += online.trusted(l.tasks);
      }
      if (tsv)
        std::fprintf(tsv, "%s\t%zu\t%u\t%.0f\t%.0f\t%.0f\t%s\n", k.name.c_str(), l.index - first, l.tasks, ns, ev_ns, pred,
                     ptb::qos::form_name(online.confidence().form));
      online.observe(l.tasks, ns);
      all.observe(l.tasks, ns);
      ev_minus_timer.push_back(ev_ns - ns);
      tmin = std::min(tmin, ns), tmax = std::max(tmax, ns);
      ++n;
    }
    std::printf("\n== %s: %s\n   %u blocks/SM, %u slots; %zu launches, 1..%u blocks, %.1f..%.1f us; event - timer median %+.2f us\n",
                k.name.c_str(), k.what.c_str(), k.per_sm, k.slots, n, k.max_tasks, tmin / 1e3, tmax / 1e3,
                pct(ev_minus_timer, 0.5) / 1e3);
    for (unsigned f = 0; f < ptb::qos::kDurationForms; ++f) {
      const DurationFit fit = all.fit(DurationForm(f));
      if (!fit.ok) continue;
      std::printf("   %-10s R^2 %.4f  rms %5.1f%%  max %6.1f%%  loo %5.1f%%   a %.0f ns, b %.2f ns/block, c %.0f ns/wave%s\n",
                  ptb::qos::form_name(fit.form), fit.r2, 100 * fit.rms_error, 100 * fit.max_error, 100 * fit.loo_error,
                  fit.a, fit.b, fit.c, fit.form == DurationForm::knee ? (", knee at " + std::to_string(unsigned(fit.k))).c_str() : "");
    }
    const double med = pct(err, 0.5);
    medians.push_back(med);
    std::printf("   online (window 64, after %u): form at the end %s; error median %.1f%%, p90 %.1f%%, max %.1f%%; "
                "under 20 us median %.1f%% (%zu), over %.1f%% (%zu); trusted %zu of %zu\n",
                warmup, ptb::qos::form_name(online.confidence().form), 100 * med, 100 * pct(err, 0.9), 100 * pct(err, 1.0),
                100 * pct(err_small, 0.5), err_small.size(), 100 * pct(err_large, 0.5), err_large.size(), trusted, err.size());
    std::vector<double> be;
    for (size_t j = 0; j < be_launches.size(); ++j)
      if (be_launches[j].first == ki) be.push_back(be_times[be_launches[j].second - be_first].first);
    if (!be.empty()) {
      const double m = pct(be, 0.5), p_all = all.predict(k.be_tasks);
      std::printf("   at colocate's grid (%u blocks, %.1fx the largest fitted): measured %.1f us, predicted %.1f us (%+.1f%%, form %s)\n",
                  k.be_tasks, double(k.be_tasks) / k.max_tasks, m / 1e3, p_all / 1e3, 100 * (p_all - m) / m,
                  ptb::qos::form_name(all.confidence().form));
    }
  }

  // ---- the fused kernel: its parts alone, then together at load ratios 0.05-3
  {
    const unsigned per_sm = occ((const void*)k_fused, 256), grid = per_sm * sms, part_slots = 4 * grid;
    const unsigned tc_max = (kN / 16) * (kN / 16);
    auto run_fused = [&](unsigned ntc, unsigned ncd) {
      return timer.launch(stream, [&](Stamp* st, unsigned* next) {
        k_fused<<<grid, 256, 0, stream>>>(A, B, C, fma_out, kN, kK, kIters, ntc, ncd, next, st);
      });
    };
    std::printf("\n== fused: warps 0-3 WMMA 16x16 tiles (K = 1024), warps 4-7 fma chains, %u blocks/SM, %u blocks\n",
                per_sm, grid);
    DurationModel tcm(sms, part_slots), cdm(sms, part_slots);
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<std::pair<unsigned, unsigned>> solo;  // (part, tasks)
    for (int i = 0; i < 32; ++i) {
      solo.push_back({0, std::min(tc_max, 1 + unsigned(std::exp(u(rng) * std::log(16.0 * part_slots))))});
      solo.push_back({1, std::min(max_blocks * 8, 1 + unsigned(std::exp(u(rng) * std::log(64.0 * part_slots))))});
    }
    size_t base = timer.used;
    for (auto& s : solo) run_fused(s.first == 0 ? s.second : 0, s.first == 1 ? s.second : 0);
    auto st = timer.read(base);
    for (size_t i = 0; i < solo.size(); ++i)
      (solo[i].first == 0 ? tcm : cdm).observe(solo[i].second, st[i].first);
    std::printf("   parts alone (32 launches each): tc form %s loo %.1f%%; cd form %s loo %.1f%%\n",
                ptb::qos::form_name(tcm.confidence().form), 100 * tcm.confidence().loo_error,
                ptb::qos::form_name(cdm.confidence().form), 100 * cdm.confidence().loo_error);
    // pairs: tc tasks at 2, 4, 8, 16 x part slots; cd tasks for load ratios log-uniform in [0.05, 3]
    std::vector<std::pair<unsigned, unsigned>> pairs;
    for (unsigned m : {2u, 4u, 8u, 16u})
      for (int i = 0; i < 12; ++i) {
        const unsigned ntc = std::min(tc_max, m * part_slots);
        const double want = tcm.predict(ntc) * std::exp(std::log(0.05) + u(rng) * std::log(60.0));
        unsigned lo = 1, hi = max_blocks * 8;  // the cd task count whose predicted time is `want`
        while (lo < hi) {
          const unsigned mid = lo + (hi - lo) / 2;
          (cdm.predict(mid) < want ? lo = mid + 1 : hi = mid);
        }
        pairs.push_back({ntc, lo});
      }
    std::vector<std::pair<unsigned, unsigned>> order;
    for (unsigned r = 0; r < repeats; ++r) order.insert(order.end(), pairs.begin(), pairs.end());
    std::shuffle(order.begin(), order.end(), rng);
    base = timer.used;
    for (auto& p : order) run_fused(p.first, p.second);
    st = timer.read(base);
    ptb::qos::FusedDurationModel fm;
    std::vector<double> err, err_seq, err_max, ratios;
    for (size_t i = 0; i < order.size(); ++i) {
      const double xa = tcm.predict(order[i].first), xb = cdm.predict(order[i].second), ns = st[i].first;
      if (!(ns > 0)) continue;
      if (i >= warmup) {
        err.push_back(std::fabs(fm.predict(xa, xb) - ns) / ns);
        err_seq.push_back(std::fabs(xa + xb - ns) / ns);
        err_max.push_back(std::fabs(std::max(xa, xb) - ns) / ns);
      }
      ratios.push_back(xb / xa);
      if (tsv) std::fprintf(tsv, "fused\t%zu\t%u+%u\t%.0f\t%.0f\t%.0f\ttwo-segment\n", i, order[i].first, order[i].second, ns,
                            st[i].second, fm.predict(xa, xb));
      fm.observe(xa, xb, ns);
    }
    const double med = pct(err, 0.5);
    medians.push_back(med);
    std::printf("   %zu fused launches, load ratios %.2f..%.2f; model: t / x_tc = %.3f + %.3f r, break at r = %.2f, "
                "slope after %.3f (loo %.1f%%)\n",
                order.size(), pct(ratios, 0), pct(ratios, 1), fm.intercept(), fm.slope_before(), fm.inflection(),
                fm.slope_after(), 100 * fm.loo_error());
    std::printf("   online (after %u): error median %.1f%%, p90 %.1f%%; sequential x_tc + x_cd: median %.1f%%; "
                "perfect overlap max(x_tc, x_cd): median %.1f%%\n",
                warmup, 100 * med, 100 * pct(err, 0.9), 100 * pct(err_seq, 0.5), 100 * pct(err_max, 0.5));
  }

  if (tsv) std::fclose(tsv);
  double worst = 0;
  for (double m : medians) worst = std::max(worst, m);
  std::printf("\nduration-model: kernels %zu median-error %.1f%% worst-median %.1f%%\n", medians.size(),
              100 * pct(medians, 0.5), 100 * worst);
  return 0;
}

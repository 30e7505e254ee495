// probe_forms.cu: which persistent-worker loop can match the original on the corpus kernels that the PTB twin
// runs slowest (docs/results/gpu-corpus.md)? Hand-written loops around the same task bodies, no runtime: the
// question is what the loop's shape costs, before any bookkeeping of the runtime (checks, guided claims,
// hand-backs) is added.
//
// Bodies (copied in spirit from test/gpu): `ew` (elementwise, no shared memory: the case of docs/design/facts.md, fact 17),
// `diff` (return_after_last_barrier: 257 ints of shared memory, one barrier), `stencil` (grid3d_block3d:
// 7-point 3-D stencil, 32x4x2 blocks), `bsum` (template_block_reduce: 128-thread block sums, 8 barriers).
//
// Forms: orig (the original grid); stride (W workers, task t = w, w + W, ...); dynC (a claim of C tasks per
// atomic on one counter, the leader claims at the run boundary, the block waits for it); aheadC (the same,
// but the leader claims the next range one run ahead: the atomic's result is read at the next boundary).
// Between two tasks of one worker: a block barrier (the task bodies use shared memory).
//
// Output: per body, median ms of each form over 25 interleaved repeats and its ratio to orig; each form's
// output is first checked bit for bit against the original's (poisoned output before each check).
// rt*: the runtime's own twin (ptb::run_tasks through ptb::launch, all SMs allowed) of the same body, under
// the tunings named (rt: defaults; cc: check_cycles 2^30; fc0: no static first chunk; mcN: max_chunk N).
//   nvcc -O2 -arch=sm_90 -std=c++17 -I runtime/include -o probe_forms probe_forms.cu && ./probe_forms
#include <cuda_runtime.h>

#ifdef PTB_DEBUG_STAMPS
// -DPTB_DEBUG_STAMPS: %globaltimer stamps per worker (0: entry, 1: first run published, 2: no task left) and
// of the close (3), written by the runtime's hooks and by the hand-written forms.
constexpr unsigned kStampCap = 1u << 20;
__device__ unsigned long long g_stamps[4][kStampCap];
__device__ __forceinline__ void ptb_debug_stamp(int k, unsigned w) {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  if (w < kStampCap) g_stamps[k][w] = t;
}
#define STAMP(k, w) ptb_debug_stamp(k, w)
#else
#define STAMP(k, w) (void)0
#endif
#include "ptb/ptb.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// CUDA_CHECK and tg::detail::median: the GPU corpus harness (standalone use: no tg::init needed).
#include "../../test/gpu/common.cuh"

using ull = unsigned long long;

// ---- task bodies: operator()(blockIdx, gridDim) with the original block shape ----
struct Ew {
  static constexpr unsigned kThreads = 256;
  const float* in;
  float* out;
  int n;
  dim3 grid() const { return dim3((n + 255) / 256); }
  dim3 block() const { return dim3(256); }
  size_t out_bytes() const { return sizeof(float) * n; }
  void* out_ptr() const { return out; }
  __device__ __forceinline__ void operator()(uint3 b, dim3) const {
    int i = b.x * 256 + threadIdx.x;
    if (i < n) out[i] = in[i] * 2.f + 1.f;
  }
};

struct Diff {
  static constexpr unsigned kThreads = 256;
  const int* in;
  int* out;
  unsigned* nz;
  int n;
  dim3 grid() const { return dim3((n + 255) / 256); }
  dim3 block() const { return dim3(256); }
  size_t out_bytes() const { return sizeof(int) * n; }
  void* out_ptr() const { return out; }
  __device__ __forceinline__ void operator()(uint3 b, dim3) const {
    __shared__ int s[257];
    int i = b.x * 256 + threadIdx.x;
    s[threadIdx.x] = i < n ? in[i] : 0;
    if (threadIdx.x == 0) s[256] = (i + 256 < n) ? in[i + 256] : 0;
    __syncthreads();
    if (i >= n) return;
    int v = s[threadIdx.x + 1] - s[threadIdx.x];
    out[i] = v;
    if (v == 0) return;
    atomicAdd(nz, 1u);
  }
};

struct Stencil {
  static constexpr unsigned kThreads = 256;
  int nx, ny, nz;
  const int* in;
  int* out;
  dim3 grid() const { return dim3(nx / 32, ny / 4, nz / 2); }
  dim3 block() const { return dim3(32, 4, 2); }
  size_t out_bytes() const { return sizeof(int) * size_t(nx) * ny * nz; }
  void* out_ptr() const { return out; }
  __device__ __forceinline__ void operator()(uint3 b, dim3 g) const {
    int x = b.x * 32 + threadIdx.x;
    int y = b.y * 4 + threadIdx.y;
    int z = b.z * 2 + threadIdx.z;
    if (x >= nx || y >= ny || z >= nz) return;
    auto at = [&](int i, int j, int k) {
      i = min(max(i, 0), nx - 1);
      j = min(max(j, 0), ny - 1);
      k = min(max(k, 0), nz - 1);
      return in[((size_t)k * ny + j) * nx + i];
    };
    int v = 6 * at(x, y, z) - at(x - 1, y, z) - at(x + 1, y, z) - at(x, y - 1, z) - at(x, y + 1, z) -
            at(x, y, z - 1) - at(x, y, z + 1);
    out[((size_t)z * ny + y) * nx + x] = v * (int)g.z + (int)b.z;
  }
};

struct Bsum {
  static constexpr unsigned kThreads = 128;
  const int* in;
  int* out;
  int n;
  dim3 grid() const { return dim3(n / 512); }
  dim3 block() const { return dim3(128); }
  size_t out_bytes() const { return sizeof(int) * (n / 512); }
  void* out_ptr() const { return out; }
  __device__ __forceinline__ void operator()(uint3 b, dim3) const {
    __shared__ int s[128];
    size_t base = (size_t)b.x * 512;
    int acc = 0;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      size_t i = base + (size_t)k * 128 + threadIdx.x;
      if (i < (size_t)n) acc += in[i];
    }
    s[threadIdx.x] = acc;
    __syncthreads();
#pragma unroll
    for (int w = 64; w > 0; w /= 2) {
      if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
      __syncthreads();
    }
    if (threadIdx.x == 0) out[b.x] = s[0];
  }
};

// ---- loop forms ----
enum Form { kOrig, kStride, kDyn, kAhead, kShard };
constexpr unsigned kShards = 32;  // kShard: per-task claims on this many counters, one ahead

__device__ __forceinline__ uint3 coords(ull t, dim3 g) {
  unsigned i = (unsigned)t, q = i / g.x;
  return make_uint3(i - q * g.x, q % g.y, q / g.y);
}
__device__ __forceinline__ bool is_leader() { return threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0; }

template <class B, int F, int C>
__global__ void __launch_bounds__(B::kThreads) worker(B body, ull* ctr, dim3 g) {
  if constexpr (F == kOrig) {
    const unsigned id = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    (void)id;
    if (is_leader()) STAMP(0, id);
    body(blockIdx, gridDim);
    if (is_leader()) STAMP(2, id);
  } else {
    const ull n = (ull)g.x * g.y * g.z;
    if constexpr (F == kStride) {
      // task t = w, w + W, ...: coordinates advanced by W's (x, y, z) with carries, no division per task
      const uint3 d = coords(gridDim.x, g);
      uint3 c = coords(blockIdx.x, g);
      for (ull t = blockIdx.x; t < n; t += gridDim.x) {
        body(c, g);
        __syncthreads();
        c.x += d.x;
        unsigned cy = 0, cz = 0;
        if (c.x >= g.x) { c.x -= g.x; cy = 1; }
        c.y += d.y + cy;
        if (c.y >= g.y) { c.y -= g.y; cz = 1; }
        c.z += d.z + cz;
      }
    } else if constexpr (F == kShard) {
      // shard s = w % kShards holds tasks s, s + kShards, ...; one task per claim, claimed one task ahead;
      // an exhausted shard sends the worker on to the next one
      __shared__ ull sb[2];
      const bool lead = is_leader();
      unsigned shard = blockIdx.x % kShards, tried = 0;
      const ull per = (n + kShards - 1) / kShards;  // positions in the fullest shard
      ull ahead = n;
      auto claim = [&]() -> ull {
        while (tried < kShards) {
          const ull v = atomicAdd(ctr + 16 * shard, 1ull);
          const ull t = shard + kShards * v;
          if (v < per && t < n) return t;
          shard = (shard + 1) % kShards;
          ++tried;
        }
        return n;
      };
      if (lead) ahead = claim();
      for (unsigned r = 0;; ++r) {
        if (lead) {
          const ull cur = ahead;
          sb[r & 1] = cur;
          if (cur < n) ahead = claim();
        }
        __syncthreads();
        const ull t = sb[r & 1];
        if (t >= n) return;
        body(coords(t, g), g);
      }
    } else {
      __shared__ ull sb[2];
      const bool lead = is_leader();
      ull ahead = 0;
      if (lead) STAMP(0, blockIdx.x);
      if (F == kAhead && lead) ahead = atomicAdd(ctr, (ull)C);
      for (unsigned r = 0;; ++r) {
        if (lead) {
          if constexpr (F == kDyn) {
            sb[r & 1] = atomicAdd(ctr, (ull)C);
          } else {
            const ull cur = ahead;
            sb[r & 1] = cur;
            if (cur < n) ahead = atomicAdd(ctr, (ull)C);  // read at the next boundary
          }
        }
        if (lead && r == 0) STAMP(1, blockIdx.x);
        __syncthreads();
        const ull b = sb[r & 1];
        if (b >= n) {
          if (lead) STAMP(2, blockIdx.x);
          return;
        }
        const ull e = b + C < n ? b + C : n;
        uint3 c = coords(b, g);
        for (ull t = b; t < e; ++t) {
          body(c, g);
          __syncthreads();
          if (++c.x == g.x) {
            c.x = 0;
            if (++c.y == g.y) {
              c.y = 0;
              ++c.z;
            }
          }
        }
      }
    }
  }
}

template <class B>
__global__ void __launch_bounds__(B::kThreads) rt_original(B body) {
  body(blockIdx, gridDim);
}
template <class B>
__global__ void __launch_bounds__(B::kThreads) rt_twin(B body, const ptb::Launch launch) {
  ptb::run_tasks(launch, [&](const uint3 b, const dim3 g) { body(b, g); });
}
template <class B>
static void launch_rt(void* body, ull*, dim3 g, dim3 blk, cudaStream_t s, unsigned) {
  ptb::launch(ptb::LaunchConfig(g, blk, 0, s), rt_original<B>, rt_twin<B>, *static_cast<B*>(body));
}

struct Variant {
  std::string name;
  void (*kern)(void*, ull*, dim3, dim3, cudaStream_t, unsigned);  // launcher
  unsigned workers;
  bool rt = false;
  ptb::Tuning tuning{};
};

template <class B, int F, int C>
static void launch_form(void* body, ull* ctr, dim3 g, dim3 blk, cudaStream_t s, unsigned workers) {
  if (F == kOrig)
    worker<B, F, C><<<g, blk, 0, s>>>(*static_cast<B*>(body), ctr, g);
  else
    worker<B, F, C><<<workers, blk, 0, s>>>(*static_cast<B*>(body), ctr, g);
}

template <class B, int F, int C>
static Variant make_variant(const char* name, int sms) {
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, worker<B, F, C>, B::kThreads, 0));
  cudaFuncAttributes fa;
  CUDA_CHECK(cudaFuncGetAttributes(&fa, worker<B, F, C>));
  printf("  %-10s regs %3d  blocks/SM %2d\n", name, fa.numRegs, per_sm);
  return Variant{name, &launch_form<B, F, C>, (unsigned)(per_sm * sms)};
}

template <class B>
static void run_body(const char* bname, B body, int sms) {
  printf("%s: grid %u x %u x %u, block %u x %u x %u\n", bname, body.grid().x, body.grid().y, body.grid().z,
         body.block().x, body.block().y, body.block().z);
  auto rt = [&](const char* name, unsigned cc, unsigned fc, unsigned mc) {
    Variant v{name, &launch_rt<B>, 0, true};
    v.tuning.check_cycles = cc;
    v.tuning.first_chunk = fc;
    v.tuning.max_chunk = mc;
    return v;
  };
  {
    cudaFuncAttributes fa;
    CUDA_CHECK(cudaFuncGetAttributes(&fa, rt_twin<B>));
    printf("  %-10s regs %3d\n", "rt", fa.numRegs);
  }
  const ptb::Tuning d{};
  const dim3 g = body.grid(), blk = body.block();
  std::vector<Variant> vs = {
      make_variant<B, kOrig, 1>("orig", sms),      make_variant<B, kStride, 1>("stride", sms),
      make_variant<B, kDyn, 1>("dyn1", sms),       make_variant<B, kDyn, 4>("dyn4", sms),
      make_variant<B, kDyn, 16>("dyn16", sms),     make_variant<B, kDyn, 32>("dyn32", sms),
      make_variant<B, kAhead, 1>("ahead1", sms),   make_variant<B, kAhead, 2>("ahead2", sms),
      make_variant<B, kAhead, 4>("ahead4", sms),   make_variant<B, kAhead, 16>("ahead16", sms),
      make_variant<B, kShard, 1>("shard1", sms),
      rt("rt", d.check_cycles, d.first_chunk, d.max_chunk),
      rt("rt_cc", 1u << 30, d.first_chunk, d.max_chunk),
      rt("rt_fc0", d.check_cycles, 0, d.max_chunk),
      rt("rt_mc4", d.check_cycles, d.first_chunk, 4),
      rt("rt_mc16", d.check_cycles, d.first_chunk, 16),
  };
  if (const char* only = getenv("PROBE_ONLY")) {  // e.g. PROBE_ONLY=dyn4,rt: orig and these forms
    const std::string list = std::string(",") + only + ",";
    std::vector<Variant> kept;
    for (auto& v : vs)
      if (v.name == "orig" || list.find("," + v.name + ",") != std::string::npos) kept.push_back(v);
    vs = kept;
  }
  auto go = [&](size_t k, ull* c) {
    if (vs[k].rt) ptb::set_tuning(vs[k].tuning);
    vs[k].kern(&body, c, g, blk, 0, vs[k].workers);
  };
  const int reps = 25, warm = 3, nctr = 1024;
  ull* ctrs;  // kShard uses kShards consecutive 128-byte lines from its counter
  CUDA_CHECK(cudaMalloc(&ctrs, sizeof(ull) * 16 * (nctr + kShards)));
  CUDA_CHECK(cudaMemset(ctrs, 0, sizeof(ull) * 16 * (nctr + kShards)));
  int next_ctr = 0;
  auto fresh = [&] {
    if (next_ctr + kShards > nctr) {
      CUDA_CHECK(cudaMemset(ctrs, 0, sizeof(ull) * 16 * (nctr + kShards)));
      next_ctr = 0;
    }
    ull* c = ctrs + 16 * next_ctr;
    next_ctr += kShards;
    return c;
  };
  // correctness: each form's output equals the original's, bit for bit
  const size_t ob = body.out_bytes();
  std::vector<unsigned char> want(ob), got(ob);
  CUDA_CHECK(cudaMemset(body.out_ptr(), 0xff, ob));
  vs[0].kern(&body, fresh(), g, blk, 0, vs[0].workers);
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaMemcpy(want.data(), body.out_ptr(), ob, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (size_t k = 1; k < vs.size(); ++k) {
    CUDA_CHECK(cudaMemset(body.out_ptr(), 0xff, ob));
    go(k, fresh());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(got.data(), body.out_ptr(), ob, cudaMemcpyDeviceToHost));
    if (memcmp(got.data(), want.data(), ob) != 0) {
      printf("  FAIL %s: output differs from the original's\n", vs[k].name.c_str());
      ++bad;
    }
  }
  printf("  correctness: %zu forms, %d differ\n", vs.size() - 1, bad);
  cudaEvent_t a, b;
  CUDA_CHECK(cudaEventCreate(&a));
  CUDA_CHECK(cudaEventCreate(&b));
  std::vector<std::vector<float>> t(vs.size());
  for (int r = 0; r < warm + reps; ++r) {
    for (size_t j = 0; j < vs.size(); ++j) {
      const size_t k = (j + r) % vs.size();  // rotate the order
      ull* c = fresh();
      if (vs[k].rt) ptb::set_tuning(vs[k].tuning);
      CUDA_CHECK(cudaEventRecord(a));
      vs[k].kern(&body, c, g, blk, 0, vs[k].workers);
      CUDA_CHECK(cudaEventRecord(b));
      CUDA_CHECK(cudaEventSynchronize(b));
      float ms;
      CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
      if (r >= warm) t[k].push_back(ms);
    }
  }
#ifdef PTB_DEBUG_STAMPS
  {
    std::vector<unsigned long long> h(4ull * kStampCap);
    for (size_t k = 0; k < vs.size(); ++k) {
      if (vs[k].name != "orig" && vs[k].name != "dyn4" && vs[k].name != "rt" && vs[k].name != "rt_cc") continue;
      for (int rep = 0; rep < 3; ++rep) {
        void* sp;
        CUDA_CHECK(cudaGetSymbolAddress(&sp, g_stamps));
        CUDA_CHECK(cudaMemset(sp, 0, sizeof(unsigned long long) * 4 * kStampCap));
        ull* c = fresh();
        if (vs[k].rt) ptb::set_tuning(vs[k].tuning);
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaEventRecord(a));
        vs[k].kern(&body, c, g, blk, 0, vs[k].workers);
        CUDA_CHECK(cudaEventRecord(b));
        CUDA_CHECK(cudaEventSynchronize(b));
        float ms;
        CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
        CUDA_CHECK(cudaMemcpy(h.data(), sp, sizeof(unsigned long long) * 4 * kStampCap, cudaMemcpyDeviceToHost));
        unsigned long long mn[4], mx[4];
        unsigned cnt[4];
        for (int q = 0; q < 4; ++q) {
          mn[q] = ~0ull, mx[q] = 0, cnt[q] = 0;
          for (unsigned w = 0; w < kStampCap; ++w) {
            const unsigned long long v = h[size_t(q) * kStampCap + w];
            if (!v) continue;
            mn[q] = std::min(mn[q], v), mx[q] = std::max(mx[q], v), ++cnt[q];
          }
        }
        auto us = [&](unsigned long long v) { return v == ~0ull || v == 0 ? -1.0 : (double)(v - mn[0]) / 1000.0; };
        printf("  STAMPS %-8s %-6s event %8.1f us | entry %u: last +%.1f | first run +%.1f..+%.1f | done: first +%.1f "
               "last +%.1f | closed +%.1f\n",
               bname, vs[k].name.c_str(), ms * 1000.0, cnt[0], us(mx[0]), us(mn[1]), us(mx[1]), us(mn[2]), us(mx[2]),
               us(mx[3]));
      }
    }
  }
#endif
  const float m0 = tg::detail::median(t[0]);
  for (size_t k = 0; k < vs.size(); ++k) {
    const float m = tg::detail::median(t[k]);
    printf("  PROBE %-8s %-8s %9.4f ms  ratio %.4f\n", bname, vs[k].name.c_str(), m, m / m0);
  }
  CUDA_CHECK(cudaFree(ctrs));
}

int main() {
  cudaDeviceProp p;
  CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
  printf("device: %s, %d SMs\n", p.name, p.multiProcessorCount);
  const int sms = p.multiProcessorCount;
  // The rt forms are the runtime's twins, launched under no policy: force them (the automatic launch
  // mode, the default, would run the original kernel).
  ptb::set_launch_mode(ptb::LaunchMode::ptb);
  {
    const int n = 1 << 26;
    float *in, *out;
    CUDA_CHECK(cudaMalloc(&in, sizeof(float) * n));
    CUDA_CHECK(cudaMalloc(&out, sizeof(float) * n));
    CUDA_CHECK(cudaMemset(in, 0x3f, sizeof(float) * n));
    run_body("ew", Ew{in, out, n}, sms);
    CUDA_CHECK(cudaFree(in));
    CUDA_CHECK(cudaFree(out));
  }
  for (int scale : {1, 4}) {
    const int n = (1 << 26) * scale;
    int *in, *out;
    unsigned* nz;
    CUDA_CHECK(cudaMalloc(&in, sizeof(int) * n));
    CUDA_CHECK(cudaMalloc(&out, sizeof(int) * n));
    CUDA_CHECK(cudaMalloc(&nz, sizeof(unsigned)));
    CUDA_CHECK(cudaMemset(in, 0, sizeof(int) * n));  // as the corpus bench: all equal, no atomics
    CUDA_CHECK(cudaMemset(nz, 0, sizeof(unsigned)));
    run_body(scale == 1 ? "diff" : "diff4x", Diff{in, out, nz, n}, sms);
    CUDA_CHECK(cudaFree(in));
    CUDA_CHECK(cudaFree(out));
    CUDA_CHECK(cudaFree(nz));
  }
  {
    const int nx = 512, ny = 512, nz = 256;
    const size_t n = (size_t)nx * ny * nz;
    int *in, *out;
    CUDA_CHECK(cudaMalloc(&in, sizeof(int) * n));
    CUDA_CHECK(cudaMalloc(&out, sizeof(int) * n));
    std::vector<int> h(n);
    unsigned x = 12345u;
    for (auto& v : h) v = (int)((x = x * 1664525u + 1013904223u) >> 20);
    CUDA_CHECK(cudaMemcpy(in, h.data(), sizeof(int) * n, cudaMemcpyHostToDevice));
    run_body("stencil", Stencil{nx, ny, nz, in, out}, sms);
    CUDA_CHECK(cudaFree(in));
    CUDA_CHECK(cudaFree(out));
  }
  for (int scale : {1, 4}) {
    const int n = (1 << 27) * scale;
    int *in, *out;
    CUDA_CHECK(cudaMalloc(&in, sizeof(int) * n));
    CUDA_CHECK(cudaMalloc(&out, sizeof(int) * (n / 512)));
    std::vector<int> h(n);
    unsigned x = 777u;
    for (auto& v : h) v = (int)((x = x * 1664525u + 1013904223u) >> 22);
    CUDA_CHECK(cudaMemcpy(in, h.data(), sizeof(int) * n, cudaMemcpyHostToDevice));
    run_body(scale == 1 ? "bsum" : "bsum4x", Bsum{in, out, n}, sms);
    CUDA_CHECK(cudaFree(in));
    CUDA_CHECK(cudaFree(out));
  }
  return 0;
}

// Dispatch by need (docs/design/dispatch-by-need.md): which form a launch runs in each
// launch mode, and that the forms mix correctly.
//
//   test_dispatch         run with PTB_MODE, PTB_SMS and PTB_BLOCKS_PER_SM unset (the script unsets them):
//     1. automatic mode (the default), no policy: the original kernel runs (it counts its blocks in a
//        device word the twin never touches), through launch() and launch_kernel_args, in the default
//        and a created stream; invalid launches report what a plain launch reports; a captured launch is
//        a kernel node of the original; and the runtime has set up nothing (no device state, no process
//        policy, no monitor thread);
//     2. automatic mode under a Policy object (launch policy, also one that allows every SM), under a
//        stream policy, under a process policy restricted at run time (set, then cap only): the twin
//        runs, every task on an SM of the set (%smid per task), at most the cap of workers per SM; when
//        the stream policy is removed or the process policy allows everything again: the original;
//     3. PTB_MODE=ptb (set_launch_mode(ptb)): the twin with no policy; original mode: the original even
//        under a policy;
//     4. one stream, 300 dependent launches, original and twin in random order (the twin under a policy
//        that changes meanwhile): every launch sees the previous one's complete result; a graph captured
//        from a mix replays 3 times in order, its nodes the forms that were dispatched.
//   test_dispatch --env   a launch with no policy runs the form that PTB_MODE / PTB_SMS /
//                         PTB_BLOCKS_PER_SM ask for, inside the set and the cap; a launch under a Policy
//                         runs the twin unless PTB_MODE=original.
#include <ptb/ptb.cuh>
#include "common.cuh"
#include <algorithm>
#include <chrono>
#include <cstring>
#include <set>
#include <string>
#include <thread>

// ---------------------------------------------------------------- mark: every block once, where it ran
__device__ unsigned long long g_orig_blocks;   // blocks run by the original kernel
__device__ unsigned long long g_twin_workers;  // worker blocks of the twin (the original never counts here)
__device__ unsigned* g_who;                    // twin only, if set: worker (twin blockIdx.x) per task

__device__ __forceinline__ unsigned mark_value(unsigned long long id, unsigned t, unsigned seed) {
  return (unsigned)(id * 2654435761ull) ^ (t * 40503u) ^ seed;
}
__global__ void mark(unsigned* cnt, unsigned* where, unsigned* out, unsigned seed) {
  const unsigned long long id = blockIdx.x + gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
  const unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned nt = blockDim.x * blockDim.y * blockDim.z;
  if (t == 0) {
    atomicAdd(&cnt[id], 1u);
    where[id] = ptb::detail::smid();
    atomicAdd(&g_orig_blocks, 1ull);
  }
  out[id * nt + t] = mark_value(id, t, seed);
}
static __device__ __forceinline__ void mark__ptb_task(const uint3 blockIdx, const dim3 gridDim, unsigned* cnt,
                                                      unsigned* where, unsigned* out, unsigned seed) {
  const unsigned long long id = blockIdx.x + gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
  const unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned nt = blockDim.x * blockDim.y * blockDim.z;
  if (t == 0) {
    atomicAdd(&cnt[id], 1u);
    where[id] = ptb::detail::smid();
  }
  out[id * nt + t] = mark_value(id, t, seed);
}
__global__ void mark__ptb(unsigned* cnt, unsigned* where, unsigned* out, unsigned seed, const ::ptb::Launch ptb_launch) {
  const bool lead = threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0;
  ::ptb::run_tasks(ptb_launch, [&](const uint3 ptb_block, const dim3 ptb_grid) {
    if (g_who && lead)
      g_who[ptb_block.x + ptb_grid.x * (ptb_block.y + (unsigned long long)ptb_grid.y * ptb_block.z)] = blockIdx.x;
    mark__ptb_task(ptb_block, ptb_grid, cnt, where, out, seed);
  });
  if (lead) atomicAdd(&g_twin_workers, 1ull);
}
static inline void mark__ptb_launch(const ::ptb::LaunchConfig& c, unsigned* cnt, unsigned* where, unsigned* out,
                                    unsigned seed) {
  ::ptb::launch(c, mark, mark__ptb, cnt, where, out, seed);
}

// ---------------------------------------------------------------- step: a dependent chain in one stream
// Each element must hold `expect` (mod `mod`) when the launch starts; thread 0 of each block then spins
// ~2 us before the block writes the next value, so a launch that started before its predecessor ended
// would read old values.
__global__ void step(unsigned* v, unsigned expect, unsigned mod, unsigned* err) {
  const unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  const unsigned x = v[i];
  if (x % mod != expect) atomicAdd(err, 1u);
  if (threadIdx.x == 0) {
    const long long t0 = clock64();
    while (clock64() - t0 < 4000) {
    }
    atomicAdd(&g_orig_blocks, 1ull);
  }
  __syncthreads();
  v[i] = x + 1;
}
static __device__ __forceinline__ void step__ptb_task(const uint3 blockIdx, const dim3 gridDim, unsigned* v,
                                                      unsigned expect, unsigned mod, unsigned* err) {
  const unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  const unsigned x = v[i];
  if (x % mod != expect) atomicAdd(err, 1u);
  if (threadIdx.x == 0) {
    const long long t0 = clock64();
    while (clock64() - t0 < 4000) {
    }
  }
  __syncthreads();
  v[i] = x + 1;
}
__global__ void step__ptb(unsigned* v, unsigned expect, unsigned mod, unsigned* err, const ::ptb::Launch ptb_launch) {
  ::ptb::run_tasks(ptb_launch, [&](const uint3 ptb_block, const dim3 ptb_grid) {
    step__ptb_task(ptb_block, ptb_grid, v, expect, mod, err);
  });
  if (threadIdx.x == 0) atomicAdd(&g_twin_workers, 1ull);
}

// ---------------------------------------------------------------- helpers
static unsigned N = 0;              // SMs
static std::vector<unsigned> RAW;   // dense index -> %smid (after the first part)

// Zero the counters; returns when the device has them (the launches that follow may be in a
// non-blocking stream, which does not wait for the legacy stream's copies).
static void reset_forms() {
  const unsigned long long z = 0;
  CK(cudaMemcpyToSymbol(g_orig_blocks, &z, sizeof z));
  CK(cudaMemcpyToSymbol(g_twin_workers, &z, sizeof z));
  CK(cudaDeviceSynchronize());
}
static void forms(unsigned long long& orig, unsigned long long& twin) {
  CK(cudaMemcpyFromSymbol(&orig, g_orig_blocks, sizeof orig));
  CK(cudaMemcpyFromSymbol(&twin, g_twin_workers, sizeof twin));
}
static const char* mode_name(ptb::LaunchMode m) {
  return m == ptb::LaunchMode::ptb ? "ptb" : m == ptb::LaunchMode::original ? "original" : "automatic";
}

struct Buf {
  unsigned *cnt = nullptr, *where = nullptr, *out = nullptr, *who = nullptr;
  size_t n = 0;
  unsigned threads = 0;
  void alloc(size_t n_, unsigned threads_) {
    n = n_;
    threads = threads_;
    CK(cudaMalloc(&cnt, n * 4));
    CK(cudaMalloc(&where, n * 4));
    CK(cudaMalloc(&who, n * 4));
    CK(cudaMalloc(&out, n * threads * 4));
  }
  void poison(cudaStream_t s = 0) {
    CK(cudaMemsetAsync(cnt, 0, n * 4, s));
    CK(cudaMemsetAsync(where, 0xff, n * 4, s));
    CK(cudaMemsetAsync(who, 0xff, n * 4, s));
    CK(cudaMemsetAsync(out, 0xA5, n * threads * 4, s));
  }
  void free() {
    CK(cudaFree(cnt));
    CK(cudaFree(where));
    CK(cudaFree(who));
    CK(cudaFree(out));
  }
};

// What one launch of `mark` did.
struct Seen {
  unsigned long long orig = 0, twin = 0;  // original blocks, twin workers
  size_t bad = 0;                         // tasks not run exactly once, or outputs wrong
  std::set<unsigned> sms;                 // %smid values the tasks ran on
  size_t max_workers_per_sm = 0;          // distinct twin workers per SM (twin only, with `who`)
};

// Launches `mark` over grid x block (through launch(), or launch_kernel_args when `argv_form`) and
// checks every task ran once with the right outputs.
static Seen run_mark(const ptb::LaunchConfig& c, bool argv_form = false, bool record_who = false) {
  const size_t nb = (size_t)c.grid.x * c.grid.y * c.grid.z, nt = (size_t)c.block.x * c.block.y * c.block.z;
  Buf b;
  b.alloc(nb, (unsigned)nt);
  b.poison(c.stream);
  unsigned* who = record_who ? b.who : nullptr;
  CK(cudaMemcpyToSymbol(g_who, &who, sizeof who));
  // Every earlier launch has ended, resume workers included (they count themselves after their last
  // task); then the counters are zeroed and the device has everything above before the launch.
  CK(cudaDeviceSynchronize());
  reset_forms();
  const unsigned seed = rnd(0, 0xffffffffu);
  if (argv_form) {
    unsigned* cnt = b.cnt;
    unsigned* where = b.where;
    unsigned* out = b.out;
    unsigned sd = seed;
    void* argv[] = {&cnt, &where, &out, &sd};
    CK(::ptb::launch_kernel_args(mark, mark__ptb, c.grid, c.block, argv, c.shmem, c.stream));
  } else {
    mark__ptb_launch(c, b.cnt, b.where, b.out, seed);
  }
  CK(cudaGetLastError());
  CK(cudaStreamSynchronize(c.stream));
  CK(cudaDeviceSynchronize());
  Seen s;
  forms(s.orig, s.twin);
  std::vector<unsigned> hc(nb), hw(nb), hk(nb), ho(nb * nt);
  CK(cudaMemcpy(hc.data(), b.cnt, nb * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hw.data(), b.where, nb * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hk.data(), b.who, nb * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(ho.data(), b.out, nb * nt * 4, cudaMemcpyDeviceToHost));
  std::vector<std::set<unsigned>> per(1024);
  for (size_t i = 0; i < nb; ++i) {
    bool ok = hc[i] == 1;
    for (size_t t = 0; t < nt && ok; ++t) ok = ho[i * nt + t] == ((unsigned)(i * 2654435761ull) ^ (unsigned)(t * 40503u) ^ seed);
    s.bad += !ok;
    s.sms.insert(hw[i]);
    if (record_who && hk[i] != 0xffffffffu) per[hw[i] % 1024].insert(hk[i]);
  }
  for (auto& p : per) s.max_workers_per_sm = std::max(s.max_workers_per_sm, p.size());
  unsigned* z = nullptr;
  CK(cudaMemcpyToSymbol(g_who, &z, sizeof z));
  b.free();
  return s;
}

static bool inside(const std::set<unsigned>& used, const ptb::SmSet& set) {
  for (unsigned u : used) {
    bool ok = false;
    for (unsigned i = 0; i < RAW.size(); ++i)
      if (RAW[i] == u && set.contains(i)) ok = true;
    if (!ok) return false;
  }
  return true;
}

// The form a launch of `c` ran as: "original", "twin", or "BOTH?!" / "NONE?!".
static const char* form_of(const Seen& s) {
  if (s.orig && !s.twin) return "original";
  if (!s.orig && s.twin) return "twin";
  return s.orig ? "BOTH?!" : "NONE?!";
}
#define EXPECT_FORM(seen, want, what)                                                                        \
  EXPECT(std::strcmp(form_of(seen), want) == 0 && (seen).bad == 0, "%s: ran as %s (%llu original blocks, %llu " \
         "twin workers), want %s; %zu tasks wrong", what, form_of(seen), (seen).orig, (seen).twin, want, (seen).bad)

static bool runtime_untouched(int dev) {
  ptb::detail::Runtime& r = ptb::detail::rt();
  std::lock_guard<std::mutex> g(r.__m);
  return r.devs[dev] == nullptr && r.process == nullptr && !r.monitor_started;
}

// ---------------------------------------------------------------- 1. automatic, no policy
static void test_auto_plain() {
  int dev = 0;
  CK(cudaGetDevice(&dev));
  EXPECT(ptb::launch_mode() == ptb::LaunchMode::automatic, "default launch mode %s, want automatic",
         mode_name(ptb::launch_mode()));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const dim3 grids[] = {dim3(1), dim3(70000), dim3(13, 7, 5), dim3(3, 65535)};
  const dim3 blocks[] = {dim3(32), dim3(64), dim3(8, 4, 2), dim3(32)};
  for (int k = 0; k < 4; ++k) {
    Seen a = run_mark(ptb::LaunchConfig(grids[k], blocks[k], 0, k % 2 ? s : 0), k == 2);
    EXPECT_FORM(a, "original", "automatic, no policy");
    EXPECT(a.orig == (unsigned long long)grids[k].x * grids[k].y * grids[k].z, "original blocks %llu", a.orig);
  }
  // Errors: what a plain launch reports, with nothing set up.
  struct Case { const char* name; dim3 g, b; size_t sh; };
  const Case cases[] = {{"block 2048", dim3(4), dim3(2048), 0}, {"block 0", dim3(4), dim3(0), 0},
                        {"grid 0", dim3(0), dim3(256), 0},       {"grid z 70000", dim3(1, 1, 70000), dim3(32), 0},
                        {"shmem 1 MB", dim3(4), dim3(256), 1 << 20}};
  unsigned *cnt = nullptr, *where = nullptr, *out = nullptr;
  CK(cudaMalloc(&cnt, 1 << 20));
  CK(cudaMalloc(&where, 1 << 20));
  CK(cudaMalloc(&out, 1 << 24));
  for (const Case& c : cases) {
    CK(cudaDeviceSynchronize());
    (void)cudaGetLastError();
    mark<<<c.g, c.b, c.sh>>>(cnt, where, out, 1);
    const cudaError_t plain = cudaGetLastError(), plain2 = cudaGetLastError();
    mark__ptb_launch(::ptb::LaunchConfig(c.g, c.b, c.sh), cnt, where, out, 1);
    const cudaError_t p1 = cudaPeekAtLastError(), p = cudaGetLastError(), p2 = cudaGetLastError();
    EXPECT(plain != cudaSuccess && p == plain && p1 == plain && p2 == plain2, "%s: plain %s, automatic %s", c.name,
           cudaGetErrorName(plain), cudaGetErrorName(p));
    unsigned sd = 1;
    void* argv[] = {&cnt, &where, &out, &sd};
    const cudaError_t r1 = cudaLaunchKernel((const void*)mark, c.g, c.b, argv, c.sh, 0);
    const cudaError_t l1 = cudaGetLastError();
    const cudaError_t r2 = ::ptb::launch_kernel_args(mark, mark__ptb, c.g, c.b, argv, c.sh, 0);
    const cudaError_t l2 = cudaGetLastError();
    EXPECT(r1 == r2 && l1 == l2, "%s (cudaLaunchKernel form): %s/%s vs %s/%s", c.name, cudaGetErrorName(r1),
           cudaGetErrorName(l1), cudaGetErrorName(r2), cudaGetErrorName(l2));
  }
  // A pending error stays pending after a good launch, as after a plain one.
  mark<<<1, 4096>>>(cnt, where, out, 1);
  const cudaError_t before = cudaPeekAtLastError();
  mark__ptb_launch(::ptb::LaunchConfig(1, 32), cnt, where, out, 1);
  const cudaError_t pend = cudaGetLastError();
  EXPECT(pend == before, "pending error after an automatic launch: %s (before it: %s)", cudaGetErrorName(pend),
         cudaGetErrorName(before));
  // (Which error: cudaErrorInvalidConfiguration with earlier drivers, cudaErrorInvalidValue with CUDA 13.0 and
  // driver 580.159.04 on the H100. Either way it must survive the automatic launch.)
  EXPECT(before != cudaSuccess, "a plain launch of 4096 threads reported no error");
  CK(cudaDeviceSynchronize());
  // Capture: the graph holds the original kernel.
  {
    cudaGraph_t g;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    mark__ptb_launch(::ptb::LaunchConfig(100, 32, 0, s), cnt, where, out, 2);
    mark__ptb_launch(::ptb::LaunchConfig(100, 32, 0, s), cnt, where, out, 3);
    CK(cudaStreamEndCapture(s, &g));
    size_t n = 0;
    CK(cudaGraphGetNodes(g, nullptr, &n));
    std::vector<cudaGraphNode_t> nodes(n);
    CK(cudaGraphGetNodes(g, nodes.data(), &n));
    int orig_nodes = 0;
    for (auto nd : nodes) {
      cudaKernelNodeParams kp;
      if (cudaGraphKernelNodeGetParams(nd, &kp) == cudaSuccess && kp.func == (void*)mark) ++orig_nodes;
    }
    EXPECT(n == 2, "captured in automatic mode: %zu nodes", n);
    if (orig_nodes != 2) std::printf("  NOTE: %d of the 2 captured nodes report the original kernel's function\n", orig_nodes);
    cudaGraphExec_t ex;
    CK(cudaGraphInstantiate(&ex, g, 0));
    CK(cudaMemset(cnt, 0, 100 * 4));
    reset_forms();
    for (int r = 0; r < 3; ++r) CK(cudaGraphLaunch(ex, s));
    CK(cudaStreamSynchronize(s));
    std::vector<unsigned> hc(100);
    CK(cudaMemcpy(hc.data(), cnt, 400, cudaMemcpyDeviceToHost));
    unsigned long long o = 0, t = 0;
    forms(o, t);
    EXPECT(std::count(hc.begin(), hc.end(), 6u) == 100 && o == 600 && t == 0,
           "graph of originals replayed 3 times: counts %u, %llu original blocks, %llu twin workers", hc[0], o, t);
    CK(cudaGraphExecDestroy(ex));
    CK(cudaGraphDestroy(g));
  }
  EXPECT(runtime_untouched(dev), "automatic launches with no policy set up runtime state (device, process policy or monitor)");
  std::printf("  automatic, no policy: originals (launch, launch_kernel_args, 2 streams, 3-D), %zu error cases as plain,"
              " a captured pair of originals; runtime state untouched: %s\n",
              sizeof cases / sizeof cases[0], runtime_untouched(dev) ? "yes" : "NO");
  CK(cudaFree(cnt));
  CK(cudaFree(where));
  CK(cudaFree(out));
  CK(cudaStreamDestroy(s));
}

// ---------------------------------------------------------------- 2. automatic under policies
static void test_auto_policies() {
  cudaStream_t s, s2;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  const dim3 g(9000), b(128);
  // a launch policy
  const ptb::SmSet half = ptb::SmSet::first(N / 2);
  ptb::Policy P = ptb::Policy::create(half);
  ptb::LaunchConfig c(g, b, 0, s);
  c.policy = P;
  Seen a = run_mark(c);
  EXPECT_FORM(a, "twin", "launch policy (first half)");
  EXPECT(inside(a.sms, half), "launch policy: tasks outside %s", half.str().c_str());
  // a launch policy that allows every SM today (the program may restrict it later)
  ptb::Policy all = ptb::Policy::create();
  c.policy = all;
  a = run_mark(c);
  EXPECT_FORM(a, "twin", "launch policy allowing every SM");
  // a stream policy; another stream without one; launch_kernel_args in both
  const ptb::SmSet third = ptb::SmSet::range(N / 3, 2 * N / 3);
  ptb::set_stream_policy(s, ptb::Policy::create(third));
  a = run_mark(ptb::LaunchConfig(g, b, 0, s));
  EXPECT_FORM(a, "twin", "stream policy");
  EXPECT(inside(a.sms, third), "stream policy: tasks outside %s", third.str().c_str());
  a = run_mark(ptb::LaunchConfig(g, b, 0, s), true);
  EXPECT_FORM(a, "twin", "stream policy, launch_kernel_args");
  EXPECT(inside(a.sms, third), "stream policy, launch_kernel_args: tasks outside %s", third.str().c_str());
  a = run_mark(ptb::LaunchConfig(g, b, 0, s2));
  EXPECT_FORM(a, "original", "a stream without a policy beside one with");
  a = run_mark(ptb::LaunchConfig(g, b, 0, s2), true);
  EXPECT_FORM(a, "original", "a stream without a policy, launch_kernel_args");
  ptb::set_stream_policy(s, ptb::Policy());
  a = run_mark(ptb::LaunchConfig(g, b, 0, s));
  EXPECT_FORM(a, "original", "stream policy removed");
  // the process policy, restricted at run time, then a cap only, then nothing
  const ptb::SmSet upper = ptb::SmSet::range(N / 2, N);
  ptb::process_policy().set(upper);
  a = run_mark(ptb::LaunchConfig(g, b, 0, s));
  EXPECT_FORM(a, "twin", "process policy restricted at run time");
  EXPECT(inside(a.sms, upper), "process policy: tasks outside %s", upper.str().c_str());
  a = run_mark(ptb::LaunchConfig(g, b), true);
  EXPECT_FORM(a, "twin", "process policy restricted, launch_kernel_args");
  EXPECT(inside(a.sms, upper), "process policy, launch_kernel_args: tasks outside %s", upper.str().c_str());
  ptb::process_policy().set(ptb::SmSet::all(), 2);
  a = run_mark(ptb::LaunchConfig(g, b, 0, s), false, true);
  EXPECT_FORM(a, "twin", "process policy with a cap of 2 per SM");
  EXPECT(a.max_workers_per_sm <= 2, "process cap 2: %zu workers on one SM", a.max_workers_per_sm);
  ptb::process_policy().set(ptb::SmSet::all(), 0);
  a = run_mark(ptb::LaunchConfig(g, b, 0, s));
  EXPECT_FORM(a, "original", "process policy back to every SM, no cap");
  std::printf("  automatic under policies: twins under a launch policy (also one of every SM), a stream policy, a"
              " restricted process policy (set, cap), inside their sets; originals elsewhere\n");
  CK(cudaStreamDestroy(s));
  CK(cudaStreamDestroy(s2));
}

// ---------------------------------------------------------------- 3. the forced modes
static void test_forced_modes() {
  ptb::set_launch_mode(ptb::LaunchMode::ptb);
  Seen a = run_mark(ptb::LaunchConfig(dim3(5000), dim3(64)));
  EXPECT_FORM(a, "twin", "ptb mode, no policy");
  a = run_mark(ptb::LaunchConfig(dim3(5000), dim3(64)), true);
  EXPECT_FORM(a, "twin", "ptb mode, no policy, launch_kernel_args");
  ptb::set_launch_mode(ptb::LaunchMode::original);
  ptb::LaunchConfig c(dim3(5000), dim3(64));
  c.policy = ptb::Policy::create(ptb::SmSet::first(4));
  a = run_mark(c);
  EXPECT_FORM(a, "original", "original mode under a policy");
  ptb::set_launch_mode(ptb::LaunchMode::automatic);
  a = run_mark(c);
  EXPECT_FORM(a, "twin", "automatic mode under the same policy");
  std::printf("  ptb mode: twins with no policy; original mode: originals under a policy\n");
}

// ---------------------------------------------------------------- 4. both forms in one stream, and in a graph
static void test_mix() {
  const unsigned blocks = 3000, T = 128, L = 300;
  unsigned *v = nullptr, *err = nullptr;
  CK(cudaMalloc(&v, (size_t)blocks * T * 4));
  CK(cudaMalloc(&err, 4));
  CK(cudaMemset(v, 0, (size_t)blocks * T * 4));
  CK(cudaMemset(err, 0, 4));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  ptb::Policy P = ptb::Policy::create(ptb::SmSet::first(N / 2));
  CK(cudaDeviceSynchronize());
  reset_forms();
  unsigned twins = 0;
  for (unsigned k = 0; k < L; ++k) {
    ptb::LaunchConfig c(dim3(blocks), dim3(T), 0, s);
    if (rnd(0, 1)) {
      c.policy = P;
      ++twins;
    }
    ::ptb::launch(c, step, step__ptb, v, k, 0xffffffffu, err);
    if (k % 37 == 0) P.set(rnd(0, 1) ? ptb::SmSet::all() : ptb::SmSet::range(rnd(0, N / 2), N));
  }
  CK(cudaGetLastError());
  CK(cudaStreamSynchronize(s));
  CK(cudaDeviceSynchronize());
  unsigned herr = 0;
  CK(cudaMemcpy(&herr, err, 4, cudaMemcpyDeviceToHost));
  std::vector<unsigned> hv((size_t)blocks * T);
  CK(cudaMemcpy(hv.data(), v, hv.size() * 4, cudaMemcpyDeviceToHost));
  unsigned long long o = 0, t = 0;
  forms(o, t);
  EXPECT(herr == 0 && std::count(hv.begin(), hv.end(), L) == (long)hv.size(),
         "stream mix: %u order errors, v[0] = %u (want %u)", herr, hv[0], L);
  EXPECT(o == (unsigned long long)(L - twins) * blocks && (twins == 0 || t > 0),
         "stream mix: %llu original blocks for %u original launches of %u blocks, %llu twin workers", o, L - twins, blocks, t);
  // A graph captured from a mix: nodes of both kernels, replayed in order.
  const unsigned G = 20;
  CK(cudaMemset(v, 0, (size_t)blocks * T * 4));
  CK(cudaMemset(err, 0, 4));
  CK(cudaDeviceSynchronize());
  P.set(ptb::SmSet::first(N / 2));
  cudaGraph_t g;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (unsigned k = 0; k < G; ++k) {
    ptb::LaunchConfig c(dim3(blocks), dim3(T), 0, s);
    if (k % 2) c.policy = P;
    ::ptb::launch(c, step, step__ptb, v, k, G, err);
  }
  CK(cudaStreamEndCapture(s, &g));
  size_t n = 0;
  CK(cudaGraphGetNodes(g, nullptr, &n));
  std::vector<cudaGraphNode_t> nodes(n);
  CK(cudaGraphGetNodes(g, nodes.data(), &n));
  int no = 0, nt = 0;
  for (auto nd : nodes) {
    cudaKernelNodeParams kp;
    if (cudaGraphKernelNodeGetParams(nd, &kp) != cudaSuccess) continue;
    no += kp.func == (void*)step;
    nt += kp.func == (void*)step__ptb;
  }
  // The node's function is the pointer the launch was given (if this driver reports another one, say so:
  // the replay's counts below check the forms all the same).
  if (no + nt == 0)
    std::printf("  NOTE: the graph's kernel nodes report functions that are neither step nor step__ptb\n");
  else
    EXPECT(n == G && no == (int)G / 2 && nt == (int)G / 2, "captured mix: %zu nodes, %d original, %d twin (want %u each)",
           n, no, nt, G / 2);
  cudaGraphExec_t ex;
  CK(cudaGraphInstantiate(&ex, g, 0));
  const unsigned R = 3;
  reset_forms();
  for (unsigned r = 0; r < R; ++r) {
    CK(cudaGraphLaunch(ex, s));
    if (r == 1) P.set(ptb::SmSet::range(N / 4, N));
  }
  CK(cudaStreamSynchronize(s));
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(&herr, err, 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hv.data(), v, hv.size() * 4, cudaMemcpyDeviceToHost));
  forms(o, t);
  EXPECT(herr == 0 && std::count(hv.begin(), hv.end(), R * G) == (long)hv.size(),
         "graph mix: %u order errors, v[0] = %u (want %u)", herr, hv[0], R * G);
  EXPECT(o == (unsigned long long)R * (G / 2) * blocks && t > 0,
         "graph mix: %llu original blocks (want %u), %llu twin workers", o, R * (G / 2) * blocks, t);
  std::printf("  mix: %u dependent launches in one stream (%u twins), in order; a graph of %u originals and %u twins"
              " replayed %u times in order\n", L, twins, no, nt, R);
  CK(cudaGraphExecDestroy(ex));
  CK(cudaGraphDestroy(g));
  CK(cudaStreamDestroy(s));
  CK(cudaFree(v));
  CK(cudaFree(err));
}

// ---------------------------------------------------------------- --env
static void test_env() {
  const char* m = std::getenv("PTB_MODE");
  const char* e = std::getenv("PTB_SMS");
  const char* k = std::getenv("PTB_BLOCKS_PER_SM");
  ptb::SmSet set = ptb::SmSet::all();
  if (e) EXPECT(ptb::SmSet::parse(e, set), "PTB_SMS parse");
  const unsigned cap = k ? (unsigned)std::atoi(k) : 0;
  const std::string mode = m ? m : "";
  const ptb::LaunchMode want_mode = mode == "ptb"        ? ptb::LaunchMode::ptb
                                    : mode == "original" ? ptb::LaunchMode::original
                                                         : ptb::LaunchMode::automatic;
  EXPECT(ptb::launch_mode() == want_mode, "PTB_MODE=%s: launch mode %s", m ? m : "(unset)", mode_name(ptb::launch_mode()));
  const bool restricts = cap != 0 || set != ptb::SmSet::all();
  const char* want = want_mode == ptb::LaunchMode::original ? "original"
                     : want_mode == ptb::LaunchMode::ptb    ? "twin"
                     : restricts                            ? "twin"
                                                            : "original";
  Seen a = run_mark(ptb::LaunchConfig(dim3(20000), dim3(128)), false, true);
  EXPECT_FORM(a, want, "no policy");
  EXPECT(std::strcmp(want, "original") == 0 || inside(a.sms, set), "no policy: tasks outside PTB_SMS=%s", e ? e : "");
  EXPECT(std::strcmp(want, "original") == 0 || !cap || a.max_workers_per_sm <= cap, "no policy: %zu workers on one SM, cap %u",
         a.max_workers_per_sm, cap);
  Seen f = run_mark(ptb::LaunchConfig(dim3(20000), dim3(128)), true);
  EXPECT_FORM(f, want, "no policy, launch_kernel_args");
  ptb::LaunchConfig c(dim3(20000), dim3(128));
  c.policy = ptb::Policy::create();
  Seen p = run_mark(c);
  const char* want_p = want_mode == ptb::LaunchMode::original ? "original" : "twin";
  EXPECT_FORM(p, want_p, "under a Policy");
  std::printf("  env PTB_MODE=%s PTB_SMS=%s PTB_BLOCKS_PER_SM=%s: no policy -> %s (%zu SMs used, at most %zu workers per"
              " SM), under a Policy -> %s\n", m ? m : "(unset)", e ? e : "(unset)", k ? k : "(unset)", form_of(a),
              a.sms.size(), a.max_workers_per_sm, form_of(p));
}

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IONBF, 0);
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  N = (unsigned)p.multiProcessorCount;
  std::printf("device %s, %u SMs, launch mode %s\n", p.name, N, mode_name(ptb::launch_mode()));
  if (argc > 1 && std::strcmp(argv[1], "--env") == 0) {
    RAW = ptb::sm_ids();
    test_env();
    return finish("test_dispatch --env");
  }
  if (std::getenv("PTB_MODE") || std::getenv("PTB_SMS") || std::getenv("PTB_BLOCKS_PER_SM")) {
    std::printf("FAIL test_dispatch: run it with PTB_MODE, PTB_SMS and PTB_BLOCKS_PER_SM unset (or with --env)\n");
    return 1;
  }
  test_auto_plain();  // first: nothing may have set up the runtime before
  RAW = ptb::sm_ids();
  N = (unsigned)RAW.size();
  test_auto_policies();
  test_forced_modes();
  test_mix();
  return finish("test_dispatch");
}

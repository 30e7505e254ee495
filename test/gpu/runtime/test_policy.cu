// Phase-2 checks: SM sets and per-SM caps (tasks only on allowed SMs, at most k workers per SM),
// exactly-once over >= 1000 random yield/resume sequences (empty sets included), stream order while
// paused, 4 streams at once, launches of several streams under one policy in turn, graph replay with
// yields, a launch stranded on disallowed SMs (the host monitor resumes it), per-stream/per-launch/process
// precedence, environment variables, trace export.
#include <ptb/ptb.cuh>
#include <ptb/trace_png.cuh>  // trace_write_png
#include "common.cuh"
#include <algorithm>
#include <chrono>
#include <cstring>
#include <set>
#include <string>
#include <thread>

// Spins about ns nanoseconds on the SM's own clock (1.98 GHz here; %globaltimer may jump).
__device__ __forceinline__ void spin_ns(unsigned ns) {
  const long long t0 = clock64(), cycles = 2ll * ns;
  while (clock64() - t0 < cycles) {
  }
}
// Each block: count itself, record its SM, spin, write an output per thread.
__global__ void work(unsigned* cnt, unsigned* where, unsigned spin, unsigned* out) {
  const unsigned long long id = blockIdx.x + (unsigned long long)gridDim.x * blockIdx.y;
  if (threadIdx.x == 0) {
    atomicAdd(&cnt[id], 1u);
    where[id] = ptb::detail::smid();
    spin_ns(spin);
  }
  __syncthreads();
  out[id * blockDim.x + threadIdx.x] = (unsigned)id ^ (threadIdx.x << 20);
}
static __device__ __forceinline__ void work__ptb_task(const uint3 blockIdx, const dim3 gridDim, unsigned* cnt,
                                                      unsigned* where, unsigned spin, unsigned* out) {
  const unsigned long long id = blockIdx.x + (unsigned long long)gridDim.x * blockIdx.y;
  if (threadIdx.x == 0) {
    atomicAdd(&cnt[id], 1u);
    where[id] = ptb::detail::smid();
    spin_ns(spin);
  }
  __syncthreads();
  out[id * blockDim.x + threadIdx.x] = (unsigned)id ^ (threadIdx.x << 20);
}
__device__ unsigned* g_who;  // test instrumentation: worker (twin blockIdx.x) per task, if set
__global__ void work__ptb(unsigned* cnt, unsigned* where, unsigned spin, unsigned* out, const ::ptb::Launch ptb_launch) {
  ::ptb::run_tasks(ptb_launch, [&](const uint3 ptb_block, const dim3 ptb_grid) {
    if (g_who && threadIdx.x == 0) g_who[ptb_block.x + (unsigned long long)ptb_grid.x * ptb_block.y] = blockIdx.x;
    work__ptb_task(ptb_block, ptb_grid, cnt, where, spin, out);
  });
}
static inline void work__ptb_launch(const ::ptb::LaunchConfig& c, unsigned* cnt, unsigned* where, unsigned spin, unsigned* out) {
  ::ptb::launch(c, work, work__ptb, cnt, where, spin, out);
}
// A plain kernel that checks work's output (stream order).
__global__ void check_out(const unsigned* out, unsigned long long n, unsigned threads, unsigned* bad) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n * threads;
       i += (unsigned long long)gridDim.x * blockDim.x)
    if (out[i] != ((unsigned)(i / threads) ^ ((unsigned)(i % threads) << 20))) atomicAdd(bad, 1u);
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
  // counts all == expect, outputs right; returns number of problems
  int verify(const char* what, unsigned expect = 1, size_t n_used = 0) {
    if (!n_used) n_used = n;
    std::vector<unsigned> c(n_used), o(n_used * threads);
    CK(cudaMemcpy(c.data(), cnt, n_used * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(o.data(), out, n_used * threads * 4, cudaMemcpyDeviceToHost));
    size_t badc = 0, bado = 0, first = ~size_t(0);
    for (size_t i = 0; i < n_used; ++i) {
      if (c[i] != expect) {
        ++badc;
        if (first == ~size_t(0)) first = i;
      }
      for (unsigned t = 0; t < threads; ++t)
        if (o[i * threads + t] != ((unsigned)i ^ (t << 20))) ++bado;
    }
    EXPECT(badc == 0 && bado == 0, "%s: %zu of %zu tasks not run exactly %u times (first %zu: %u), %zu outputs wrong", what,
           badc, n_used, expect, first, first == ~size_t(0) ? 0 : c[first], bado);
    return (int)(badc + bado);
  }
};

static bool wait_stream(cudaStream_t s, double sec) {
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    const cudaError_t e = cudaStreamQuery(s);
    if (e == cudaSuccess) return true;
    if (e != cudaErrorNotReady) {
      std::printf("FAIL stream error %s\n", cudaGetErrorString(e));
      std::exit(1);
    }
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > sec) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}
static void must_finish(cudaStream_t s, const char* what) {
  if (!wait_stream(s, 20.0)) {
    std::printf("FAIL %s: stream did not finish in 20 s (hang)\n", what);
    std::fflush(stdout);
    std::_Exit(2);
  }
}

static unsigned N;  // SMs
static std::vector<unsigned> RAW;  // dense -> %smid

static ptb::SmSet random_set(bool allow_empty) {
  ptb::SmSet s;
  switch (rnd(0, allow_empty ? 6 : 5)) {
    case 0: for (unsigned i = 0; i < N; ++i) if (rnd(0, 1)) s.add(i); break;
    case 1: { unsigned a = rnd(0, N - 1), b = rnd(a + 1, N); s = ptb::SmSet::range(a, b); } break;
    case 2: s = ptb::SmSet::first(rnd(1, N)); break;
    case 3: s = ptb::SmSet::last(rnd(1, N), N); break;
    case 4: { unsigned a = rnd(0, N / 2 - 1); s = ptb::SmSet::tpcs(a, rnd(a + 1, N / 2)); } break;
    case 5: s.add(rnd(0, N - 1)); break;
    default: break;  // empty
  }
  if (!allow_empty && s.empty()) s.add(rnd(0, N - 1));
  return s;
}

static void test_sets_and_caps() {
  const unsigned T = 128;
  Buf b;
  b.alloc(12000, T);
  unsigned* who = b.who;
  CK(cudaMemcpyToSymbol(g_who, &who, sizeof(who)));
  ptb::Policy P = ptb::Policy::create();
  int bad_sm = 0, bad_cap = 0, empty_sm = 0;
  for (int rep = 0; rep < 60; ++rep) {
    const ptb::SmSet set = random_set(false);
    const unsigned cap = rep % 3 == 0 ? 0 : rnd(1, 3);
    P.set(set, cap);
    const unsigned n = rnd(3000, 12000);
    b.poison();
    ptb::LaunchConfig c = ptb::LaunchConfig(dim3(n), dim3(T));
    c.policy = P;
    work__ptb_launch(c, b.cnt, b.where, 2000, b.out);
    CK(cudaGetLastError());
    must_finish(0, "sets/caps");
    CK(cudaDeviceSynchronize());
    b.verify("sets/caps", 1, n);
    std::vector<unsigned> wh(n), wk(n);
    CK(cudaMemcpy(wh.data(), b.where, n * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(wk.data(), b.who, n * 4, cudaMemcpyDeviceToHost));
    std::set<unsigned> allowed;
    for (unsigned i = 0; i < N; ++i) if (set.contains(i)) allowed.insert(RAW[i]);
    std::vector<std::set<unsigned>> per(1024);
    int off = 0;
    for (unsigned i = 0; i < n; ++i) {
      if (!allowed.count(wh[i])) ++off;
      if (wh[i] < 1024) per[wh[i]].insert(wk[i]);
    }
    unsigned over = 0, unused = 0;
    for (unsigned s : allowed) {
      if (cap && per[s].size() > cap) ++over;
      if (per[s].empty()) ++unused;
    }
    if (off) ++bad_sm;
    if (over) ++bad_cap;
    if (unused) ++empty_sm;
    EXPECT(off == 0, "set %s cap %u: %d tasks on SMs outside the set", set.str().c_str(), cap, off);
    EXPECT(over == 0, "set %s cap %u: %u SMs with more workers than the cap", set.str().c_str(), cap, over);
    EXPECT(unused == 0, "set %s cap %u, %u tasks: %u allowed SMs ran nothing", set.str().c_str(), cap, n, unused);
  }
  unsigned* z = nullptr;
  CK(cudaMemcpyToSymbol(g_who, &z, sizeof(z)));
  std::printf("  sets/caps: 60 random sets and caps, %d with tasks off the set, %d over the cap, %d with an idle allowed SM\n",
              bad_sm, bad_cap, empty_sm);
  b.free();
}

// >= 1000 random sequences of policy changes while a launch runs; empty sets included.
static void test_yield_resume(int sequences) {
  const unsigned T = 256;  // 8 workers per SM
  Buf b;
  b.alloc(8000, T);
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  ptb::Policy P = ptb::Policy::create();
  int changes = 0, empties = 0, running_at_end = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int q = 0; q < sequences; ++q) {
    P.set(random_set(rnd(0, 9) == 0), rnd(0, 4) == 0 ? rnd(1, 3) : 0);
    if (P.sms().empty()) ++empties;
    const unsigned n = rnd(500, 8000);
    b.poison(s);
    ptb::LaunchConfig c = ptb::LaunchConfig(dim3(n), dim3(T), 0, s);
    c.policy = P;
    work__ptb_launch(c, b.cnt, b.where, rnd(2000, 20000), b.out);  // ~0.1 - 1.5 ms on all SMs
    CK(cudaGetLastError());
    const int k = (int)rnd(1, 4);
    for (int i = 0; i < k; ++i) {
      std::this_thread::sleep_for(std::chrono::microseconds(rnd(0, 300)));
      const bool e = rnd(0, 4) == 0;
      P.set(random_set(e), rnd(0, 3) == 0 ? rnd(1, 3) : 0);
      if (P.sms().empty()) ++empties;
      ++changes;
    }
    running_at_end += cudaStreamQuery(s) == cudaErrorNotReady;
    P.set(rnd(0, 1) ? ptb::SmSet::all() : random_set(false) | ptb::SmSet::first(N / 2), 0);
    must_finish(s, "yield/resume");
    if (b.verify("yield/resume", 1, n)) {
      std::printf("  (sequence %d)\n", q);
      break;
    }
  }
  const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("  yield/resume: %d sequences, %d changes (%d to or with an empty set), %d still running at the last"
              " change, in %.1f s\n", sequences, changes, empties, running_at_end, sec);
  CK(cudaStreamDestroy(s));
  b.free();
}

// While paused (empty set) the user's stream must not move on; after resume, the next kernel sees all.
static void test_stream_order() {
  const unsigned T = 1024, n = 40000;  // 2 workers per SM, 1 ms tasks: ~150 ms on every SM
  Buf b;
  b.alloc(n, T);
  unsigned* bad;
  CK(cudaMalloc(&bad, 4));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  ptb::Policy P = ptb::Policy::create();
  // Load check_out now: with CUDA's lazy loading its first launch would wait for the running twin (the
  // host thread blocks in <<<>>> until the twin ends, so the pause below came too late: the failure of
  // the earlier GPU runs, 1 of 5 pauses, always the first).
  cudaFuncAttributes fa;
  CK(cudaFuncGetAttributes(&fa, check_out));
  for (int rep = 0; rep < 5; ++rep) {
    b.poison(s);
    CK(cudaMemsetAsync(bad, 0, 4, s));
    CK(cudaStreamSynchronize(s));
    P.set(ptb::SmSet::all());
    ptb::LaunchConfig c = ptb::LaunchConfig(dim3(n), dim3(T), 0, s);
    c.policy = P;
    work__ptb_launch(c, b.cnt, b.where, 1000000, b.out);
    check_out<<<264, 256, 0, s>>>(b.out, n, T, bad);
    CK(cudaGetLastError());
    std::this_thread::sleep_for(std::chrono::milliseconds(2 + rep));
    P.set(ptb::SmSet::none());
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    const cudaError_t q = cudaStreamQuery(s);
    EXPECT(q == cudaErrorNotReady, "paused launch: stream query %s (the stream moved on)", cudaGetErrorName(q));
    P.set(rep % 2 ? ptb::SmSet::first(N / 2) : ptb::SmSet::all());
    must_finish(s, "stream order");
    unsigned h = 1;
    CK(cudaMemcpy(&h, bad, 4, cudaMemcpyDeviceToHost));
    EXPECT(h == 0, "kernel after a paused launch saw %u wrong outputs", h);
    b.verify("stream order");
  }
  std::printf("  stream order: 5 pauses of 30 ms, stream held, next kernel saw complete results\n");
  CK(cudaStreamDestroy(s));
  CK(cudaFree(bad));
  b.free();
}

// 4 streams, each with its own policy, many launches in flight, policies changing meanwhile.
static void test_four_streams() {
  const int S = 4, R = 40;
  const unsigned T = 64;
  cudaStream_t st[S];
  ptb::Policy P[S];
  std::vector<Buf> bufs(S * R);
  for (int i = 0; i < S; ++i) {
    CK(cudaStreamCreateWithFlags(&st[i], cudaStreamNonBlocking));
    P[i] = ptb::Policy::create(random_set(false));
  }
  std::vector<unsigned> ns(S * R);
  for (int r = 0; r < R; ++r)
    for (int i = 0; i < S; ++i) {
      Buf& b = bufs[r * S + i];
      ns[r * S + i] = rnd(200, 4000);
      b.alloc(ns[r * S + i], T);
      b.poison(st[i]);
    }
  CK(cudaDeviceSynchronize());
  for (int r = 0; r < R; ++r) {
    for (int i = 0; i < S; ++i) {
      Buf& b = bufs[r * S + i];
      ptb::LaunchConfig c = ptb::LaunchConfig(dim3(ns[r * S + i]), dim3(T), 0, st[i]);
      c.policy = P[i];
      work__ptb_launch(c, b.cnt, b.where, rnd(1000, 8000), b.out);
    }
    CK(cudaGetLastError());
    if (r % 2) P[rnd(0, S - 1)].set(random_set(rnd(0, 5) == 0), rnd(0, 3) == 0 ? rnd(1, 2) : 0);
    if (r % 5 == 0) std::this_thread::sleep_for(std::chrono::microseconds(rnd(0, 500)));
  }
  for (int i = 0; i < S; ++i) P[i].set(ptb::SmSet::all());
  for (int i = 0; i < S; ++i) must_finish(st[i], "four streams");
  int bad = 0;
  for (int k = 0; k < S * R; ++k) bad += bufs[k].verify("four streams") ? 1 : 0;
  std::printf("  four streams: %d launches, %d wrong\n", S * R, bad);
  for (auto& b : bufs) b.free();
  for (int i = 0; i < S; ++i) CK(cudaStreamDestroy(st[i]));
}

// Captured launches under a policy; replays with yields and resumes during them.
static void test_graph_yield() {
  const unsigned T = 64, n = 8000;
  Buf b;
  b.alloc(n, T);
  b.poison();
  CK(cudaDeviceSynchronize());
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  ptb::Policy P = ptb::Policy::create();
  cudaGraph_t g;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int k = 0; k < 3; ++k) {
    ptb::LaunchConfig c = ptb::LaunchConfig(dim3(n), dim3(T), 0, s);
    c.policy = P;
    work__ptb_launch(c, b.cnt, b.where, 3000, b.out);
  }
  CK(cudaStreamEndCapture(s, &g));
  cudaGraphExec_t ex;
  CK(cudaGraphInstantiate(&ex, g, 0));
  const int R = 20;
  for (int r = 0; r < R; ++r) {
    CK(cudaGraphLaunch(ex, s));
    std::this_thread::sleep_for(std::chrono::microseconds(rnd(0, 400)));
    P.set(random_set(r % 3 == 0), 0);
    std::this_thread::sleep_for(std::chrono::microseconds(rnd(0, 400)));
    P.set(random_set(false), 0);
    if (r % 4 == 0) P.set(ptb::SmSet::all());
  }
  P.set(ptb::SmSet::all());
  must_finish(s, "graph yield");
  b.verify("graph replays with yields", 3 * R);
  std::printf("  graph: %d replays of 3 captured launches with policy changes during them\n", R);
  CK(cudaGraphExecDestroy(ex));
  CK(cudaGraphDestroy(g));
  CK(cudaStreamDestroy(s));
  b.free();
}

// Launches under one restricting policy in turn across streams (launch_order.cuh): three streams, two
// rounds, on one SM. Launches that leave room on the SM (16 tasks where 32 blocks fit): every launch's first
// task starts after the launch made two before it ended. Launches that fill it (64 tasks): after the one made
// just before it ended.
// Task `id`: its start and end on the global timer, a count, a spin in between.
__device__ __forceinline__ void stamp_task(unsigned id, unsigned* cnt, unsigned long long* t, unsigned spin) {
  if (threadIdx.x == 0) {
    t[2 * id] = ptb::detail::globaltimer();
    spin_ns(spin);
    atomicAdd(&cnt[id], 1u);
    t[2 * id + 1] = ptb::detail::globaltimer();
  }
}
__global__ void stamp(unsigned* cnt, unsigned long long* t, unsigned spin) { stamp_task(blockIdx.x, cnt, t, spin); }
__global__ void stamp__ptb(unsigned* cnt, unsigned long long* t, unsigned spin, const ::ptb::Launch L) {
  ::ptb::run_tasks<::ptb::TaskSync::none>(L, [&](const uint3 b, const dim3) { stamp_task(b.x, cnt, t, spin); });
}
// Runs the launches (3 streams x 2 rounds, n tasks of 0.5 ms each) under P; returns how many launches
// started before the one made `back` before them had ended, and counts tasks not run exactly once in *bad.
static int turns_overlapping(ptb::Policy P, unsigned n, unsigned back, int* bad) {
  const unsigned S = 3, R = 2, L = S * R;
  unsigned* cnt;
  unsigned long long* t;
  CK(cudaMalloc(&cnt, L * n * 4));
  CK(cudaMalloc(&t, L * n * 16));
  CK(cudaMemset(cnt, 0, L * n * 4));
  CK(cudaMemset(t, 0, L * n * 16));
  CK(cudaDeviceSynchronize());
  cudaStream_t st[S];
  for (auto& s : st) CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (unsigned k = 0; k < L; ++k) {
    ptb::LaunchConfig c(dim3(n), dim3(64), 0, st[k % S]);
    c.policy = P;
    ptb::launch(c, stamp, stamp__ptb, cnt + k * n, t + 2 * k * n, 500u * 1000u);
  }
  CK(cudaGetLastError());
  for (auto& s : st) must_finish(s, "turns");
  std::vector<unsigned> c(L * n);
  std::vector<unsigned long long> h(2 * L * n);
  CK(cudaMemcpy(c.data(), cnt, c.size() * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(h.data(), t, h.size() * 8, cudaMemcpyDeviceToHost));
  *bad = 0;
  for (unsigned x : c) *bad += x != 1;
  int overlapping = 0;
  for (unsigned k = back; k < L; ++k) {
    unsigned long long end_before = 0, first = ~0ull;
    for (unsigned i = 0; i < n; ++i) {
      end_before = std::max(end_before, h[2 * ((k - back) * n + i) + 1]);
      first = std::min(first, h[2 * (k * n + i)]);
    }
    overlapping += first < end_before;
  }
  for (auto& s : st) CK(cudaStreamDestroy(s));
  CK(cudaFree(cnt));
  CK(cudaFree(t));
  return overlapping;
}
static void test_turns() {
  int occ = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, stamp__ptb, 64, 0));
  int bad = 0, bad_fill = 0;
  const int in_turn = turns_overlapping(ptb::Policy::create(ptb::SmSet::first(1)), occ / 2, 2, &bad);
  EXPECT(in_turn == 0 && bad == 0, "turns: %d of 4 launches started before the one made two before them ended, %d tasks not run once",
         in_turn, bad);
  const int filling = turns_overlapping(ptb::Policy::create(ptb::SmSet::first(1)), 2 * occ, 1, &bad_fill);
  EXPECT(filling == 0 && bad_fill == 0,
         "turns: %d of 5 launches that fill the SM started before the one made before them ended, %d tasks not run once",
         filling, bad_fill);
  ptb::Tuning tu = ptb::tuning();
  tu.order_streams = false;
  ptb::set_tuning(tu);
  int bad_off = 0;
  const int off = turns_overlapping(ptb::Policy::create(ptb::SmSet::first(1)), occ / 2, 2, &bad_off);
  tu.order_streams = true;
  ptb::set_tuning(tu);
  int bad_all = 0;
  const int all = turns_overlapping(ptb::Policy::create(), occ / 2, 2, &bad_all);  // every SM: nothing to order
  EXPECT(bad_off == 0 && bad_all == 0, "turns: %d / %d tasks not run once (ordering off / every SM)", bad_off, bad_all);
  std::printf("  turns: one SM (%d blocks fit), 3 streams: %d of 4 launches of %d tasks overlapped the one made two before "
              "(ordering off: %d; every SM: %d); %d of 5 launches of %d tasks overlapped the one just before\n",
              occ, in_turn, occ / 2, off, all, filling, 2 * occ);
}

// Every original worker lands on a disallowed SM (the allowed ones are full with another PTB kernel, under
// *another* policy of the same SMs: launches under one policy take turns, different policies are not
// ordered): the last one stays as anchor and asks the host's monitor for workers until the allowed SMs
// free up.
static void test_stranded() {
  const unsigned T = 256;
  Buf blocker, be;
  blocker.alloc(N / 2 * 8 * 2, T);
  be.alloc(5000, T);
  blocker.poison();
  be.poison();
  CK(cudaDeviceSynchronize());
  cudaStream_t s1, s2;
  CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  ptb::Policy half = ptb::Policy::create(ptb::SmSet::first(N / 2)), other_half = ptb::Policy::create(ptb::SmSet::first(N / 2));
  ptb::LaunchConfig c1 = ptb::LaunchConfig(dim3((unsigned)blocker.n), dim3(T), 0, s1);
  c1.policy = other_half;
  work__ptb_launch(c1, blocker.cnt, blocker.where, 10 * 1000 * 1000, blocker.out);  // 2 waves of 10 ms on SMs [0, N/2)
  std::this_thread::sleep_for(std::chrono::milliseconds(3));
  ptb::LaunchConfig c2 = ptb::LaunchConfig(dim3((unsigned)be.n), dim3(T), 0, s2);
  c2.policy = half;
  const auto t0 = std::chrono::steady_clock::now();
  work__ptb_launch(c2, be.cnt, be.where, 2000, be.out);
  CK(cudaGetLastError());
  must_finish(s2, "stranded");
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  must_finish(s1, "blocker");
  be.verify("stranded launch");
  blocker.verify("blocker");
  std::vector<unsigned> wh(be.n);
  CK(cudaMemcpy(wh.data(), be.where, be.n * 4, cudaMemcpyDeviceToHost));
  std::set<unsigned> allowed;
  for (unsigned i = 0; i < N / 2; ++i) allowed.insert(RAW[i]);
  int off = 0;
  for (unsigned w : wh) off += !allowed.count(w);
  EXPECT(off == 0, "stranded: %d tasks off the allowed SMs", off);
  std::printf("  stranded launch finished after %.1f ms (blocker holds the allowed SMs ~20 ms)\n", ms);
  CK(cudaStreamDestroy(s1));
  CK(cudaStreamDestroy(s2));
  blocker.free();
  be.free();
}

static std::set<unsigned> sms_used(const Buf& b, size_t n) {
  std::vector<unsigned> wh(n);
  CK(cudaMemcpy(wh.data(), b.where, n * 4, cudaMemcpyDeviceToHost));
  return std::set<unsigned>(wh.begin(), wh.end());
}
static bool subset_of(const std::set<unsigned>& used, const ptb::SmSet& s) {
  for (unsigned u : used) {
    bool ok = false;
    for (unsigned i = 0; i < N; ++i) if (RAW[i] == u && s.contains(i)) ok = true;
    if (!ok) return false;
  }
  return true;
}

static void test_precedence_and_trace() {
  const unsigned T = 64, n = 6000;
  Buf b;
  b.alloc(n, T);
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const ptb::SmSet qs = ptb::SmSet::range(N / 4, N / 2), ls = ptb::SmSet::first(10);
  ptb::Policy Q = ptb::Policy::create(qs), Lp = ptb::Policy::create(ls);
  ptb::set_stream_policy(s, Q);
  EXPECT(ptb::stream_policy(s) == Q, "stream_policy");
  b.poison(s);
  work__ptb_launch(ptb::LaunchConfig(dim3(n), dim3(T), 0, s), b.cnt, b.where, 1000, b.out);
  must_finish(s, "stream policy");
  b.verify("stream policy");
  auto u = sms_used(b, n);
  EXPECT(subset_of(u, qs) && u.size() == qs.count(), "stream policy: %zu SMs used, want those of %s", u.size(), qs.str().c_str());
  // per launch beats per stream
  CK(ptb::trace_start(1 << 16));
  b.poison(s);
  ptb::LaunchConfig c = ptb::LaunchConfig(dim3(n), dim3(T), 0, s);
  c.policy = Lp;
  work__ptb_launch(c, b.cnt, b.where, 1000, b.out);
  must_finish(s, "launch policy");
  b.verify("launch policy");
  u = sms_used(b, n);
  EXPECT(subset_of(u, ls) && u.size() == ls.count(), "launch policy: %zu SMs used, want those of %s", u.size(), ls.str().c_str());
  ptb::trace_stop();
  auto ev = ptb::trace_collect();
  std::set<unsigned long long> tasks;
  int off = 0;
  for (auto& e : ev) {
    tasks.insert(e.task);
    bool ok = false;
    for (unsigned i = 0; i < N; ++i) if (RAW[i] == e.sm && ls.contains(i)) ok = true;
    off += !ok;
    if (e.end_ns < e.start_ns) ++off;
  }
  EXPECT(ev.size() == n && tasks.size() == n && off == 0, "trace: %zu events, %zu distinct tasks (want %u), %d bad", ev.size(),
         tasks.size(), n, off);
  EXPECT(ptb::trace_write_json("trace_policy.json", ev) && ptb::trace_write_png("trace_policy.png", ev, 800, 3), "trace export");
  // no policy on the stream: the process policy (all SMs unless PTB_SMS says otherwise)
  ptb::set_stream_policy(s, ptb::Policy());
  b.poison(s);
  work__ptb_launch(ptb::LaunchConfig(dim3(n), dim3(T), 0, s), b.cnt, b.where, 1000, b.out);
  must_finish(s, "process policy");
  b.verify("process policy");
  u = sms_used(b, n);
  const ptb::SmSet ps = ptb::process_policy().sms();
  EXPECT(subset_of(u, ps), "process policy: tasks outside %s", ps.str().c_str());
  std::printf("  precedence: stream policy %s, launch policy %s, process policy %s (%zu SMs used); trace %zu events\n",
              qs.str().c_str(), ls.str().c_str(), ps.str().c_str(), u.size(), ev.size());
  CK(cudaStreamDestroy(s));
  b.free();
}

// Run with PTB_SMS=... PTB_BLOCKS_PER_SM=k: a launch with no policy obeys them.
static void test_env() {
  const char* e = std::getenv("PTB_SMS");
  const char* k = std::getenv("PTB_BLOCKS_PER_SM");
  ptb::SmSet want = ptb::SmSet::all();
  if (e) EXPECT(ptb::SmSet::parse(e, want), "PTB_SMS parse");
  const unsigned cap = k ? (unsigned)std::atoi(k) : 0;
  const unsigned T = 128, n = 20000;
  Buf b;
  b.alloc(n, T);
  unsigned* who = b.who;
  CK(cudaMemcpyToSymbol(g_who, &who, sizeof(who)));
  b.poison();
  work__ptb_launch(ptb::LaunchConfig(dim3(n), dim3(T)), b.cnt, b.where, 2000, b.out);
  must_finish(0, "env");
  CK(cudaDeviceSynchronize());
  b.verify("env");
  std::vector<unsigned> wh(n), wk(n);
  CK(cudaMemcpy(wh.data(), b.where, n * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(wk.data(), b.who, n * 4, cudaMemcpyDeviceToHost));
  std::vector<std::set<unsigned>> per(1024);
  for (unsigned i = 0; i < n; ++i) per[wh[i] % 1024].insert(wk[i]);
  size_t mx = 0, used = 0;
  for (auto& p : per) { mx = std::max(mx, p.size()); used += !p.empty(); }
  EXPECT(subset_of(sms_used(b, n), want), "env: tasks outside PTB_SMS=%s", e ? e : "");
  EXPECT(!cap || mx <= cap, "env: %zu workers on one SM, PTB_BLOCKS_PER_SM=%u", mx, cap);
  EXPECT(used == want.count() || want == ptb::SmSet::all(), "env: %zu SMs used, want %u", used, want.count());
  std::printf("  env PTB_SMS=%s PTB_BLOCKS_PER_SM=%s: %zu SMs used, at most %zu workers per SM\n", e ? e : "(unset)",
              k ? k : "(unset)", used, mx);
  b.free();
}

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IONBF, 0);
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  RAW = ptb::sm_ids();
  N = (unsigned)RAW.size();
  std::printf("device %s, %d SMs; %u SM ids discovered: %u..%u\n", p.name, p.multiProcessorCount, N, RAW.front(), RAW.back());
  if (argc > 1 && std::strcmp(argv[1], "--env") == 0) {
    test_env();
    return finish("test_policy --env");
  }
  const int seq = argc > 1 ? std::atoi(argv[1]) : 1000;
  test_sets_and_caps();
  test_precedence_and_trace();
  test_stream_order();
  test_graph_yield();
  test_four_streams();
  test_turns();
  test_stranded();
  test_yield_resume(seq);
  return finish("test_policy");
}

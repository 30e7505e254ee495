// Stress test of the PTB runtime under policies (issue 10): random launch shapes x random policies, every
// task of every launch checked to run exactly once, every launch timed against the same launch unconfined.
//
//   stress [--seed S] [--cases N] [--min-launches M] [--max-tasks T] [--max-chain C] [--hang-seconds H]
//   (defaults: a random seed, 120 cases, 10000 launches at least, 10^6 tasks at most, chains of 1000 at most, 30 s)
//
// A case: a kernel (no shared memory / static shared + barriers / dynamic shared + barriers; tasks that
// spin 0-20 us), a grid of 1..10^6 tasks (1-D, 2-D or 3-D), a block of 16..1024 threads (1-D/2-D/3-D),
// 1..4 streams each running a chain of 1..1000 dependent launches (each launch reads what the one
// before wrote), captured into a graph and replayed (1-3 times) in some cases. It runs twice: under the
// process policy (every SM unless PTB_SMS says otherwise: the baseline; given as the launches' policy, so
// that they run as twins in the automatic launch mode too) and under a random policy (one SM, a few, many, a
// non-contiguous set, with or without a cap of 1..occupancy workers per SM), which in "changing" cases a
// second host thread sets anew every 50-500 us while the launches run, the set emptied for 1-3 ms and
// refilled now and then.
// Checked per launch and task: ran exactly once (a counter per task per launch), in stream order (a chain
// value per task), with its block's barrier intact. Timed on the GPU (%globaltimer: from the first of its
// original workers to start to the last to leave; the host's time in its launch call is not the launch's,
// docs/design/progress-under-policy.md, "What a policy guarantees"), a launch may take at most
//   10 x its baseline time x (SMs / the smallest share of them its policy allowed) + the time its set was empty
// where a cap k below the kernel's occupancy o counts each capped SM as k / o of an SM (the set-only
// bound, caps not counted, is reported beside it; docs/design/runtime.md, "What a policy guarantees")
// (changing cases: the whole case against that bound). A watchdog ends the run when nothing moves for
// --hang-seconds. Every failure names the case's seed: `stress --seed S --cases 1` replays case S.
#include <ptb/ptb.cuh>
#include "../runtime/common.cuh"
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

// ---------------------------------------------------------------- the kernels (twins as ptb-transform emits)
struct Args {
  unsigned* cnt;    // this launch's counters, one per task
  unsigned* chain;  // per task: launches of this chain so far
  unsigned* err;    // barrier/order errors
  unsigned spin_ns;
  unsigned expect_chain;  // chain value before this launch (order check)
  unsigned long long* span;  // this launch's [first start of an original worker, last exit of one] (%globaltimer)
};

__device__ __forceinline__ unsigned long long gtimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ unsigned tid_in_block() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }
__device__ __forceinline__ void spin(unsigned ns) {
  if (!ns) return;
  const unsigned long long t0 = gtimer();
  while (gtimer() - t0 < ns) {
  }
}
__device__ __forceinline__ void count_task(const uint3 b, const dim3 g, const Args& a) {
  const unsigned long long id = b.x + (unsigned long long)g.x * (b.y + (unsigned long long)g.y * b.z);
  atomicAdd(&a.cnt[id], 1u);
  // Stream order: the previous launch of this chain finished before this one started.
  const unsigned c = a.chain[id];
  if (c != a.expect_chain) atomicAdd(a.err, 1u);
  a.chain[id] = c + 1;
}
// Mode 0: no shared memory, no barrier (the tool emits TaskSync::none).
__device__ __forceinline__ void body_plain(const uint3 b, const dim3 g, const Args& a) {
  spin(a.spin_ns);
  if (tid_in_block() == 0) count_task(b, g, a);
}
// Mode 1/2: every thread writes its id to shared memory, barrier, thread 0 sums them, barrier.
__device__ __forceinline__ void body_shared(const uint3 b, const dim3 g, const Args& a, unsigned* s) {
  const unsigned t = tid_in_block(), n = blockDim.x * blockDim.y * blockDim.z;
  s[t] = t + b.x;
  __syncthreads();
  spin(a.spin_ns);
  if (t == 0) {
    unsigned long long sum = 0;
    for (unsigned k = 0; k < n; ++k) sum += s[k];
    if (sum != (unsigned long long)n * (n - 1) / 2 + (unsigned long long)n * b.x) atomicAdd(a.err, 1u);
    count_task(b, g, a);
  }
  __syncthreads();
}
// The launch's time on the GPU, stamped by its original workers (test instrumentation around the twin's
// body: resume workers, which may come after the launch ended and leave at once, do not count).
struct Stamp {
  const Args& a;
  const bool on;
  __device__ Stamp(const Args& args, const ::ptb::Launch& L) : a(args), on(!(L.flags & ::ptb::detail::kResume) && tid_in_block() == 0) {
    if (on) atomicMin(&a.span[0], gtimer());
  }
  __device__ ~Stamp() {
    if (on) atomicMax(&a.span[1], gtimer());
  }
};
__global__ void k_plain(Args a) { body_plain(blockIdx, gridDim, a); }
__global__ void k_plain__ptb(Args a, const ::ptb::Launch L) {
  Stamp t(a, L);
  ::ptb::run_tasks<::ptb::TaskSync::none>(L, [&](const uint3 b, const dim3 g) { body_plain(b, g, a); });
}
__global__ void k_static(Args a) {
  __shared__ unsigned s[1024];
  body_shared(blockIdx, gridDim, a, s);
}
__global__ void k_static__ptb(Args a, const ::ptb::Launch L) {
  Stamp t(a, L);
  __shared__ unsigned s[1024];
  ::ptb::run_tasks(L, [&](const uint3 b, const dim3 g) { body_shared(b, g, a, s); });
}
__global__ void k_dynamic(Args a) {
  extern __shared__ unsigned ds[];
  body_shared(blockIdx, gridDim, a, ds);
}
__global__ void k_dynamic__ptb(Args a, const ::ptb::Launch L) {
  Stamp t(a, L);
  extern __shared__ unsigned ds[];
  ::ptb::run_tasks(L, [&](const uint3 b, const dim3 g) { body_shared(b, g, a, ds); });
}

// ---------------------------------------------------------------- cases
struct Rng {
  std::mt19937_64 r;
  explicit Rng(unsigned long long s) : r(s) {}
  unsigned u(unsigned lo, unsigned hi) { return std::uniform_int_distribution<unsigned>(lo, hi)(r); }
  unsigned logu(unsigned lo, unsigned hi) {  // log-uniform
    const double x = std::exp(std::uniform_real_distribution<double>(std::log(lo), std::log(hi + 1.0))(r));
    return std::min(hi, std::max(lo, static_cast<unsigned>(x)));
  }
  bool p(double q) { return std::uniform_real_distribution<double>(0, 1)(r) < q; }
};

constexpr size_t kCounters = size_t(1) << 25;  // per-launch counters of one case (128 MiB)
constexpr size_t kChain = size_t(1) << 21;     // chain values per stream (tasks <= this)
constexpr size_t kSpans = 4096;                // launches of one case at most (1000 x 4 streams)

struct Case {
  unsigned long long seed;
  int mode;        // 0 plain, 1 static shared, 2 dynamic shared
  dim3 grid, block;
  unsigned tasks, threads, spin_ns, streams, chain, replays;  // replays 0: no graph
  bool changing;
  std::string policy_text;
};

static std::string set_text(const ptb::SmSet& s, unsigned nsm) {
  std::string out;
  for (unsigned i = 0; i < nsm;) {
    if (!s.contains(i)) { ++i; continue; }
    unsigned j = i;
    while (j + 1 < nsm && s.contains(j + 1)) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(i) + (j > i ? "-" + std::to_string(j) : "");
    i = j + 1;
  }
  return out.empty() ? "{}" : out;
}

// A random non-empty set of one of the families.
static ptb::SmSet random_set(Rng& g, unsigned nsm) {
  switch (g.u(0, 5)) {
    case 0: return ptb::SmSet::all();
    case 1: { unsigned i = g.u(0, nsm - 1); return ptb::SmSet::range(i, i + 1); }          // one SM
    case 2: { unsigned n = g.u(2, 8), i = g.u(0, nsm - n); return ptb::SmSet::range(i, i + n); }  // a few
    case 3: { unsigned n = g.u(nsm / 2, nsm - 1), i = g.u(0, nsm - n); return ptb::SmSet::range(i, i + n); }
    default: {  // non-contiguous
      ptb::SmSet s;
      const double q = g.p(0.5) ? 0.1 : 0.6;
      for (unsigned i = 0; i < nsm; ++i)
        if (g.p(q)) s = s | ptb::SmSet::range(i, i + 1);
      if (s.empty()) s = ptb::SmSet::range(nsm - 1, nsm);
      return s;
    }
  }
}

static unsigned g_max_tasks = 1000000;  // --max-tasks (smaller cases under compute-sanitizer)
static unsigned g_max_chain = 1000;     // --max-chain (shorter chains under racecheck: its cost is per launch)

static Case make_case(unsigned long long seed) {
  Rng g(seed);
  Case c{};
  c.seed = seed;
  c.mode = static_cast<int>(g.u(0, 2));
  // Block: 16..1024 threads in 1-3 dimensions.
  c.threads = 16 * g.logu(1, 64);
  const int bd = static_cast<int>(g.u(1, 3));
  if (bd == 1) c.block = dim3(c.threads);
  else if (bd == 2) { unsigned y = 1u << g.u(0, 4); while (c.threads % y) y /= 2; c.block = dim3(c.threads / y, y); }
  else { unsigned z = 1u << g.u(0, 2), y = 1u << g.u(0, 2); while (c.threads % (y * z)) { if (z > 1) z /= 2; else y /= 2; }
         c.block = dim3(c.threads / (y * z), y, z); }
  c.changing = g.p(0.3);
  c.streams = g.u(1, 4);
  c.spin_ns = g.p(c.changing ? 0.8 : 0.3) ? g.logu(500, 20000) : 0;
  // Grid: 1..10^6 tasks; chains: 1..1000 launches; bounded so that a case stays within ~10^7 task runs
  // and ~60 ms of spinning per stream.
  c.tasks = std::min(g.logu(1, 1000000), g_max_tasks);
  if (c.spin_ns) c.tasks = std::min(c.tasks, g.logu(1, 20000));
  c.chain = std::min(g.logu(1, 1000), g_max_chain);
  const unsigned long long limit_runs = 10000000ull;
  while (c.chain > 1 && (unsigned long long)c.chain * c.tasks * c.streams > std::min<unsigned long long>(limit_runs, kCounters))
    c.chain /= 2;
  if ((unsigned long long)c.chain * c.tasks * c.streams > kCounters) c.tasks = static_cast<unsigned>(kCounters / (c.chain * c.streams));
  const int gd = static_cast<int>(g.u(1, 3));
  if (gd == 1) c.grid = dim3(c.tasks);
  else if (gd == 2) { unsigned y = std::max(1u, g.logu(1, 1024)); while (c.tasks % y) --y; c.grid = dim3(c.tasks / y, y); }
  else { unsigned z = std::max(1u, g.logu(1, 64)); while (c.tasks % z) --z; unsigned r = c.tasks / z, y = std::max(1u, g.logu(1, 64)); while (r % y) --y;
         c.grid = dim3(r / y, y, z); }
  c.replays = g.p(0.12) ? g.u(1, 3) : 0;
  return c;
}

// ---------------------------------------------------------------- the run
static std::atomic<long> g_progress{0};
// The watchdog's limit, in ms: --hang-seconds, and during a confined run at least twice its whole-case bound
// (a long chain confined to one SM can keep the host in its final synchronize, with no launch call to count
// as progress, for tens of seconds, within its bound: case 7948469754818271575, H100).
static std::atomic<double> g_hang_ms{30000};
static std::atomic<unsigned long long> g_current_seed{0};

struct Timing {
  std::vector<float> device_ms;  // per launch: from its first original worker's start to the last one's exit
                                 // (%globaltimer; what the bound judges)
  std::vector<float> event_ms;   // per launch: between events recorded before and after its launch call
  std::vector<float> host_us;    // per launch: the host's time in the launch call (a slow launch's cause)
  std::vector<unsigned> grew;    // per launch: control blocks the runtime's pool gained during the call
  std::vector<float> lock_us;    // per launch: the wait for the runtime's lock just before the call
  double case_ms = 0;
};

struct Buffers {
  unsigned* cnt = nullptr;
  unsigned* chain[4] = {};
  unsigned* err = nullptr;
  unsigned long long* span = nullptr;  // 2 per launch (Args::span)
};

// Control blocks in the runtime's pool on device 0 (test instrumentation: reads the runtime's state).
static unsigned pool_size() {
  ptb::detail::Runtime& r = ptb::detail::rt();
  std::lock_guard<std::mutex> g(r.__m);
  return r.devs[0] ? r.devs[0]->pool_size() : 0u;
}

static void launch_one(const Case& c, const Args& a, cudaStream_t s, const ptb::Policy& pol) {
  ptb::LaunchConfig cfg(c.grid, c.block, c.mode == 2 ? c.threads * sizeof(unsigned) : 0, s);
  cfg.policy = pol;
  if (c.mode == 0) ptb::launch(cfg, k_plain, k_plain__ptb, a);
  else if (c.mode == 1) ptb::launch(cfg, k_static, k_static__ptb, a);
  else ptb::launch(cfg, k_dynamic, k_dynamic__ptb, a);
}

// Runs the case's launches under `pol` (empty: the process policy); per-launch events unless `whole`.
static Timing run_case(const Case& c, Buffers& b, cudaStream_t* st, const ptb::Policy& pol, bool whole) {
  Timing t;
  const size_t region = c.tasks;
  CK(cudaMemset(b.cnt, 0, sizeof(unsigned) * region * c.chain * c.streams));
  for (unsigned s = 0; s < c.streams; ++s) CK(cudaMemset(b.chain[s], 0, sizeof(unsigned) * region));
  CK(cudaMemset(b.err, 0, sizeof(unsigned)));
  const unsigned n = c.chain * c.streams;
  std::vector<unsigned long long> span(2 * n);
  for (unsigned k = 0; k < n; ++k) span[2 * k] = ~0ull, span[2 * k + 1] = 0;
  CK(cudaMemcpy(b.span, span.data(), span.size() * sizeof(span[0]), cudaMemcpyHostToDevice));
  CK(cudaDeviceSynchronize());
  std::vector<cudaEvent_t> ev;
  if (!whole && !c.replays) {
    ev.resize(2 * n);
    for (auto& e : ev) CK(cudaEventCreate(&e));
    t.host_us.assign(n, 0.f);
    t.grew.assign(n, 0u);
    t.lock_us.assign(n, 0.f);
  }
  const auto t0 = std::chrono::steady_clock::now();
  if (c.replays) {
    std::vector<cudaGraphExec_t> ex(c.streams);
    for (unsigned s = 0; s < c.streams; ++s) {
      CK(cudaStreamBeginCapture(st[s], cudaStreamCaptureModeThreadLocal));
      for (unsigned i = 0; i < c.chain; ++i) {
        Args a{b.cnt + (size_t)(s * c.chain + i) * region, b.chain[s], b.err, c.spin_ns, i, b.span + 2 * (s * c.chain + i)};
        launch_one(c, a, st[s], pol);
      }
      cudaGraph_t gr;
      CK(cudaStreamEndCapture(st[s], &gr));
      CK(cudaGraphInstantiate(&ex[s], gr, 0));
      CK(cudaGraphDestroy(gr));
    }
    // Replays add 1 per replay to every counter; the chain check is off after the first replay (the
    // graph's launches carry the expected values of the first), so chain values are checked at the end.
    for (unsigned r = 0; r < c.replays; ++r)
      for (unsigned s = 0; s < c.streams; ++s) CK(cudaGraphLaunch(ex[s], st[s]));
    for (unsigned s = 0; s < c.streams; ++s) CK(cudaStreamSynchronize(st[s]));
    for (auto& e : ex) CK(cudaGraphExecDestroy(e));
  } else {
    for (unsigned i = 0; i < c.chain; ++i)
      for (unsigned s = 0; s < c.streams; ++s) {
        Args a{b.cnt + (size_t)(s * c.chain + i) * region, b.chain[s], b.err, c.spin_ns, i, b.span + 2 * (s * c.chain + i)};
        if (!ev.empty()) CK(cudaEventRecord(ev[2 * (s * c.chain + i)], st[s]));
        const auto l0 = std::chrono::steady_clock::now();
        const unsigned pool0 = pool_size();  // takes the runtime's lock: a wait for it shows here
        const float lock_wait = std::chrono::duration<float, std::micro>(std::chrono::steady_clock::now() - l0).count();
        const auto h0 = std::chrono::steady_clock::now();
        launch_one(c, a, st[s], pol);
        if (!ev.empty()) {
          t.host_us[s * c.chain + i] = std::chrono::duration<float, std::micro>(std::chrono::steady_clock::now() - h0).count();
          t.grew[s * c.chain + i] = pool_size() - pool0;
          t.lock_us[s * c.chain + i] = lock_wait;
          CK(cudaEventRecord(ev[2 * (s * c.chain + i) + 1], st[s]));
        }
        g_progress.fetch_add(1);
      }
    for (unsigned s = 0; s < c.streams; ++s) CK(cudaStreamSynchronize(st[s]));
  }
  CK(cudaGetLastError());
  t.case_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!ev.empty()) CK(cudaMemcpy(span.data(), b.span, span.size() * sizeof(span[0]), cudaMemcpyDeviceToHost));
  for (size_t k = 0; k < ev.size() / 2; ++k) {
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, ev[2 * k], ev[2 * k + 1]));
    t.event_ms.push_back(ms);
    t.device_ms.push_back(span[2 * k + 1] > span[2 * k] ? (span[2 * k + 1] - span[2 * k]) * 1e-6f : 0.f);
  }
  for (auto& e : ev) CK(cudaEventDestroy(e));
  return t;
}

// Exactly once per task per launch (x replays), chain values, barrier/order errors. Returns errors found.
static unsigned check_case(const Case& c, Buffers& b, const char* what) {
  const size_t region = c.tasks, n = region * c.chain * c.streams;
  std::vector<unsigned> h(n);
  CK(cudaMemcpy(h.data(), b.cnt, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  const unsigned want = c.replays ? c.replays : 1;
  unsigned long long lost = 0, dup = 0;
  for (size_t i = 0; i < n; ++i) {
    if (h[i] < want) lost += want - h[i];
    if (h[i] > want) dup += h[i] - want;
  }
  unsigned bad_chain = 0;
  std::vector<unsigned> hc(region);
  for (unsigned s = 0; s < c.streams; ++s) {
    CK(cudaMemcpy(hc.data(), b.chain[s], region * sizeof(unsigned), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < region; ++i) bad_chain += hc[i] != c.chain * want;
  }
  unsigned err = 0;
  CK(cudaMemcpy(&err, b.err, sizeof(unsigned), cudaMemcpyDeviceToHost));
  if (c.replays) err = 0;  // order errors are expected after the first replay (see run_case)
  if (lost || dup || bad_chain || err)
    std::printf("FAIL seed %llu (%s): %llu task runs lost, %llu duplicated, %u chain values wrong, %u barrier/order errors\n",
                c.seed, what, lost, dup, bad_chain, err);
  return (lost || dup || bad_chain || err) ? 1u : 0u;
}

int main(int argc, char** argv) {
  // 32 hardware queues, as docs/user/guide.md tells a program that makes its policies in code (the runtime
  // asks for them only when PTB_SMS or PTB_BLOCKS_PER_SM confine the process; detail/connections.cuh).
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // a run killed from outside (a sanitizer's time limit) keeps its lines
  unsigned long long seed = std::random_device{}();
  seed = (seed << 32) ^ std::random_device{}();
  unsigned cases = 120, min_launches = 10000, hang_s = 30;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--seed") seed = std::strtoull(argv[i + 1], nullptr, 10);
    else if (a == "--cases") cases = static_cast<unsigned>(std::atoi(argv[i + 1]));
    else if (a == "--min-launches") min_launches = static_cast<unsigned>(std::atoi(argv[i + 1]));
    else if (a == "--max-tasks") g_max_tasks = static_cast<unsigned>(std::atoi(argv[i + 1]));
    else if (a == "--max-chain") g_max_chain = std::max(1, std::atoi(argv[i + 1]));
    else if (a == "--hang-seconds") hang_s = static_cast<unsigned>(std::atoi(argv[i + 1]));
  }
  std::printf("SEED stress %llu\n", seed);
  g_hang_ms = hang_s * 1000.0;
  std::thread([] {
    long last = -1;
    auto since = std::chrono::steady_clock::now();
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      const long p = g_progress.load();
      if (p != last) { last = p; since = std::chrono::steady_clock::now(); continue; }
      const double limit_ms = g_hang_ms.load();
      if (std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count() > limit_ms) {
        std::printf("FAIL seed %llu: HANG, no progress for %.0f s\n", g_current_seed.load(), limit_ms / 1000);
        std::fflush(stdout);
        std::_Exit(3);
      }
    }
  }).detach();

  const std::vector<unsigned> ids = ptb::sm_ids();  // discovery before any long kernel
  const unsigned nsm = ptb::sm_count();
  Buffers b;
  CK(cudaMalloc(&b.cnt, kCounters * sizeof(unsigned)));
  for (auto& c : b.chain) CK(cudaMalloc(&c, kChain * sizeof(unsigned)));
  CK(cudaMalloc(&b.err, sizeof(unsigned)));
  CK(cudaMalloc(&b.span, 2 * kSpans * sizeof(unsigned long long)));
  cudaStream_t st[4];
  for (auto& s : st) CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  unsigned failures = 0, slow = 0, over_set_bound = 0, over_by_events = 0;
  // Launch calls that took the host over 100 us, baseline and confined (is a stall ours, or the host's?).
  unsigned long long long_calls[2] = {0, 0}, timed_calls[2] = {0, 0};
  float longest_call[2] = {0, 0}, longest_lock[2] = {0, 0};
  auto note_calls = [&](const Timing& t, int which) {
    for (float us : t.host_us) {
      ++timed_calls[which];
      if (us > 100.f) ++long_calls[which];
      longest_call[which] = std::max(longest_call[which], us);
    }
    for (float us : t.lock_us) longest_lock[which] = std::max(longest_lock[which], us);
  };
  unsigned long long launches = 0, task_runs = 0;
  double worst = 0;  // largest (time / bound)
  unsigned long long worst_seed = 0;
  const auto start = std::chrono::steady_clock::now();
  unsigned k = 0;
  for (; k < cases || launches < min_launches; ++k) {
    const unsigned long long cs = seed + k;
    g_current_seed = cs;
    Case c = make_case(cs);
    // The confined policy.
    Rng g(cs ^ 0x9e3779b97f4a7c15ull);
    ptb::SmSet set = random_set(g, nsm);
    int occ = 0;
    const void* twin = c.mode == 0 ? (const void*)k_plain__ptb : c.mode == 1 ? (const void*)k_static__ptb : (const void*)k_dynamic__ptb;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, twin, c.threads, c.mode == 2 ? c.threads * 4 : 0));
    unsigned cap = g.p(0.4) ? g.u(1, std::max(1, occ)) : 0;
    if (set == ptb::SmSet::all() && cap == 0 && !c.changing) cap = g.u(1, std::max(1, occ));
    ptb::Policy pol = ptb::Policy::create(set, cap);
    c.policy_text = set_text(set, nsm) + (cap ? " cap " + std::to_string(cap) : "");

    // Baseline: every SM, no cap.
    // The process policy given explicitly: twins in every launch mode but `original` (in the automatic
    // mode a launch under no policy would run the original kernel, which this baseline does not test).
    const Timing base = run_case(c, b, st, ptb::process_policy(), false);
    note_calls(base, 0);
    failures += check_case(c, b, "baseline");

    // Confined, with a changer thread in changing cases.
    // The policy's share of the GPU: its SMs, each counted at cap / occupancy where a cap below the
    // kernel's occupancy applies (a cap of 1 where 32 blocks fit leaves 1/32 of the SM's slots).
    auto capacity = [&](const ptb::SmSet& s, unsigned k) {
      const double sms = std::min(s.count(), nsm);
      return k && k < static_cast<unsigned>(occ) ? sms * k / occ : sms;
    };
    unsigned min_allowed = set.count() ? std::min(set.count(), nsm) : nsm;
    double min_capacity = set.count() ? capacity(set, cap) : nsm;
    double empty_ms = 0;
    std::atomic<bool> stop{false};
    std::mutex mm;
    std::thread changer;
    if (c.changing) {
      changer = std::thread([&, cs] {
        Rng h(cs * 31 + 7);
        while (!stop.load()) {
          std::this_thread::sleep_for(std::chrono::microseconds(h.u(50, 500)));
          if (h.p(0.08)) {  // empty, then refilled
            pol.set(ptb::SmSet::none(), 0);
            const unsigned ms = h.u(1, 3);
            std::this_thread::sleep_for(std::chrono::milliseconds(ms));
            std::lock_guard<std::mutex> g2(mm);
            empty_ms += ms + 0.2;
          }
          ptb::SmSet s2 = random_set(h, nsm);
          const unsigned cap2 = h.p(0.4) ? h.u(1, std::max(1, occ)) : 0;
          pol.set(s2, cap2);
          std::lock_guard<std::mutex> g2(mm);
          min_allowed = std::min(min_allowed, std::min(s2.count(), nsm));
          min_capacity = std::min(min_capacity, s2.count() ? capacity(s2, cap2) : nsm);
        }
        pol.set(ptb::SmSet::all(), 0);
      });
      c.policy_text += " changing";
    }
    {  // the watchdog's limit for this run (g_hang_ms); a changing policy may shrink to one SM at cap 1
      const double share = c.changing ? 1.0 / std::max(1, occ) : min_capacity;
      g_hang_ms = std::max(hang_s * 1000.0, 2 * 10.0 * nsm / std::max(1e-3, share) * base.case_ms);
    }
    const Timing conf = run_case(c, b, st, pol, c.changing);
    g_hang_ms = hang_s * 1000.0;
    note_calls(conf, 1);
    stop = true;
    if (changer.joinable()) changer.join();
    failures += check_case(c, b, "confined");
    pol.set(ptb::SmSet::none(), 0);  // policies live forever; leave no monitor work behind

    // Time bound.
    // Bound: 10 x the baseline x (SMs / the policy's smallest share of them, caps counted). The set-only
    // ratio (caps not counted: the issue's first wording) is reported beside it.
    const double factor = 10.0 * nsm / std::max(1e-3, min_capacity), set_factor = 10.0 * nsm / std::max(1u, min_allowed);
    double ratio = 0, set_ratio = 0;
    std::string worst_launch;
    if (c.changing || c.replays || conf.device_ms.empty()) {
      const double bound = factor * base.case_ms + empty_ms + 1.0;  // host-timed: 1 ms for the host's own jitter
      ratio = conf.case_ms / bound;
      set_ratio = conf.case_ms / (set_factor * base.case_ms + empty_ms + 1.0);
    } else {
      for (size_t i = 0; i < conf.device_ms.size(); ++i) {
        const double r = conf.device_ms[i] / (factor * std::max(base.device_ms[i], 0.002f));
        set_ratio = std::max(set_ratio, conf.device_ms[i] / (set_factor * std::max(base.device_ms[i], 0.002f)));
        // Also by events, the host's launch call included (reported, not judged: such stalls are the host's).
        if (conf.event_ms[i] / (factor * std::max(base.event_ms[i], 0.002f)) > 1.0) ++over_by_events;
        if (r > ratio) {
          ratio = r;
          worst_launch = "launch " + std::to_string(i) + ": " + std::to_string(base.device_ms[i] * 1000) + " us unconfined, " +
                         std::to_string(conf.device_ms[i] * 1000) + " us confined on the GPU (" +
                         std::to_string(conf.event_ms[i] * 1000) + " us between its events, of which the host spent " +
                         std::to_string(conf.host_us[i]) + " us in the launch call and " +
                         std::to_string(conf.lock_us[i]) + " us on the runtime's lock before it" +
                         (conf.grew[i] ? ", and the runtime's pool grew by " + std::to_string(conf.grew[i]) + " control blocks" : "") + ")";
        }
      }
    }
    if (ratio > worst) { worst = ratio; worst_seed = cs; }
    if (set_ratio > 1.0) ++over_set_bound;
    if (ratio > 1.0) {
      ++slow;
      std::printf("FAIL seed %llu: SLOW %.2fx over its bound (%s; %s)\n", cs, ratio, c.policy_text.c_str(),
                  worst_launch.c_str());
    }
    const unsigned nl = c.chain * c.streams * std::max(1u, c.replays);
    launches += nl;
    task_runs += (unsigned long long)nl * c.tasks;
    std::printf("case %u seed %llu: mode %d grid %ux%ux%u block %ux%ux%u spin %u ns, %u stream(s) x %u launch(es)%s | %s | "
                "base %.2f ms, confined %.2f ms, %.2f of bound (%.2f of the set-only bound)\n",
                k, cs, c.mode, c.grid.x, c.grid.y, c.grid.z, c.block.x, c.block.y, c.block.z, c.spin_ns, c.streams, c.chain,
                c.replays ? (" graph x" + std::to_string(c.replays)).c_str() : "", c.policy_text.c_str(), base.case_ms,
                conf.case_ms, ratio, set_ratio);
    std::fflush(stdout);
    g_progress.fetch_add(1);
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("stress: seed %llu, %u cases, %llu launches confined (+ as many baseline), %llu task runs checked, "
              "%u failed checks, %u over the time bound, worst %.2f of bound (seed %llu), %u over the set-only bound, %.1f s\n",
              seed, k, launches, 2 * task_runs, failures, slow, worst, worst_seed, over_set_bound, secs);
  std::printf("stress: launch calls over 100 us on the host: baseline %llu of %llu (longest %.0f us), confined %llu of %llu "
              "(longest %.0f us); longest wait for the runtime's lock before a call: baseline %.0f us, confined %.0f us; "
              "launches over the bound by events (the host's launch call included; not judged): %u\n",
              long_calls[0], timed_calls[0], longest_call[0], long_calls[1], timed_calls[1], longest_call[1], longest_lock[0],
              longest_lock[1], over_by_events);
  if (failures || slow) {
    std::printf("stress: FAIL\n");
    return 1;
  }
  std::printf("stress: PASS\n");
  return 0;
}

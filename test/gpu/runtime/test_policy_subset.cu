// A cap on a subset of a policy's SMs (Policy::set(sms, k, capped); G-Space's k BE workers on n SMs),
// checked on the GPU against what the workers themselves report: each task records the %smid it ran on
// and the worker (the twin's block) that ran it. On every SM of the capped subset at most k distinct
// workers ran tasks; the allowed SMs outside it were not held to k (most ran more than k workers); no
// task ran off the set; every task ran exactly once. Also the allocations the QoS controllers hand BE
// (qos::apply_to_be), including a cap of 0 on the subset (those SMs then run no BE task), and a change of
// the subset while a launch runs.
#include <ptb/ptb.cuh>
#include <ptb/qos/apply.cuh>
#include "common.cuh"
#include <chrono>
#include <functional>
#include <set>
#include <thread>

__device__ __forceinline__ void spin_ns(unsigned ns) {
  const long long t0 = clock64(), cycles = 2ll * ns;
  while (clock64() - t0 < cycles) {
  }
}
__global__ void work(unsigned* cnt, unsigned* where, unsigned* who, unsigned spin) {
  if (threadIdx.x == 0) {
    atomicAdd(&cnt[blockIdx.x], 1u);
    where[blockIdx.x] = ptb::detail::smid();
    who[blockIdx.x] = 0xffffffffu;  // the original has no workers
    spin_ns(spin);
  }
}
// The twin as ptb-transform writes it, with the worker's identity recorded.
__global__ void work__ptb(unsigned* cnt, unsigned* where, unsigned* who, unsigned spin, const ::ptb::Launch ptb_launch) {
  ::ptb::run_tasks(ptb_launch, [&](const uint3 b, const dim3) {
    if (threadIdx.x == 0) {
      atomicAdd(&cnt[b.x], 1u);
      where[b.x] = ptb::detail::smid();
      who[b.x] = blockIdx.x;
      spin_ns(spin);
    }
  });
}
static void work__ptb_launch(const ::ptb::LaunchConfig& c, unsigned* cnt, unsigned* where, unsigned* who, unsigned spin) {
  ::ptb::launch(c, work, work__ptb, cnt, where, who, spin);
}

static unsigned N;                 // SMs
static std::vector<unsigned> RAW;  // dense -> %smid
static unsigned *g_cnt, *g_where, *g_who;
constexpr unsigned kTasks = 20000, kThreads = 128;

struct Seen {
  std::vector<std::set<unsigned>> workers;  // by dense SM index
  unsigned off = 0, not_once = 0;
};
static Seen run(const ptb::Policy& P, unsigned spin_ns_per_task, const std::function<void()>& while_running = nullptr) {
  CK(cudaMemset(g_cnt, 0, kTasks * 4));
  CK(cudaMemset(g_where, 0xff, kTasks * 4));
  CK(cudaMemset(g_who, 0xff, kTasks * 4));
  CK(cudaDeviceSynchronize());
  ptb::LaunchConfig c = ptb::LaunchConfig(dim3(kTasks), dim3(kThreads));
  c.policy = P;
  work__ptb_launch(c, g_cnt, g_where, g_who, spin_ns_per_task);
  CK(cudaGetLastError());
  if (while_running) while_running();
  CK(cudaDeviceSynchronize());
  std::vector<unsigned> cnt(kTasks), where(kTasks), who(kTasks);
  CK(cudaMemcpy(cnt.data(), g_cnt, kTasks * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(where.data(), g_where, kTasks * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(who.data(), g_who, kTasks * 4, cudaMemcpyDeviceToHost));
  std::vector<int> dense(1024, -1);
  for (unsigned i = 0; i < N; ++i) dense[RAW[i]] = static_cast<int>(i);
  Seen s;
  s.workers.resize(N);
  for (unsigned t = 0; t < kTasks; ++t) {
    if (cnt[t] != 1) ++s.not_once;
    const int k = where[t] < 1024 ? dense[where[t]] : -1;
    if (k < 0 || !P.sms().contains(static_cast<unsigned>(k))) { ++s.off; continue; }
    s.workers[k].insert(who[t]);
  }
  return s;
}

// At most k workers on each capped SM of the set, more than k on most allowed uncapped ones, nothing off
// the set, every task once.
static void check(const char* what, const ptb::Policy& P, const Seen& s, unsigned k, const ptb::SmSet& capped) {
  unsigned over = 0, free_sms = 0, free_above_k = 0, idle_capped = 0;
  for (unsigned i = 0; i < N; ++i) {
    if (!P.sms().contains(i)) continue;
    const size_t w = s.workers[i].size();
    if (capped.contains(i)) {
      over += w > k;
      idle_capped += w == 0;
    } else {
      ++free_sms;
      free_above_k += w > k;
    }
  }
  EXPECT(s.not_once == 0, "%s: %u tasks not run exactly once", what, s.not_once);
  EXPECT(s.off == 0, "%s: %u tasks off the set", what, s.off);
  EXPECT(over == 0, "%s: %u capped SMs ran more than %u workers", what, over, k);
  EXPECT(idle_capped == 0, "%s: %u capped SMs ran nothing (the cap is k, not 0)", what, idle_capped);
  EXPECT(free_sms == 0 || 2 * free_above_k > free_sms, "%s: only %u of %u uncapped SMs ran more than %u workers", what,
         free_above_k, free_sms, k);
  std::printf("  %s: %u capped SMs within %u workers, %u of %u uncapped SMs above it\n", what, capped.count(), k,
              free_above_k, free_sms);
}

int main() {
  setvbuf(stdout, nullptr, _IONBF, 0);
  RAW = ptb::sm_ids();
  N = static_cast<unsigned>(RAW.size());
  std::printf("%u SMs\n", N);
  CK(cudaMalloc(&g_cnt, kTasks * 4));
  CK(cudaMalloc(&g_where, kTasks * 4));
  CK(cudaMalloc(&g_who, kTasks * 4));
  using ptb::SmSet;
  const unsigned n = N / 3 & ~1u;

  // G-Space's form: every SM, 2 workers on the lowest n
  ptb::Policy P = ptb::Policy::create(SmSet::all(), 2, SmSet::first(n));
  check("create(all, 2, first n)", P, run(P, 4000), 2, SmSet::first(n));
  // a set and a subset that overlaps it only in part
  P.set(SmSet::range(N / 4, N), 1, SmSet::range(0, N / 2));
  check("set(range, 1, overlapping)", P, run(P, 4000), 1, SmSet::range(N / 4, N / 2));
  // the default subset is all: the cap everywhere, as before
  P.set(SmSet::range(0, N / 2), 3);
  check("set(range, 3)", P, run(P, 4000), 3, SmSet::range(0, N / 2));

  // what apply_to_be does with each kind of allocation
  ptb::qos::Allocation a{0, N, 0, n, 2};
  ptb::qos::apply_allocation(P, a);
  check("gspace allocation (n, 2)", P, run(P, 4000), 2, SmSet::first(n));
  a.shared_cap = 0;  // those SMs are LS's alone: no BE task there
  ptb::qos::apply_allocation(P, a);
  EXPECT(P.sms() == SmSet::range(n, N), "a cap of 0 on the subset leaves BE [n, N), not %s", P.sms().str().c_str());
  check("gspace allocation (n, 0)", P, run(P, 4000), 0, SmSet::none());

  // the subset changes while a launch runs: from (n, 1) to (2n, 1); the workers beyond the cap on the
  // newly capped SMs leave after their task. Only the tasks that started after the change are held to
  // the cap, so this checks exactly-once and that the capped SMs kept working, not the count.
  P.set(SmSet::all(), 1, SmSet::first(n));
  bool was_running = false;
  const Seen moved = run(P, 200000, [&] {  // 200 us tasks: a few ms on the whole GPU
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    was_running = cudaStreamQuery(0) == cudaErrorNotReady;
    P.set(SmSet::all(), 1, SmSet::first(2 * n));
  });
  EXPECT(was_running, "the launch had ended before the subset changed (the check below then proves nothing)");
  EXPECT(moved.not_once == 0 && moved.off == 0, "subset changed while running: %u tasks not once, %u off the set",
         moved.not_once, moved.off);
  std::printf("  subset changed while running: every task once\n");
  // after it, a fresh launch is held to the new subset
  check("after the change (2n, 1)", P, run(P, 4000), 1, SmSet::first(2 * n));
  return finish("test_policy_subset");
}

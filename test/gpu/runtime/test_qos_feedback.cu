// The feedback controller on the GPU (issue 15): an LS service (a 66-block kernel every 500 us in a
// stream of its own, its latency from cudaEvents: ptb::qos::RequestTimer) beside BE work (a chain of PTB
// launches of 20 us tasks under a ptb::Policy, as ptb-transform writes twins), in three phases:
//   solo   LS alone: its p99 latency sets the target (3x it);
//   plain  LS beside BE on every SM, no controller: LS waits for BE's workers;
//   ctl    the same with ptb::qos::EpochLoop + FeedbackController (2 ms epochs, 2 SMs a step) moving SMs
//          from BE's policy to LS.
// Checks: every BE task ran exactly once; under the controller LS's p99 over the phase's second half is
// within 1.5x the target and at most a third of the plain phase's, and BE kept at least 30% of its rate
// of the plain phase. Prints the numbers of each phase and the controller's last allocation.
#include <ptb/ptb.cuh>
#include <ptb/qos/apply.cuh>
#include "common.cuh"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

__device__ __forceinline__ void spin_cycles(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

// Counts a task: once per task id (exactly-once check), in a device counter of all tasks, and every 1024th
// count into host-mapped memory (BE's progress for the epoch loop: a plain store, no system atomics).
__device__ __forceinline__ void count_task(unsigned* cnt, unsigned id, unsigned long long* done,
                                           unsigned long long* seen) {
  atomicAdd(&cnt[id], 1u);
  const unsigned long long v = atomicAdd(done, 1ull) + 1;
  if ((v & 1023) == 0) *static_cast<volatile unsigned long long*>(seen) = v;
}

// BE: each task (block) spins ~20 us in thread 0, then the block counts the task once.
__global__ void be_work(unsigned* cnt, unsigned long long* done, unsigned long long* seen) {
  if (threadIdx.x == 0) spin_cycles(40000);
  __syncthreads();
  if (threadIdx.x == 0) count_task(cnt, blockIdx.x, done, seen);
}
static __device__ __forceinline__ void be_work__ptb_task(const uint3 blockIdx, const dim3, unsigned* cnt,
                                                         unsigned long long* done, unsigned long long* seen) {
  if (threadIdx.x == 0) spin_cycles(40000);
  __syncthreads();
  if (threadIdx.x == 0) count_task(cnt, blockIdx.x, done, seen);
}
__global__ void be_work__ptb(unsigned* cnt, unsigned long long* done, unsigned long long* seen,
                             const ::ptb::Launch ptb_launch) {
  ::ptb::run_tasks(ptb_launch, [&](const uint3 ptb_block, const dim3 ptb_grid) {
    be_work__ptb_task(ptb_block, ptb_grid, cnt, done, seen);
  });
}

// LS: one request is one kernel of 66 blocks of 256 threads, ~30 us each.
__global__ void ls_kernel(float* x) {
  spin_cycles(60000);
  x[blockIdx.x * blockDim.x + threadIdx.x] += 1.0f;
}

namespace {

struct LsClient {  // issues a request every `period` until stopped; latencies go to `log` via `timer`
  ptb::qos::RequestTimer timer;
  std::atomic<bool> stop{false};
  std::thread th;
  void run(cudaStream_t s, float* x, std::chrono::microseconds period) {
    th = std::thread([this, s, x, period] {
      auto next = std::chrono::steady_clock::now();
      while (!stop) {
        CK(timer.begin(s));
        ls_kernel<<<66, 256, 0, s>>>(x);
        CK(timer.end(s));
        next += period;
        std::this_thread::sleep_until(next);
      }
      CK(cudaStreamSynchronize(s));
    });
  }
  void join() {
    stop = true;
    th.join();
  }
};

double p99_of(std::vector<double> v) { return ptb::qos::quantile(v, 0.99); }

}  // namespace

int main() {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device %s, %d SMs\n", prop.name, sms);
  cudaStream_t ls, be;
  CK(cudaStreamCreateWithFlags(&ls, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&be, cudaStreamNonBlocking));
  float* x = nullptr;
  CK(cudaMalloc(&x, 66 * 256 * sizeof(float)));
  CK(cudaMemset(x, 0, 66 * 256 * sizeof(float)));
  unsigned long long *done = nullptr, *seen = nullptr, *seen_dev = nullptr;
  CK(cudaMalloc(&done, sizeof(unsigned long long)));
  CK(cudaMemset(done, 0, sizeof(unsigned long long)));
  CK(cudaHostAlloc(&seen, sizeof(unsigned long long), cudaHostAllocMapped));
  *seen = 0;
  CK(cudaHostGetDevicePointer(&seen_dev, seen, 0));
  const unsigned tasks = 200000;  // per BE launch: 200000 x 20 us / (132 SMs x 16 workers) ~ 2 ms on every SM
  unsigned* cnt = nullptr;
  const int max_launches = 900;
  CK(cudaMalloc(&cnt, sizeof(unsigned) * tasks * max_launches));
  CK(cudaMemset(cnt, 0, sizeof(unsigned) * tasks * max_launches));
  CK(ptb::preload(be_work, be_work__ptb));
  CK(cudaFuncSetAttribute(ls_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 0));  // loads ls_kernel
  ptb::Policy policy = ptb::Policy::create();
  ptb::set_stream_policy(be, policy);
  CK(cudaDeviceSynchronize());

  const auto phase_len = std::chrono::milliseconds(600);
  const auto period = std::chrono::microseconds(500);
  auto be_progress = [&] { return double(*reinterpret_cast<volatile unsigned long long*>(seen)); };

  int not_twin_reports = 0;  // "BE is not PTB" reports of the loop (hooks.be_launches) with twin BE: must be 0

  // BE feeder: keeps up to 2 launches of BE queued until stopped.
  std::atomic<bool> be_stop{false};
  int launches = 0;
  auto be_feed = [&] {
    cudaEvent_t ev[2];
    CK(cudaEventCreateWithFlags(&ev[0], cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&ev[1], cudaEventDisableTiming));
    while (!be_stop && launches < max_launches) {
      cudaEvent_t e = ev[launches % 2];
      if (launches >= 2) CK(cudaEventSynchronize(e));
      ::ptb::launch(ptb::LaunchConfig(dim3(tasks), dim3(128), 0, be), be_work, be_work__ptb,
                    cnt + (size_t)launches * tasks, done, seen_dev);
      CK(cudaGetLastError());
      CK(cudaEventRecord(e, be));
      ++launches;
    }
    CK(cudaStreamSynchronize(be));
    CK(cudaEventDestroy(ev[0]));
    CK(cudaEventDestroy(ev[1]));
  };

  // 1. solo
  ptb::qos::LatencyLog solo_log;
  {
    LsClient c;
    c.run(ls, x, period);
    std::this_thread::sleep_for(phase_len / 2);
    c.join();
    c.timer.poll(solo_log);
  }
  std::vector<double> solo = solo_log.take();
  const double solo_p99 = p99_of(solo), target = 3 * solo_p99;
  std::printf("solo: %zu requests, p99 %.1f us -> target %.1f us\n", solo.size(), solo_p99, target);

  // 2. plain: BE on every SM, no controller
  auto run_phase = [&](bool control, std::vector<double>& second_half, double& be_rate, ptb::qos::Allocation& last,
                       size_t& epochs) {
    policy.set(ptb::SmSet::all());
    be_stop = false;
    std::thread feeder(be_feed);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // BE fills the GPU
    ptb::qos::LatencyLog log;  // the epoch loop's: each epoch takes what was added since the last one
    LsClient c;
    // every finished LS request goes to the loop's log and, with the time it was seen, to the test's record
    std::mutex rm;
    std::vector<std::pair<double, double>> record;  // (seconds since the phase began, latency us)
    const auto t0 = std::chrono::steady_clock::now();
    auto collect = [&] {
      ptb::qos::LatencyLog fresh;
      c.timer.poll(fresh);
      const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::lock_guard<std::mutex> g(rm);
      for (double v : fresh.take()) {
        log.add(v);
        record.emplace_back(t, v);
      }
    };
    ptb::qos::FeedbackConfig cfg;
    cfg.total = unsigned(sms);
    cfg.target = target;
    cfg.step = 2;
    ptb::qos::FeedbackController ctl(cfg);
    ptb::qos::EpochLoop loop(ctl, log,
                             {be_progress, ptb::qos::apply_to_be(policy), collect,
                              [&] { return double(policy.launches()); }},
                             std::chrono::milliseconds(2));
    loop.report_to([&](const std::string& m) {
      std::printf("  loop said: %s\n", m.c_str());
      if (m.find("not twins") != std::string::npos) ++not_twin_reports;
    });
    const double p0 = be_progress();
    c.run(ls, x, period);
    if (control) loop.start();
    while (std::chrono::steady_clock::now() - t0 < phase_len) {  // without the loop, collect here
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      if (!control) collect();
    }
    c.join();
    loop.stop();
    collect();
    const double half = std::chrono::duration<double>(phase_len).count() / 2;
    second_half.clear();
    for (const auto& r : record)
      if (r.first >= half) second_half.push_back(r.second);
    be_rate = (be_progress() - p0) / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    last = ctl.allocation();
    const std::vector<ptb::qos::EpochRecord> hist = loop.history();
    epochs = hist.size();
    if (control) {  // the allocation over time: each change (time, LS/BE/idle SMs, the epoch's LS latency)
      std::printf("allocation changes:");
      ptb::qos::Allocation prev = hist.empty() ? ptb::qos::Allocation{} : hist[0].decided;
      unsigned changes = 0, max_ls = 0, max_idle = 0;
      for (const auto& r : hist) {
        max_ls = std::max(max_ls, r.decided.ls);
        max_idle = std::max(max_idle, r.decided.idle);
        if (r.decided == prev) continue;
        prev = r.decided;
        if (++changes <= 40)
          std::printf(" %.0fms:%u/%u/%u(%.0fus)", 1000 * r.t, r.decided.ls, r.decided.be, r.decided.idle,
                      r.sample.ls_latency);
      }
      std::printf("%s\n  %u changes in %zu epochs; most SMs kept for LS %u, most idle %u; BE's best count %u\n",
                  changes > 40 ? " ..." : "", changes, hist.size(), max_ls, max_idle, ctl.best_be());
    }
    be_stop = true;
    feeder.join();
  };
  std::vector<double> plain_lat, ctl_lat;
  double plain_rate = 0, ctl_rate = 0;
  ptb::qos::Allocation plain_alloc, ctl_alloc;
  size_t plain_epochs = 0, ctl_epochs = 0;
  run_phase(false, plain_lat, plain_rate, plain_alloc, plain_epochs);
  const double plain_p99 = p99_of(plain_lat);
  std::printf("plain: %zu requests in the second half, p99 %.1f us (%.1fx solo); BE %.0f tasks/s\n", plain_lat.size(),
              plain_p99, plain_p99 / solo_p99, plain_rate);
  run_phase(true, ctl_lat, ctl_rate, ctl_alloc, ctl_epochs);
  const double ctl_p99 = p99_of(ctl_lat);
  std::printf("controller: %zu epochs; %zu requests in the second half, p99 %.1f us (%.2fx target, %.1fx solo); "
              "BE %.0f tasks/s (%.0f%% of plain); last allocation: LS %u, BE %u, idle %u SMs\n",
              ctl_epochs, ctl_lat.size(), ctl_p99, ctl_p99 / target, ctl_p99 / solo_p99, ctl_rate,
              100 * ctl_rate / plain_rate, ctl_alloc.ls, ctl_alloc.be, ctl_alloc.idle);
  policy.set(ptb::SmSet::all());
  CK(cudaDeviceSynchronize());

  // exactly once: every task of every launch that ran
  std::vector<unsigned> h((size_t)tasks * launches);
  CK(cudaMemcpy(h.data(), cnt, h.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  size_t bad = 0;
  for (unsigned v : h) bad += v != 1;
  unsigned long long counted = 0;
  CK(cudaMemcpy(&counted, done, sizeof counted, cudaMemcpyDeviceToHost));
  std::printf("BE: %d launches, %zu tasks, %zu not run exactly once; %llu counted\n", launches, h.size(), bad,
              counted);
  EXPECT(bad == 0, "%zu BE tasks not run exactly once", bad);
  // Every BE launch ran as a twin under BE's policy (the stream's), and the loop never took it for non-PTB.
  EXPECT(policy.launches() == (unsigned long long)launches, "policy counted %llu twin launches, %d made",
         policy.launches(), launches);
  EXPECT(not_twin_reports == 0, "the loop reported twin BE work as not PTB %d times", not_twin_reports);

  // 3. BE that is not PTB: the untransformed kernel launched with <<<>>> in a stream with a policy. It makes
  // progress, nothing runs under the policy, and the loop must say so (docs/design/qos.md, "Bad input").
  {
    cudaStream_t be2;
    CK(cudaStreamCreateWithFlags(&be2, cudaStreamNonBlocking));
    ptb::Policy plain_policy = ptb::Policy::create();
    ptb::set_stream_policy(be2, plain_policy);
    unsigned* cnt2 = nullptr;
    unsigned long long* done2 = nullptr;
    CK(cudaMalloc(&cnt2, sizeof(unsigned) * tasks));
    CK(cudaMalloc(&done2, sizeof(unsigned long long)));
    CK(cudaMemset(cnt2, 0, sizeof(unsigned) * tasks));
    CK(cudaMemset(done2, 0, sizeof(unsigned long long)));
    *seen = 0;
    ptb::qos::FeedbackConfig cfg;
    cfg.total = unsigned(sms);
    cfg.target = target;
    ptb::qos::FeedbackController ctl(cfg);
    ptb::qos::LatencyLog log;
    std::vector<std::string> said;
    std::mutex sm;
    ptb::qos::EpochLoop loop(ctl, log,
                             {be_progress, ptb::qos::apply_to_be(plain_policy), nullptr,
                              [&] { return double(plain_policy.launches()); }},
                             std::chrono::milliseconds(2));
    loop.report_to([&](const std::string& m) {
      std::lock_guard<std::mutex> g(sm);
      said.push_back(m);
    });
    be_work<<<tasks, 128, 0, be2>>>(cnt2, done2, seen_dev);  // ~2 ms on every SM: about 2 epochs
    loop.start();
    for (int i = 0; i < 40; ++i) {  // keep BE busy for ~80 ms: 40 epochs
      be_work<<<tasks, 128, 0, be2>>>(cnt2, done2, seen_dev);
      CK(cudaGetLastError());
      CK(cudaStreamSynchronize(be2));
    }
    loop.stop();
    size_t told = 0;
    for (const auto& m : said) {
      std::printf("  loop said (plain BE): %s\n", m.c_str());
      told += m.find("not twins") != std::string::npos;
    }
    std::printf("plain BE: %llu twin launches under its policy, %zu reports that BE is not PTB\n",
                plain_policy.launches(), told);
    EXPECT(plain_policy.launches() == 0, "a <<<>>> launch counted as a twin launch (%llu)", plain_policy.launches());
    EXPECT(told == 1, "the loop reported plain BE as not PTB %zu times (1 expected)", told);
    ptb::set_stream_policy(be2, ptb::Policy());
    CK(cudaFree(cnt2));
    CK(cudaFree(done2));
    CK(cudaStreamDestroy(be2));
  }
  EXPECT(counted == h.size(), "BE counted %llu tasks, launched %zu", counted, h.size());
  EXPECT(!solo.empty() && !plain_lat.empty() && !ctl_lat.empty(), "an LS phase had no requests");
  EXPECT(ctl_p99 <= 1.5 * target, "LS p99 under the controller %.1f us, target %.1f us", ctl_p99, target);
  EXPECT(ctl_p99 * 3 <= plain_p99, "LS p99 under the controller %.1f us, plain %.1f us", ctl_p99, plain_p99);
  EXPECT(ctl_rate >= 0.3 * plain_rate, "BE under the controller %.0f tasks/s, plain %.0f", ctl_rate, plain_rate);
  std::printf("test_qos_feedback: %s\n", g_failures ? "FAIL" : "PASS");
  return g_failures ? 1 : 0;
}

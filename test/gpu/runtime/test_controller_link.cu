// A BE process run with PTB_QOSD follows the controller of its GPU through the segment file, with no
// policy code of its own (runtime/include/ptb/detail/controller_link.cuh). This test plays the controller:
// it creates the segment in a temporary PTB_QOSD_DIR, beats and publishes, and checks what the runtime's
// link thread makes of it: the published SMs (tasks only there), a pause (a launch waits while BE has no
// SM, and finishes when they come back), the safe state when the heartbeat stops (within the lease and a
// poll) and at once on `stopped`, the controller followed again when it comes back, the BE entry's words
// (pid, heartbeat, launches, applied sequence); every task once, outputs exact.
#include <ptb/ptb.cuh>
#include <ptb/qos/segment.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <set>
#include <string>
#include <thread>

#include "common.cuh"
#include "block_check.cuh"
#include "fake_controller.cuh"

namespace shm = ptb::qos::shm;

__device__ __forceinline__ void spin_ns(unsigned ns) {
  const long long t0 = clock64(), cycles = 2ll * ns;
  while (clock64() - t0 < cycles) {
  }
}
__global__ void work(unsigned* cnt, unsigned* where, unsigned spin, unsigned* out) {
  const unsigned id = blockIdx.x;
  if (threadIdx.x == 0) {
    atomicAdd(&cnt[id], 1u);
    where[id] = ptb::detail::smid();
    spin_ns(spin);
  }
  __syncthreads();
  out[id * blockDim.x + threadIdx.x] = id ^ (threadIdx.x << 20);
}
static __device__ __forceinline__ void work__ptb_task(const uint3 blockIdx, const dim3, unsigned* cnt, unsigned* where,
                                                      unsigned spin, unsigned* out) {
  const unsigned id = blockIdx.x;
  if (threadIdx.x == 0) {
    atomicAdd(&cnt[id], 1u);
    where[id] = ptb::detail::smid();
    spin_ns(spin);
  }
  __syncthreads();
  out[id * blockDim.x + threadIdx.x] = id ^ (threadIdx.x << 20);
}
__global__ void work__ptb(unsigned* cnt, unsigned* where, unsigned spin, unsigned* out, const ::ptb::Launch ptb_launch) {
  ::ptb::run_tasks(ptb_launch, [&](const uint3 ptb_block, const dim3 ptb_grid) {
    work__ptb_task(ptb_block, ptb_grid, cnt, where, spin, out);
  });
}

namespace {

constexpr unsigned kBlocks = 2048, kThreads = 128;
unsigned* d_cnt;
unsigned* d_where;
unsigned* d_out;
std::vector<unsigned> RAW; // dense index -> %smid
cudaStream_t stream;

cudaError_t launch_work(unsigned spin) {
  CK(cudaMemsetAsync(d_cnt, 0, kBlocks * sizeof(unsigned), stream));
  CK(cudaMemsetAsync(d_out, 0xff, kBlocks * kThreads * sizeof(unsigned), stream));
  ptb::LaunchConfig c{dim3(kBlocks), dim3(kThreads), 0, stream};
  ptb::launch(c, work, work__ptb, d_cnt, d_where, spin, d_out);
  return cudaGetLastError();
}
// Every task once, outputs exact, and the SMs the tasks ran on; off: tasks outside `allowed`.
unsigned check_run(const ptb::SmSet& allowed, const char* phase) {
  return check_blocks(d_cnt, d_where, d_out, kBlocks, kThreads, RAW, allowed, phase);
}

// Waits until `cond` holds (polling every 100 us) for at most `limit_ms`; the milliseconds it took, or -1.
template <typename Cond>
double wait_for(Cond cond, double limit_ms) {
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (cond()) return ms;
    if (ms > limit_ms) return -1;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

} // namespace

int main() {
  CK(cudaSetDevice(0));
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  RAW = ptb::sm_ids();
  const unsigned total = static_cast<unsigned>(sms);

  // The controller's side.
  FakeController ctl;
  if (!ctl.open("ptb-link-test", total)) return 1;
  const std::uint64_t lease_ns = ctl.lease;
  const shm::PolicyValue& safe = ctl.safe;
  auto publish = [&](const ptb::SmSet& s, unsigned per_sm = 0) { return ctl.publish(s, per_sm); };
  auto entry = [&] { return ctl.entry(); };

  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CK(cudaMalloc(&d_cnt, kBlocks * 4));
  CK(cudaMalloc(&d_where, kBlocks * 4));
  CK(cudaMalloc(&d_out, kBlocks * kThreads * 4));

  // 1. The first launch starts the link; it takes the published SMs [0, total/2).
  const ptb::SmSet half = ptb::SmSet::first(total / 2);
  std::uint64_t seq = publish(half);
  CK(launch_work(2000));
  CK(cudaStreamSynchronize(stream));
  double ms = wait_for([&] { return entry() && entry()->applied_seq.load() == seq; }, 1000);
  EXPECT(ms >= 0, "the link never applied the published policy (no BE entry or sequence)");
  CK(launch_work(2000));
  CK(cudaStreamSynchronize(stream));
  check_run(half, "published half");
  EXPECT(entry() && entry()->launches.load() >= 2, "BE entry counts %llu launches",
         entry() ? (unsigned long long)entry()->launches.load() : 0ull);

  // 2. A pause: no SM; a launch waits, and finishes once SMs come back.
  seq = publish(ptb::SmSet::none());
  EXPECT(wait_for([&] { return entry()->applied_seq.load() == seq; }, 100) >= 0, "pause not applied within 100 ms");
  CK(launch_work(2000));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT(cudaStreamQuery(stream) == cudaErrorNotReady, "a launch ran while BE had no SM");
  const ptb::SmSet upper = ptb::SmSet::range(total / 2, total);
  seq = publish(upper);
  CK(cudaStreamSynchronize(stream));
  check_run(upper, "resumed on the upper half");

  // The link's reaction time: a published policy applied (Policy::set done) by the BE process, 200 times,
  // alternating two policies, with no launch running (the hop a request's yield takes through BE's poller).
  {
    std::vector<double> us;
    for (int __i = 0; __i < 200; ++__i) {
      const auto t0 = std::chrono::steady_clock::now();
      seq = publish(__i % 2 ? half : upper);
      while (entry()->applied_seq.load() != seq) {
      }
      us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(us.begin(), us.end());
    std::printf("  publish -> applied by BE's link: p50 %.1f us, p99 %.1f us, max %.1f us (200, poll %s us)\n", us[100],
                us[197], us[199], std::getenv("PTB_QOSD_POLL_US") ? std::getenv("PTB_QOSD_POLL_US") : "20");
  }

  // 3. The controller dies (its heartbeat stops): the safe state within the lease and a poll.
  ctl.beating = false;
  ms = wait_for([&] { return entry()->safe.load() == 1; }, 1000);
  std::printf("  heartbeat stopped: BE in its safe state after %.1f ms (lease %.0f ms)\n", ms, lease_ns / 1e6);
  EXPECT(ms >= 0 && ms <= lease_ns / 1e6 + 20, "safe state after %.1f ms", ms);
  CK(launch_work(2000));
  CK(cudaStreamSynchronize(stream));
  check_run(safe.sms, "safe state");

  // 4. It comes back: followed again.
  ctl.beating = true;
  seq = publish(half);
  ms = wait_for([&] { return entry()->safe.load() == 0 && entry()->applied_seq.load() == seq; }, 1000);
  std::printf("  heartbeat back: followed again after %.2f ms\n", ms);
  EXPECT(ms >= 0 && ms < 50, "followed again after %.1f ms", ms);
  CK(launch_work(2000));
  CK(cudaStreamSynchronize(stream));
  check_run(half, "followed again");

  // 5. The controller divides BE's SMs among three BE processes (be_share split): this one is part 1 of 3
  //    of every SM, and runs there only; back to the whole policy when the division ends.
  {
    entry()->slice.store(shm::slice_word(1, 3));
    shm::PolicyValue every;
    every.sms = ptb::SmSet::first(total);
    seq = publish(every.sms);
    EXPECT(wait_for([&] { return entry()->applied_seq.load() == seq; }, 100) >= 0, "division not applied in 100 ms");
    const ptb::SmSet part = shm::slice_of(every, shm::slice_word(1, 3), total).sms;
    EXPECT(part.count() == 2 * total / 3 - total / 3, "part 1 of 3 has %u SMs", part.count());
    CK(launch_work(2000));
    CK(cudaStreamSynchronize(stream));
    check_run(part, "part 1 of 3 of every SM");
    entry()->slice.store(0);
    seq = publish(half);
    EXPECT(wait_for([&] { return entry()->applied_seq.load() == seq; }, 100) >= 0, "undivided not applied in 100 ms");
    CK(launch_work(2000));
    CK(cudaStreamSynchronize(stream));
    check_run(half, "undivided again");
  }

  // 6. A clean stop: the safe state at once (one poll).
  ctl.seg->controller.stopped.store(1);
  ms = wait_for([&] { return entry()->safe.load() == 1; }, 1000);
  std::printf("  controller stopped: safe state after %.2f ms\n", ms);
  EXPECT(ms >= 0 && ms < 10, "safe state after %.1f ms", ms);
  CK(launch_work(2000));
  CK(cudaStreamSynchronize(stream));
  check_run(safe.sms, "safe after stop");

  // 7. Heartbeats are the BE process's own too.
  const std::uint64_t beat = entry()->heartbeat_ns.load();
  EXPECT(shm::now_ns() - beat < 50'000'000ull, "BE heartbeat %.1f ms old", (shm::now_ns() - beat) / 1e6);

  return finish("test_controller_link");
}

// The request gate (ptb/qos/request_gate.cuh) under racing requests: BE's policy ends in the state the
// last decision wanted, whichever thread applied it.
//
// The gate decides BE's state under its lock and applies it (Policy::set) outside it, one
// thread at a time; a thread that finds another one applying leaves the newest decision to it. A lost
// decision would leave BE paused with no request in flight (LS idle, BE starved) or running while a
// request is in flight. The test:
//   A. one request alone: while it is in flight BE's policy becomes `during` (no SM, or every SM with a
//      cap of 1 worker per SM), and `between` (every SM, no cap; or a cap of 2 workers
//      per SM between requests: `between_per_sm`) after it ends;
//   B. 6 LS threads, 2,000 requests each, each request a spin kernel of 0-20 us in the thread's stream
//      (some requests launch nothing), random pauses of 0-30 us between requests, while a BE twin keeps
//      running under the policy (4 launches of 52,800 tasks of 200 us); afterwards, with every request
//      ended, BE's policy must be `between` within 100 ms and no request in flight; every BE task ran
//      exactly once per launch (the BE twin's counts). (Six threads keep a request in flight nearly all the
//      time; the gate's floor, 200 ms by default, may release BE: printed, not checked.)
//   C. A again after the storm.
//   D. the two limits apart (since 2026-11-29): one request of 80 ms is held through for `stuck_limit_us`
//      (20 ms: BE `during` at 10 ms), then BE gets `between` while it is still in flight (a release counted), then
//      is held again 2 ms later, the request still in flight, and so on: from 2 releases to one per 21 ms of
//      the request's time (its launch included: slower under a sanitizer), plus one
//      (gate_state.h: a release must not last while the request stays stuck); with the stuck limit out of the
//      way (1 s) and a floor of 30 ms, requests that overlap for 120 ms (LS never idle) are released by the
//      floor at least once.
// Prints PASS or FAIL lines; exit status 1 on a failure.
#include <ptb/ptb.cuh>
#include <ptb/qos/request_gate.cuh>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <utility>

#include "common.cuh"

namespace {

// Spins about ns nanoseconds on the SM's clock (about 2 GHz on the H100).
__device__ __forceinline__ void spin_cycles_ns(long long ns) {
  const long long t0 = clock64(), cycles = 2 * ns;
  while (clock64() - t0 < cycles) {
  }
}
__global__ void spin_ns(long long ns) {
  if (threadIdx.x == 0) spin_cycles_ns(ns);
}

// BE: each task counts its block once and spins a little (so the twin runs long enough to yield)
__global__ void be_kernel(unsigned* counts, long long ns) {
  if (threadIdx.x == 0) {
    atomicAdd(&counts[blockIdx.x], 1u);
    spin_cycles_ns(ns);
  }
}
__global__ void be_kernel__ptb(unsigned* counts, long long ns, const ::ptb::Launch ptb_launch) {
  ::ptb::run_tasks(ptb_launch, [&](const uint3 ptb_block, const dim3) {
    if (threadIdx.x == 0) {
      atomicAdd(&counts[ptb_block.x], 1u);
      spin_cycles_ns(ns);
    }
  });
}

bool wait_for(const ptb::Policy& p, const ptb::SmSet& sms, unsigned per_sm, int ms) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < until) {
    if (p.sms() == sms && p.per_sm() == per_sm) return true;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return p.sms() == sms && p.per_sm() == per_sm;
}

void one_request(ptb::qos::RequestGate& gate, const ptb::Policy& be, cudaStream_t s, const ptb::SmSet& during,
                 unsigned cap, unsigned between_cap, const char* what) {
  gate.begin();
  EXPECT(wait_for(be, during, cap, 50), "%s: BE's policy did not become `during` within 50 ms of begin()", what);
  spin_ns<<<1, 32, 0, s>>>(200000);
  CK(gate.end(s));
  CK(cudaStreamSynchronize(s));
  EXPECT(wait_for(be, ptb::SmSet::all(), between_cap, 100),
         "%s: BE's policy did not come back to `between` within 100 ms", what);
}

}  // namespace

int main() {
  CK(cudaSetDevice(0));
  const ptb::Policy be = ptb::Policy::create();
  cudaStream_t be_stream;
  CK(cudaStreamCreateWithFlags(&be_stream, cudaStreamNonBlocking));
  ptb::set_stream_policy(be_stream, be);

  // (cap while a request is in flight, cap between requests)
  const std::pair<unsigned, unsigned> variants[] = {{0u, 0u}, {1u, 0u}, {0u, 2u}};
  for (const auto& [cap, between_cap] : variants) {
    const ptb::SmSet during = cap ? ptb::SmSet::all() : ptb::SmSet::none();
    ptb::qos::RequestGateOptions o;
    o.during = during;
    o.during_per_sm = cap;
    o.between_per_sm = between_cap;
    ptb::qos::RequestGate gate(be, o);
    cudaStream_t s0;
    CK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
    const std::string a = std::string("A (") + (cap ? "cap 1" : "pause") + (between_cap ? ", between cap 2)" : ")");
    one_request(gate, be, s0, during, cap, between_cap, a.c_str());

    // B: BE running, racing LS requests
    const unsigned be_blocks = 132 * 400;
    unsigned* counts = nullptr;
    CK(cudaMalloc(&counts, be_blocks * sizeof(unsigned)));
    CK(cudaMemset(counts, 0, be_blocks * sizeof(unsigned)));
    ptb::LaunchConfig bc(dim3(be_blocks), dim3(128), 0, be_stream);
    const int be_launches = 4;
    for (int i = 0; i < be_launches; ++i) ptb::launch(bc, be_kernel, be_kernel__ptb, counts, 200000LL);

    const int threads = 6, requests = 2000;
    std::atomic<int> launched{0};
    std::vector<std::thread> ls;
    for (int t = 0; t < threads; ++t)
      ls.emplace_back([&, t] {
        cudaStream_t s;
        CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        std::mt19937_64 r(std::random_device{}() + t);
        for (int i = 0; i < requests; ++i) {
          gate.begin();
          const unsigned k = unsigned(r() % 4);  // 0: a request that launches nothing
          for (unsigned j = 0; j < k; ++j) spin_ns<<<1 + unsigned(r() % 64), 64, 0, s>>>((long long)(r() % 20000));
          if (k) ++launched;
          CK(gate.end(s));
          std::this_thread::sleep_for(std::chrono::microseconds(r() % 30));
        }
        CK(cudaStreamSynchronize(s));
        CK(cudaStreamDestroy(s));
      });
    for (auto& t : ls) t.join();
    EXPECT(wait_for(be, ptb::SmSet::all(), between_cap, 100),
           "B (cap %u, between %u): with every request ended BE's policy is not `between` within 100 ms (in flight: %u)",
           cap, between_cap, gate.in_flight());
    EXPECT(gate.in_flight() == 0, "B (cap %u, between %u): %u requests in flight after all ended", cap, between_cap,
           gate.in_flight());
    CK(cudaStreamSynchronize(be_stream));
    std::vector<unsigned> h(be_blocks);
    CK(cudaMemcpy(h.data(), counts, be_blocks * sizeof(unsigned), cudaMemcpyDeviceToHost));
    unsigned bad = 0;
    for (unsigned c : h) bad += c != unsigned(be_launches);
    EXPECT(bad == 0, "B (cap %u, between %u): %u of %u BE tasks did not run exactly %d times", cap, between_cap, bad,
           be_blocks, be_launches);
    std::printf("B (cap %u, between %u): %d x %d requests (%d launched kernels), %llu yields, %llu releases\n", cap,
                between_cap, threads, requests, launched.load(), gate.yields(), gate.releases());
    CK(cudaFree(counts));

    one_request(gate, be, s0, during, cap, between_cap, ("C" + a.substr(1)).c_str());
    CK(cudaStreamDestroy(s0));
  }
  // D. the stuck limit and the floor, apart
  {
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    ptb::qos::RequestGate gate(be); // stuck limit 20 ms, floor 200 ms
    const auto d0 = std::chrono::steady_clock::now();
    gate.begin();
    spin_ns<<<1, 32, 0, s>>>(80000000LL);
    CK(gate.end(s));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT(be.sms() == ptb::SmSet::none() && gate.releases() == 0,
           "D: 10 ms into an 80 ms request BE is not held (%llu releases)", gate.releases());
    EXPECT(wait_for(be, ptb::SmSet::all(), 0, 40),
           "D: BE did not get `between` within 50 ms of a request stuck in flight (stuck limit 20 ms)");
    EXPECT(gate.in_flight() == 1 && gate.releases() >= 1, "D: after the stuck limit: %u in flight, %llu releases",
           gate.in_flight(), gate.releases());
    EXPECT(wait_for(be, ptb::SmSet::none(), 0, 10),
           "D: BE not held again within 10 ms of the release, the request still in flight");
    CK(cudaStreamSynchronize(s));
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const auto d_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - d0).count();
    EXPECT(gate.in_flight() == 0 && gate.releases() >= 2 && gate.releases() <= static_cast<unsigned long long>(d_ms / 21 + 1),
           "D: after the 80 ms request (%lld ms in flight): %u in flight, %llu releases (from 2 to one per 21 ms)",
           (long long)d_ms, gate.in_flight(), gate.releases());
    const unsigned long long stuck_releases = gate.releases();

    ptb::qos::RequestGateOptions o;
    o.stuck_limit_us = 1000000;
    o.hold_limit_us = 30000;
    ptb::qos::RequestGate floor_gate(be, o);
    const auto t0 = std::chrono::steady_clock::now();
    floor_gate.begin(); // each next request begins before the one before ends: LS is never idle
    while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(120)) {
      spin_ns<<<1, 32, 0, s>>>(2000000LL);
      floor_gate.begin();
      CK(floor_gate.end(s));
      CK(cudaStreamSynchronize(s));
    }
    spin_ns<<<1, 32, 0, s>>>(1000LL);
    CK(floor_gate.end(s));
    CK(cudaStreamSynchronize(s));
    EXPECT(floor_gate.releases() >= 1, "D: 120 ms of LS never idle and a floor of 30 ms: %llu releases",
           floor_gate.releases());
    EXPECT(wait_for(be, ptb::SmSet::all(), 0, 100), "D: BE's policy not `between` after the last request");
    std::printf("D: an 80 ms request: %llu releases by the 20 ms stuck limit; LS never idle for 120 ms: %llu "
                "releases by the 30 ms floor\n",
                stuck_releases, floor_gate.releases());
    CK(cudaStreamDestroy(s));
  }
  CK(cudaGetLastError());
  std::printf(g_failures ? "FAIL test_request_gate: %d failures\n" : "PASS test_request_gate\n", g_failures);
  return g_failures ? 1 : 0;
}

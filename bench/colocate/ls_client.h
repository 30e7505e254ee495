// bench/colocate/ls_client.h: the latency-sensitive (LS) service and its open-loop client. Plain CUDA:
// ptb-transform never sees it (the LS kernels run as written, wherever BE leaves room).
//
// One LS request is a small inference-like chain in one stream: `layers` times a tiled fp32 GEMM
// (n x n x n, 16 x 16 tiles in shared memory) and a bias + ReLU, then a residual add: 2 * layers + 1
// kernels, a few hundred microseconds alone on an H100 (the defaults: n = 256, 16 layers). By default the
// chain is a CUDA graph, captured once per stream and launched whole, as inference servers run such
// chains: the first run on the H100 issued the 33 launches one by one and the issuing thread
// was the bottleneck (host lag p99 290-2200 us alone, against ~180 us on the device). `graph = false`
// issues the launches one by one.
//
// The client (LsClient) issues requests at given arrival times (Poisson: exponential gaps from a seeded
// generator, made by poisson_arrivals) from one host thread, each into an idle stream of a small pool,
// so that requests do not queue behind each other in one stream. A request's latency is
//     host lag   (when the issuing thread recorded its first event) - (its arrival time), host clock;
//                non-zero when the thread fell behind or every stream of the pool was busy; recorded in
//                its parts (LsResult: wake, slot, begin)
//   + device     a cudaEvent pair around its launches (cudaEventElapsedTime: the GPU's clock)
// in microseconds. poll() collects finished requests without waiting for the device (the epoch loop's
// collect hook calls it); drain() waits for the rest.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <ptb/qos/epoch_loop.h>      // ptb::qos::LatencyLog (plain C++)

#include "util.h"

namespace colo {

// The LS service's data: weights and the input (shared, read only) and one set of buffers per stream.
class LsService {
 public:
  LsService(int n, int layers, int streams, bool graph = true);
  ~LsService();
  LsService(const LsService&) = delete;
  LsService& operator=(const LsService&) = delete;

  int n() const { return n_; }
  int layers() const { return layers_; }
  int streams() const { return int(slots_.size()); }
  int kernels_per_request() const { return 2 * layers_ + 1; }
  // The pool's streams: plain ones, or ones at the device's highest priority.
  cudaStream_t stream(int slot, bool high_priority) const {
    return high_priority ? slots_[size_t(slot)].high : slots_[size_t(slot)].plain;
  }
  bool graph() const { return !execs_.empty(); }
  // One request's launches into `s` (the graph of `slot`, or its launches), with buffers of `slot`
  // (asynchronous; no events).
  void issue(int slot, cudaStream_t s);
  // Poison every slot's output (NaN), before a measurement.
  void poison_outputs();
  // Each slot that served a request since poison_outputs() holds the CPU reference's result (relative
  // error <= 1e-3 everywhere); "" when right, else the first difference. `used`: slots to check.
  std::string check_outputs(const std::vector<bool>& used);

 private:
  struct Slot {
    cudaStream_t plain = nullptr, high = nullptr;
    float *h0 = nullptr, *h1 = nullptr, *tmp = nullptr, *out = nullptr;
  };
  int n_, layers_;
  float *x_ = nullptr, *w_ = nullptr, *bias_ = nullptr;  // input n x n; weights layers x n x n; bias layers x n
  std::vector<Slot> slots_;
  std::vector<cudaGraphExec_t> execs_;  // one request per slot, as a graph (empty: launches one by one)
  std::vector<float> reference_;
  void launch_chain(int slot, cudaStream_t s);  // the request's output, computed on the CPU once
};

// Arrival times (seconds from the client's start) of a Poisson process of `rate` per second on [0, duration).
std::vector<double> poisson_arrivals(double rate, double duration, uint64_t seed);

// One finished request.
struct LsResult {
  double arrival_s;  // its arrival time, seconds from the client's start
  double lag_us;     // host lag (issue - arrival) = wake_us + slot_us + begin_us
  double device_us;  // first event to last event, on the GPU's clock
  // The host lag's parts: how late the issuing thread saw the arrival (behind an earlier request, or
  // woken late), its search for an idle stream (cudaEventQuery calls, and waits while all were busy),
  // and the policy's begin() hook. launch_us: the host time of the request's launch calls (its begin
  // event, the graph launch, its end event), which the device time covers when the stream was idle.
  double wake_us = 0, slot_us = 0, begin_us = 0, launch_us = 0;
  double latency_us() const { return lag_us + device_us; }
};

// What a policy that must know of each LS request sees (the request gate, the Tacker manager): begin()
// before the request's launches, end(stream) after them.
class RequestHooks {
 public:
  virtual ~RequestHooks() = default;
  virtual void begin() = 0;
  virtual cudaError_t end(cudaStream_t s) = 0;
};

class LsClient {
 public:
  // cudaEvents for `max_requests` requests (two each) are made now, more by start() when a run needs them;
  // runs reuse them.
  LsClient(LsService& svc, size_t max_requests);
  ~LsClient();
  LsClient(const LsClient&) = delete;
  LsClient& operator=(const LsClient&) = delete;

  // Issue requests at `arrivals` (seconds from now) on a thread of its own, into the pool's streams
  // (high priority or plain); with hooks, each request is framed by hooks->begin() (its time counts as
  // host lag) and hooks->end(stream). Results of an earlier run are dropped.
  void start(const std::vector<double>& arrivals, bool high_priority, RequestHooks* hooks = nullptr);
  // How the issuing thread waits for an arrival: it sleeps until `us` before it, then spins (reads the
  // clock). 1000 by default (it was 100: docs/results/colocate.md, "The LS client's host
  // lag"): a sleeping thread on the lent machines woke more than 100 us late at the p99.
  void set_spin_us(unsigned us) { spin_us_ = us; }
  unsigned spin_us() const { return spin_us_; }
  // Every request issued (returns when the last arrival has been issued).
  void join();
  // Finished requests since the last poll: to `results()` and, latency in us, to `log` if given.
  // Never waits for the device; any thread.
  size_t poll(ptb::qos::LatencyLog* log = nullptr);
  // join(), then poll until every request has finished (BE may still be running: no device-wide wait);
  // exits with a message if some request has not finished after `timeout_s`.
  // `stuck` (if given) prints what the caller knows before the exit.
  void drain(double timeout_s = 10, const std::function<void()>& stuck = nullptr);
  const std::vector<LsResult>& results() const { return results_; }
  const std::vector<bool>& slots_used() const { return used_; }
  // Mean device latency of `count` requests issued back to back into one stream (each after the previous
  // has finished on the device, but without host gaps between them: one sync at the end), microseconds.
  double back_to_back_us(int count);

 private:
  struct Req {
    double arrival_s = 0, issue_s = 0;
    double wake_s = 0, slot_s = 0, launched_s = 0;  // when the thread saw the arrival, had a stream, had launched
    cudaEvent_t begin = nullptr, end = nullptr;
  };
  void run(bool high_priority, RequestHooks* hooks);
  LsService& svc_;
  std::vector<cudaEvent_t> events_;
  std::vector<double> arrivals_;
  std::vector<Req> reqs_;
  std::vector<cudaEvent_t> last_end_;  // per slot: the end event of its last request (nullptr: idle)
  std::vector<bool> used_;
  std::mutex m_;                   // guards pending_, results_, issued_
  std::vector<size_t> pending_;    // issued, not yet seen finished
  std::vector<LsResult> results_;
  std::thread th_;
  Clock::time_point t0_;
  unsigned spin_us_ = 1000;
};

}  // namespace colo

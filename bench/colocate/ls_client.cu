// bench/colocate/ls_client.cu: the LS service's kernels and the open-loop client (ls_client.h). Plain
// CUDA, never transformed.
#include "ls_client.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace colo {
namespace {

constexpr int kTile = 16;

// C = A B, all n x n row-major, n a multiple of 16: one 16 x 16 output tile per block, the K dimension in
// 16-wide steps through shared memory.
__global__ void ls_gemm(const float* A, const float* B, float* C, int n) {
  __shared__ float as[kTile][kTile], bs[kTile][kTile];
  const int r = blockIdx.y * kTile + threadIdx.y, c = blockIdx.x * kTile + threadIdx.x;
  float acc = 0.f;
  for (int k0 = 0; k0 < n; k0 += kTile) {
    as[threadIdx.y][threadIdx.x] = A[size_t(r) * n + k0 + threadIdx.x];
    bs[threadIdx.y][threadIdx.x] = B[size_t(k0 + threadIdx.y) * n + c];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kTile; ++k) acc += as[threadIdx.y][k] * bs[k][threadIdx.x];
    __syncthreads();
  }
  C[size_t(r) * n + c] = acc;
}

// y = max(x + bias[column], 0)
__global__ void ls_bias_relu(const float* x, const float* bias, float* y, int n) {
  const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < size_t(n) * n) y[i] = fmaxf(x[i] + bias[i % n], 0.f);
}

// y = a + b
__global__ void ls_residual(const float* a, const float* b, float* y, size_t count) {
  const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) y[i] = a[i] + b[i];
}

}  // namespace

LsService::LsService(int n, int layers, int streams, bool graph) : n_(n), layers_(layers), slots_(size_t(streams)) {
  if (n % kTile != 0 || n <= 0 || layers <= 0 || streams <= 0) {
    std::fprintf(stderr, "colocate: LS n must be a positive multiple of 16, layers and streams positive\n");
    std::exit(2);
  }
  const size_t nn = size_t(n) * n;
  std::mt19937 g(12345);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  // weights scaled so that the activations keep their size through the layers (ReLU halves the variance)
  const float ws = std::sqrt(6.f / float(n));
  std::vector<float> x(nn), w(nn * size_t(layers)), bias(size_t(n) * size_t(layers));
  for (auto& v : x) v = u(g);
  for (auto& v : w) v = ws * u(g);
  for (auto& v : bias) v = 0.1f * u(g);
  CK(cudaMalloc(&x_, nn * sizeof(float)));
  CK(cudaMalloc(&w_, w.size() * sizeof(float)));
  CK(cudaMalloc(&bias_, bias.size() * sizeof(float)));
  CK(cudaMemcpy(x_, x.data(), nn * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(w_, w.data(), w.size() * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(bias_, bias.data(), bias.size() * sizeof(float), cudaMemcpyHostToDevice));
  int lo = 0, hi = 0;
  CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));  // hi: the highest priority (numerically lowest)
  for (auto& s : slots_) {
    CK(cudaStreamCreateWithFlags(&s.plain, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithPriority(&s.high, cudaStreamNonBlocking, hi));
    for (float** p : {&s.h0, &s.h1, &s.tmp, &s.out}) CK(cudaMalloc(p, nn * sizeof(float)));
  }
  // The CPU reference of one request (double accumulation; the GPU's float sums differ by rounding only).
  std::vector<double> h(x.begin(), x.end()), t(nn);
  for (int l = 0; l < layers; ++l) {
    const float* W = &w[nn * size_t(l)];
    std::fill(t.begin(), t.end(), 0.0);
    for (int r = 0; r < n; ++r)
      for (int k = 0; k < n; ++k) {
        const double a = h[size_t(r) * n + k];
        const float* wr = W + size_t(k) * n;
        double* tr = &t[size_t(r) * n];
        for (int c = 0; c < n; ++c) tr[c] += a * wr[c];
      }
    for (size_t i = 0; i < nn; ++i) h[i] = std::max(t[i] + bias[size_t(l) * n + i % size_t(n)], 0.0);
  }
  reference_.resize(nn);
  for (size_t i = 0; i < nn; ++i) reference_[i] = float(h[i] + x[i]);
  if (!graph) return;
  // Each slot's request as a graph, captured in the slot's own stream (the graph can then be launched
  // into the slot's plain or high-priority stream: its kernels take the priority of the stream).
  for (int k = 0; k < streams; ++k) {
    cudaStream_t s = slots_[size_t(k)].plain;
    cudaGraph_t g = nullptr;
    cudaGraphExec_t e = nullptr;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    launch_chain(k, s);
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&e, g, 0));
    CK(cudaGraphDestroy(g));
    execs_.push_back(e);
  }
}

LsService::~LsService() {
  for (cudaGraphExec_t e : execs_) cudaGraphExecDestroy(e);
  for (auto& s : slots_) {
    cudaStreamDestroy(s.plain);
    cudaStreamDestroy(s.high);
    for (float* p : {s.h0, s.h1, s.tmp, s.out}) cudaFree(p);
  }
  cudaFree(x_);
  cudaFree(w_);
  cudaFree(bias_);
}

void LsService::issue(int slot, cudaStream_t s) {
  if (!execs_.empty()) {
    CK(cudaGraphLaunch(execs_[size_t(slot)], s));
    return;
  }
  launch_chain(slot, s);
}

void LsService::launch_chain(int slot, cudaStream_t s) {
  Slot& b = slots_[size_t(slot)];
  const size_t nn = size_t(n_) * n_;
  const dim3 tiles(unsigned(n_ / kTile), unsigned(n_ / kTile)), tile(kTile, kTile);
  const unsigned ew = unsigned((nn + 255) / 256);
  const float* in = x_;
  float* h[2] = {b.h0, b.h1};
  for (int l = 0; l < layers_; ++l) {
    ls_gemm<<<tiles, tile, 0, s>>>(in, w_ + nn * size_t(l), b.tmp, n_);
    ls_bias_relu<<<ew, 256, 0, s>>>(b.tmp, bias_ + size_t(n_) * size_t(l), h[l % 2], n_);
    in = h[l % 2];
  }
  ls_residual<<<ew, 256, 0, s>>>(in, x_, b.out, nn);
}

void LsService::poison_outputs() {
  for (auto& s : slots_) CK(cudaMemset(s.out, 0xff, size_t(n_) * n_ * sizeof(float)));
  CK(cudaDeviceSynchronize());
}

std::string LsService::check_outputs(const std::vector<bool>& used) {
  CK(cudaDeviceSynchronize());
  std::vector<float> h(reference_.size());
  for (size_t k = 0; k < slots_.size(); ++k) {
    if (k >= used.size() || !used[k]) continue;
    CK(cudaMemcpy(h.data(), slots_[k].out, h.size() * sizeof(float), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < h.size(); ++i) {
      const float want = reference_[i];
      if (!(std::fabs(h[i] - want) <= 1e-3f * std::max(1.f, std::fabs(want)))) {
        char m[160];
        std::snprintf(m, sizeof m, "LS output of stream %zu [%zu] = %.7g, reference %.7g", k, i, h[i], want);
        return m;
      }
    }
  }
  return "";
}

std::vector<double> poisson_arrivals(double rate, double duration, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::exponential_distribution<double> gap(rate);
  std::vector<double> t;
  for (double now = gap(g); now < duration; now += gap(g)) t.push_back(now);
  return t;
}

LsClient::LsClient(LsService& svc, size_t max_requests)
    : svc_(svc), events_(2 * max_requests), last_end_(size_t(svc.streams()), nullptr), used_(size_t(svc.streams())) {
  for (auto& e : events_) CK(cudaEventCreate(&e));
}

LsClient::~LsClient() {
  if (th_.joinable()) th_.join();
  for (auto& e : events_) cudaEventDestroy(e);
}

void LsClient::start(const std::vector<double>& arrivals, bool high_priority, RequestHooks* hooks) {
  while (events_.size() < 2 * arrivals.size()) {  // more requests than ever before: more events
    cudaEvent_t e = nullptr;
    CK(cudaEventCreate(&e));
    events_.push_back(e);
  }
  arrivals_ = arrivals;
  reqs_.assign(arrivals.size(), Req{});
  for (size_t i = 0; i < reqs_.size(); ++i) {
    reqs_[i].arrival_s = arrivals[i];
    reqs_[i].begin = events_[2 * i];
    reqs_[i].end = events_[2 * i + 1];
  }
  std::fill(last_end_.begin(), last_end_.end(), nullptr);
  std::fill(used_.begin(), used_.end(), false);
  {
    std::lock_guard<std::mutex> g(m_);
    pending_.clear();
    results_.clear();
  }
  t0_ = Clock::now() + std::chrono::milliseconds(1);
  const CUcontext ctx = current_context();  // util.h
  th_ = std::thread([this, high_priority, hooks, ctx] {
    adopt_context(ctx, "the LS request thread");
    run(high_priority, hooks);
  });
}

void LsClient::run(bool high_priority, RequestHooks* hooks) {
  const int S = svc_.streams();
  int next = 0;
  for (size_t i = 0; i < reqs_.size(); ++i) {
    Req& r = reqs_[i];
    // wait for the arrival: sleep to spin_us_ before it, then spin (a sleep wakes late: by 50-100 us on
    // the first machines, more at the p99 on later ones)
    const auto due = t0_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(r.arrival_s));
    const auto spin = std::chrono::microseconds(spin_us_);
    if (Clock::now() < due - spin) std::this_thread::sleep_until(due - spin);
    while (Clock::now() < due) {
    }
    r.wake_s = seconds_since(t0_);
    // the first idle stream from `next` on; none idle: wait (that wait is host lag)
    int slot = -1;
    while (slot < 0) {
      for (int k = 0; k < S && slot < 0; ++k) {
        const int s = (next + k) % S;
        if (!last_end_[size_t(s)] || cudaEventQuery(last_end_[size_t(s)]) == cudaSuccess) slot = s;
      }
      if (slot < 0) std::this_thread::yield();
    }
    next = (slot + 1) % S;
    r.slot_s = seconds_since(t0_);
    const cudaStream_t st = svc_.stream(slot, high_priority);
    if (hooks) hooks->begin();  // e.g. BE yields (when first in flight) before the request's launches
    r.issue_s = seconds_since(t0_);
    CK(cudaEventRecord(r.begin, st));
    svc_.issue(slot, st);
    CK(cudaGetLastError());
    CK(cudaEventRecord(r.end, st));
    r.launched_s = seconds_since(t0_);
    if (hooks) CK(hooks->end(st));
    last_end_[size_t(slot)] = r.end;
    used_[size_t(slot)] = true;
    std::lock_guard<std::mutex> g(m_);
    pending_.push_back(i);
  }
}

void LsClient::join() {
  if (th_.joinable()) th_.join();
}

size_t LsClient::poll(ptb::qos::LatencyLog* log) {
  std::lock_guard<std::mutex> g(m_);
  size_t n = 0;
  for (size_t k = 0; k < pending_.size();) {
    const Req& r = reqs_[pending_[k]];
    const cudaError_t q = cudaEventQuery(r.end);
    if (q == cudaErrorNotReady) {
      ++k;
      continue;
    }
    CK(q);
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, r.begin, r.end));
    LsResult res{r.arrival_s, 1e6 * (r.issue_s - r.arrival_s), 1000.0 * double(ms)};
    res.wake_us = 1e6 * (r.wake_s - r.arrival_s);
    res.slot_us = 1e6 * (r.slot_s - r.wake_s);
    res.begin_us = 1e6 * (r.issue_s - r.slot_s);
    res.launch_us = 1e6 * (r.launched_s - r.issue_s);
    results_.push_back(res);
    if (log) log->add(res.latency_us());
    pending_[k] = pending_.back();
    pending_.pop_back();
    ++n;
  }
  return n;
}

void LsClient::drain(double timeout_s, const std::function<void()>& stuck) {
  join();
  const auto t = Clock::now();
  for (;;) {
    poll();
    {
      std::lock_guard<std::mutex> g(m_);
      if (pending_.empty()) return;
      if (seconds_since(t) > timeout_s) {
        std::fprintf(stderr, "colocate: %zu LS requests unfinished %.0f s after the last was issued\n",
                     pending_.size(), timeout_s);
        for (size_t i : pending_) {  // started on the device (its begin event passed) or not
          const Req& r = reqs_[i];
          std::fprintf(stderr, "  request %zu: arrival %.6f s, issued %.6f s, begin event %s, end event %s\n", i,
                       r.arrival_s, r.issue_s, cudaGetErrorName(cudaEventQuery(r.begin)),
                       cudaGetErrorName(cudaEventQuery(r.end)));
        }
        if (stuck) stuck();
        std::exit(3);
      }
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

double LsClient::back_to_back_us(int count) {
  const cudaStream_t s = svc_.stream(0, false);
  cudaEvent_t a = events_[0], b = events_[1];
  CK(cudaEventRecord(a, s));
  for (int i = 0; i < count; ++i) svc_.issue(0, s);
  CK(cudaGetLastError());
  CK(cudaEventRecord(b, s));
  CK(cudaEventSynchronize(b));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, a, b));
  used_[0] = true;
  return 1000.0 * double(ms) / count;
}

}  // namespace colo

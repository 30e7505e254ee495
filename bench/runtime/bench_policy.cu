// Confinement and yield: a compute-bound PTB kernel on k of N SMs vs N/k, per-SM caps, and the time from
// the host's request to shrink the SM set to the last task ending on the removed SMs.
#include <ptb/ptb.cuh>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <thread>
#include <vector>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("CUDA %s at %d: %s\n", #x, __LINE__, cudaGetErrorString(e)); std::exit(1); } } while (0)

// compute-bound: 4 independent FMA chains per thread
__global__ void fma4(int iters, float* out, unsigned* where) {
  float a = threadIdx.x * 1e-3f, b = a + 1, c = a + 2, d = a + 3;
  for (int k = 0; k < iters; ++k) {
    a = a * 0.9999f + 0.5f; b = b * 0.9999f + 0.5f; c = c * 0.9999f + 0.5f; d = d * 0.9999f + 0.5f;
  }
  if (a + b + c + d == 1234.5f) out[blockIdx.x] = a;  // keeps the chain, never true in practice
  if (threadIdx.x == 0) where[blockIdx.x] = ptb::detail::smid();
}
static __device__ __forceinline__ void fma4__ptb_task(const uint3 blockIdx, const dim3 gridDim, int iters, float* out, unsigned* where) {
  float a = threadIdx.x * 1e-3f, b = a + 1, c = a + 2, d = a + 3;
  for (int k = 0; k < iters; ++k) {
    a = a * 0.9999f + 0.5f; b = b * 0.9999f + 0.5f; c = c * 0.9999f + 0.5f; d = d * 0.9999f + 0.5f;
  }
  if (a + b + c + d == 1234.5f) out[blockIdx.x] = a;
  if (threadIdx.x == 0) where[blockIdx.x] = ptb::detail::smid();
}
__global__ void fma4__ptb(int iters, float* out, unsigned* where, const ::ptb::Launch ptb_launch) {
  ::ptb::run_tasks(ptb_launch, [&](const uint3 ptb_block, const dim3 ptb_grid) { fma4__ptb_task(ptb_block, ptb_grid, iters, out, where); });
}

// tasks of a fixed duration (thread 0 spins on %globaltimer, the others wait at a barrier)
__global__ void timed(unsigned ns) {
  if (threadIdx.x == 0) { const unsigned long long t0 = ptb::detail::globaltimer(); while (ptb::detail::globaltimer() - t0 < ns) {} }
  __syncthreads();
}
static __device__ __forceinline__ void timed__ptb_task(const uint3 blockIdx, const dim3 gridDim, unsigned ns) {
  if (threadIdx.x == 0) { const unsigned long long t0 = ptb::detail::globaltimer(); while (ptb::detail::globaltimer() - t0 < ns) {} }
  __syncthreads();
}
__global__ void timed__ptb(unsigned ns, const ::ptb::Launch ptb_launch) {
  ::ptb::run_tasks(ptb_launch, [&](const uint3 ptb_block, const dim3 ptb_grid) { timed__ptb_task(ptb_block, ptb_grid, ns); });
}
// one thread publishing %globaltimer to host-mapped memory until told to stop
__global__ void clock_pub(volatile unsigned long long* t, volatile unsigned* stop) {
  while (!*stop) { *t = ptb::detail::globaltimer(); __nanosleep(200); }
}

int main() {
  setvbuf(stdout, nullptr, _IONBF, 0);
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  const std::vector<unsigned> raw = ptb::sm_ids();
  const unsigned N = (unsigned)raw.size();
  std::printf("device %s, %u SMs\n", p.name, N);
  const unsigned tasks = N * 8 * 40;
  float* out; unsigned* where;
  CK(cudaMalloc(&out, tasks * 4));
  CK(cudaMalloc(&where, tasks * 4));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  ptb::Policy P = ptb::Policy::create();
  auto run = [&](int reps) {
    std::vector<float> ts;
    for (int r = 0; r < reps; ++r) {
      ptb::LaunchConfig c(dim3(tasks), dim3(256));
      c.policy = P;
      CK(cudaEventRecord(a));
      ::ptb::launch(c, fma4, fma4__ptb, 2048, out, where);
      CK(cudaEventRecord(b));
      CK(cudaEventSynchronize(b));
      float ms; CK(cudaEventElapsedTime(&ms, a, b)); ts.push_back(ms);
    }
    CK(cudaGetLastError());
    std::sort(ts.begin(), ts.end());
    return ts[ts.size() / 2];
  };
  ::ptb::set_launch_mode(::ptb::LaunchMode::original);
  run(2);
  const float torig = run(7);
  ::ptb::set_launch_mode(::ptb::LaunchMode::ptb);
  P.set(ptb::SmSet::all());
  run(2);
  const float tall = run(7);
  std::printf("compute-bound, %u tasks: original %.3f ms, PTB all %u SMs %.3f ms (%.3fx)\n", tasks, torig, N, tall, tall / torig);
  std::printf("%-22s %9s %9s %9s %9s %s\n", "SM set", "ms", "T/T_all", "N/k", "ratio", "tasks off the set");
  for (unsigned k : {N, N * 3 / 4, N / 2, N / 4, N / 8}) {
    const ptb::SmSet s = ptb::SmSet::first(k);
    P.set(s);
    const float t = run(5);
    std::vector<unsigned> w(tasks);
    CK(cudaMemcpy(w.data(), where, tasks * 4, cudaMemcpyDeviceToHost));
    std::set<unsigned> ok;
    for (unsigned i = 0; i < k; ++i) ok.insert(raw[i]);
    unsigned off = 0;
    for (unsigned x : w) off += !ok.count(x);
    char name[32]; std::snprintf(name, sizeof name, "first %u", k);
    std::printf("%-22s %9.3f %9.3f %9.3f %9.3f %u/%u\n", name, t, t / tall, (double)N / k, (t / tall) / ((double)N / k), off, tasks);
  }
  for (unsigned cap : {4u, 2u, 1u}) {
    P.set(ptb::SmSet::all(), cap);
    const float t = run(5);
    std::printf("all SMs, cap %u/SM      %9.3f %9.3f   (8 workers/SM fit)\n", cap, t, t / tall);
  }
  P.set(ptb::SmSet::all());

  // ---- yield latency
  unsigned long long* ht; unsigned* hs;
  CK(cudaHostAlloc(&ht, 8, cudaHostAllocMapped)); CK(cudaHostAlloc(&hs, 4, cudaHostAllocMapped));
  *ht = 0; *hs = 0;
  unsigned long long* dt; unsigned* ds;
  CK(cudaHostGetDevicePointer((void**)&dt, ht, 0)); CK(cudaHostGetDevicePointer((void**)&ds, hs, 0));
  cudaStream_t sc, sb;
  CK(cudaStreamCreateWithFlags(&sc, cudaStreamNonBlocking)); CK(cudaStreamCreateWithFlags(&sb, cudaStreamNonBlocking));
  // Load `timed` and its twin before clock_pub starts: with lazy loading, loading a kernel waits for the
  // running ones, and clock_pub runs until the end (the first version of this benchmark hung right here).
  CK(ptb::preload(timed, timed__ptb));
  {  // warm-up of the twin (under P: with no policy the automatic launch mode would run the original)
    ptb::LaunchConfig c(dim3(N * 16), dim3(128), 0, sb);
    c.policy = P;
    ::ptb::launch(c, timed, timed__ptb, 1000u);
  }
  CK(cudaStreamSynchronize(sb));
  clock_pub<<<1, 32, 0, sc>>>(dt, ds);
  while (*(volatile unsigned long long*)ht == 0) {}
  std::set<unsigned> removed;
  for (unsigned i = N / 2; i < N; ++i) removed.insert(raw[i]);
  std::printf("yield half the SMs (%u..%u) while a kernel runs, request -> last task end on them:\n", N / 2, N - 1);
  std::printf("%10s %12s %12s %12s %12s\n", "task us", "median us", "max us", "over task", "set() us");
  for (unsigned d_us : {10u, 30u, 100u, 1000u}) {
    std::vector<double> lat, calls;
    for (int rep = 0; rep < 4; ++rep) {
      P.set(ptb::SmSet::all());
      CK(ptb::trace_start(1 << 22));
      const unsigned n = (unsigned)std::min<unsigned long long>(4000000ull, (unsigned long long)N * 16 * 20000 / d_us);  // ~20 ms
      ptb::LaunchConfig c(dim3(n), dim3(128), 0, sb);
      c.policy = P;
      ::ptb::launch(c, timed, timed__ptb, d_us * 1000);
      CK(cudaGetLastError());
      std::this_thread::sleep_for(std::chrono::milliseconds(8));
      const unsigned long long treq = *(volatile unsigned long long*)ht;
      const auto h0 = std::chrono::steady_clock::now();
      P.set(ptb::SmSet::first(N / 2));
      calls.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - h0).count());
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      P.set(ptb::SmSet::all());
      CK(cudaStreamSynchronize(sb));
      ptb::trace_stop();
      auto ev = ptb::trace_collect();
      unsigned long long last = 0;
      unsigned late_start = 0;
      for (auto& e : ev)
        if (removed.count(e.sm) && e.start_ns < treq + 5000000ull) {  // before the SMs came back
          last = std::max(last, e.end_ns);
          if (e.start_ns > treq + 50000ull) ++late_start;
        }
      lat.push_back(last > treq ? (last - treq) / 1000.0 : 0.0);
      if (late_start) std::printf("  (%u tasks started on removed SMs more than 50 us after the request)\n", late_start);
    }
    std::sort(lat.begin(), lat.end());
    std::sort(calls.begin(), calls.end());
    std::printf("%10u %12.1f %12.1f %12.1f %12.1f\n", d_us, lat[lat.size() / 2], lat.back(), lat.back() - d_us, calls[calls.size() / 2]);
  }
  *(volatile unsigned*)hs = 1;
  CK(cudaDeviceSynchronize());
  return 0;
}

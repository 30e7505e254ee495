// Stress test of the runtime under the host-side shapes of real programs, random per seed:
//   host_shapes [--seed S] [--phases P] [--end free|leak|running|reset]
// A run is P phases. In each, 1-4 host threads each make 5-40 steps of: a copy of their buffer to the
// device (cudaMemcpy on the legacy stream; cudaMemcpyAsync where they launch in their own non-blocking
// stream), a launch (in the legacy stream, the per-thread stream or their own stream) that adds a random delta to every element (tasks spin 0-20 us), sometimes a second launch,
// a copy back and an exact check on the host; a scratch buffer allocated and freed between launches;
// cudaDeviceSynchronize now and then. Between phases the device is sometimes reset (every buffer made
// again after it). A random restricting process policy (SM set, cap) holds throughout; in some runs a
// thread sets a new random one every 50-500 us while the phases run. Checked: every element, and that
// every launch ran as a twin (the process policy's launch count equals the launches made; no fallback).
// The end: free (everything freed, then return), leak (return with the buffers and streams alive),
// running (return while a launch of ~200 ms runs, the monitor with it), reset (cudaDeviceReset last).
// Exit 0 and "PASS host_shapes seed S" when every check passed; every failure names the seed.
#include <ptb/ptb.cuh>
#include "../runtime/common.cuh"
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

__device__ __forceinline__ unsigned long long gtimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ void spin(unsigned ns) {
  const unsigned long long t0 = gtimer();
  while (ns && gtimer() - t0 < ns) {
  }
}

// Every element of p (n of them) + delta; one element per thread, tasks of 256 threads.
__global__ void bump(unsigned* p, unsigned n, unsigned delta, unsigned spin_ns) {
  const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  spin(spin_ns);
  if (i < n) p[i] += delta;
}
__global__ void bump__ptb(unsigned* p, unsigned n, unsigned delta, unsigned spin_ns, const ::ptb::Launch L) {
  ::ptb::run_tasks<::ptb::TaskSync::none>(L, [&](const uint3 b, const dim3) {
    const unsigned long long i = (unsigned long long)b.x * blockDim.x + threadIdx.x;
    spin(spin_ns);
    if (i < n) p[i] += delta;
  });
}

struct Shared {
  unsigned long long seed = 0;
  std::atomic<unsigned long long> launches{0};
  std::atomic<int> failures{0};
  std::mutex print;
  void fail(const std::string& what) {
    std::lock_guard<std::mutex> g(print);
    if (failures++ < 8) std::printf("FAIL host_shapes seed %llu: %s\n", seed, what.c_str());
  }
};

static ptb::SmSet random_set(std::mt19937_64& r, unsigned sms) {
  switch (r() % 4) {
    case 0: {
      const unsigned k = static_cast<unsigned>(r() % sms);
      return ptb::SmSet::range(k, k + 1);
    }
    case 1: return ptb::SmSet::first(1 + static_cast<unsigned>(r() % 8));
    case 2: return ptb::SmSet::first(sms / 2);
    default: {
      ptb::SmSet s;
      for (unsigned k = 0; k < sms; ++k)
        if (r() % 3 == 0) s = s | ptb::SmSet::range(k, k + 1);
      return s.empty() ? ptb::SmSet::first(1) : s;
    }
  }
}

// One host thread's steps in one phase.
static void worker(Shared& sh, unsigned long long seed, int phase, int id) {
  std::mt19937_64 r(seed * 1000003ull + phase * 131ull + id);
  const unsigned n = 1 + static_cast<unsigned>(r() % 300000);
  std::vector<unsigned> host(n);
  for (auto& x : host) x = static_cast<unsigned>(r());
  unsigned* d = nullptr;
  cudaStream_t own = nullptr;
  if (cudaMalloc(&d, n * sizeof(unsigned)) != cudaSuccess ||
      cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking) != cudaSuccess) {
    sh.fail("phase " + std::to_string(phase) + ": cudaMalloc/cudaStreamCreate failed");
    return;
  }
  const int steps = 5 + static_cast<int>(r() % 36);
  for (int step = 0; step < steps && sh.failures == 0; ++step) {
    void* scratch = nullptr;
    const bool with_scratch = r() % 3 == 0;
    if (with_scratch && cudaMalloc(&scratch, 4096 + r() % (1 << 20)) != cudaSuccess) sh.fail("scratch cudaMalloc");
    const int k = static_cast<int>(r() % 3);
    cudaStream_t s = k == 0 ? cudaStream_t(0) : k == 1 ? cudaStreamPerThread : own;
    // The legacy stream orders the per-thread stream, not a non-blocking one: a program that launches in
    // its own stream copies in it (a pageable cudaMemcpy may return before its copy reaches the device).
    if (s == own)
      cudaMemcpyAsync(d, host.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice, own);
    else
      cudaMemcpy(d, host.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice);  // the legacy stream
    const unsigned launches = 1 + static_cast<unsigned>(r() % 2);
    unsigned total = 0;
    for (unsigned l = 0; l < launches; ++l) {
      const unsigned delta = 1 + static_cast<unsigned>(r() % 1000);
      const unsigned spin_ns = r() % 4 == 0 ? static_cast<unsigned>(r() % 20000) : 0u;
      ptb::launch(ptb::LaunchConfig((n + 255) / 256, 256, 0, s), bump, bump__ptb, d, n, delta, spin_ns);
      total += delta;
      sh.launches.fetch_add(1);
    }
    if (s != cudaStream_t(0) && cudaStreamSynchronize(s) != cudaSuccess) sh.fail("stream synchronize");
    std::vector<unsigned> back(n);
    if (cudaMemcpy(back.data(), d, n * sizeof(unsigned), cudaMemcpyDeviceToHost) != cudaSuccess) sh.fail("copy back");
    for (unsigned i = 0; i < n; ++i)
      if (back[i] != host[i] + total) {
        sh.fail("phase " + std::to_string(phase) + " thread " + std::to_string(id) + " step " + std::to_string(step) +
                ": element " + std::to_string(i) + " of " + std::to_string(n) + " is wrong");
        break;
      }
    host.swap(back);
    if (scratch) cudaFree(scratch);
    if (r() % 8 == 0 && cudaDeviceSynchronize() != cudaSuccess) sh.fail("cudaDeviceSynchronize");
  }
  if (cudaGetLastError() != cudaSuccess) sh.fail("an error was left in a worker thread");
  cudaFree(d);
  cudaStreamDestroy(own);
}

int main(int argc, char** argv) {
  Shared sh;
  sh.seed = std::random_device{}();
  int phases = 6;
  std::string end = "free";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--seed") && i + 1 < argc) sh.seed = std::strtoull(argv[++i], nullptr, 0);
    else if (!std::strcmp(argv[i], "--phases") && i + 1 < argc) phases = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--end") && i + 1 < argc) end = argv[++i];
    else {
      std::printf("usage: host_shapes [--seed S] [--phases P] [--end free|leak|running|reset]\n");
      return 2;
    }
  }
  std::printf("SEED host_shapes %llu (end %s)\n", sh.seed, end.c_str());
  std::fflush(stdout);
  std::mt19937_64 r(sh.seed);
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const ptb::Policy pol = ptb::process_policy();
  pol.set(random_set(r, static_cast<unsigned>(sms)), static_cast<unsigned>(r() % 4));
  const bool changing = r() % 3 == 0;
  std::atomic<bool> stop{false};
  std::thread changer;
  const auto start_changer = [&](unsigned long long seed) {  // a new random policy every 50-500 us
    stop = false;
    changer = std::thread([&, seed] {
      std::mt19937_64 c(seed ^ 0x9e3779b97f4a7c15ull);
      while (!stop) {
        pol.set(random_set(c, static_cast<unsigned>(sms)), static_cast<unsigned>(c() % 4));
        std::this_thread::sleep_for(std::chrono::microseconds(50 + c() % 450));
      }
    });
  };
  if (changing) start_changer(sh.seed);
  for (int phase = 0; phase < phases && sh.failures == 0; ++phase) {
    const int threads = 1 + static_cast<int>(r() % 4);
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t) ts.emplace_back(worker, std::ref(sh), sh.seed, phase, t);
    for (auto& t : ts) t.join();
    if (phase + 1 < phases && r() % 3 == 0) {
      if (changing) {  // no CUDA call of another thread may run across a reset
        stop = true;
        changer.join();
      }
      if (cudaDeviceReset() != cudaSuccess) sh.fail("cudaDeviceReset");
      if (changing) start_changer(sh.seed + phase);
    }
  }
  if (changing) {
    stop = true;
    changer.join();
  }
  const unsigned long long made = sh.launches.load(), twins = pol.launches(), fell = ptb::fallback_count();
  if (twins != made || fell != 0)
    sh.fail(std::to_string(made) + " launches made, " + std::to_string(twins) + " ran as twins, " +
            std::to_string(fell) + " fell back");
  if (sh.failures) return 1;
  std::printf("PASS host_shapes seed %llu: %llu launches, all twins\n", sh.seed, made);
  std::fflush(stdout);
  if (end == "running") {
    // A long launch under a restricting policy, and the program returns while it runs (and the monitor
    // with it): static destructors, the CUDA runtime's teardown and the monitor must not hang or fault.
    unsigned* d = nullptr;
    CK(cudaMalloc(&d, 4096 * sizeof(unsigned)));
    pol.set(ptb::SmSet::first(2), 1);
    ptb::launch(ptb::LaunchConfig(4096 / 256 * 64, 256), bump, bump__ptb, d, 4096u, 1u, 200000u);
    return 0;
  }
  if (end == "leak") return 0;
  if (end == "reset") {
    CK(cudaDeviceReset());
    return 0;
  }
  return 0;
}

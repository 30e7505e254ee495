// test/gpu/ls/ls_probe.cu: checks libptb-ls.so on a GPU (run.sh builds and runs it under
// CUDA_INJECTION64_PATH). It plays the controller: before its first launch it creates the segment of its
// device in PTB_QOSD_DIR (the library looks the segment up at the first launch), then reads what the
// library and the device wrote there.
//   ls_probe --check        the checks; PASS/FAIL lines, exit 1 on a failure
//   ls_probe --bench N      N back-to-back tiny launches: host launch rate and device time
//   ls_probe --none         one launch with no segment (the library must say so and the program run on)
#include <ptb/qos/segment.h>

#include "ls_tracker.h"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace shm = ptb::qos::shm;

#define CHECK_CUDA(call)                                                                                     \
  do {                                                                                                       \
    cudaError_t err_ = (call);                                                                               \
    if (err_ != cudaSuccess) {                                                                               \
      std::fprintf(stderr, "ls_probe: %s failed: %s (line %d)\n", #call, cudaGetErrorString(err_), __LINE__); \
      std::exit(2);                                                                                          \
    }                                                                                                        \
  } while (0)

__global__ void tiny(int* p) {
  if (p) *p = 1;
}

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__global__ void spin(unsigned long long ns) {
  const unsigned long long t0 = global_ns();
  while (global_ns() - t0 < ns) {
  }
}

static int failures = 0;
static void check(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "PASS" : "FAIL", what.c_str());
  if (!ok) ++failures;
}
static std::string num(unsigned long long v) { return std::to_string(v); }

static shm::Mapping g_seg;
static unsigned long long g_expected = 0; // launches the library should count

// Creates the segment of device 0 in a fresh PTB_QOSD_DIR, as the controller would.
static void make_segment() {
  // On tmpfs, as ptb-qosd's segments must be: CUDA pins (cuMemHostRegister) no other file-backed pages.
  char tmpl[] = "/dev/shm/ptb-ls-probe.XXXXXX";
  if (!mkdtemp(tmpl)) std::exit(2);
  setenv("PTB_QOSD_DIR", tmpl, 1);
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0)); // no launch: the library has not looked for it yet
  unsigned char uuid[16];
  std::memcpy(uuid, prop.uuid.bytes, 16);
  const std::string key = ptb::qos::shm::key_of_uuid(uuid);
  std::printf("ls_probe: key %s, segment dir %s\n", key.c_str(), tmpl);
  bool taken = false;
  const shm::Status s =
      shm::create_or_take(shm::segment_path(tmpl, key), static_cast<unsigned>(prop.multiProcessorCount), key, g_seg, taken);
  if (s != shm::Status::ok) {
    std::fprintf(stderr, "ls_probe: cannot create the segment: %s\n", shm::describe(s));
    std::exit(2);
  }
}

static shm::LsClient* my_client() {
  for (unsigned i = 0; i < shm::kLsClients; ++i)
    if (g_seg->ls[i].pid.load() == static_cast<std::uint64_t>(getpid())) return &g_seg->ls[i];
  return nullptr;
}
static shm::LsStream* slot_of(shm::LsClient* c, std::uint64_t key) {
  for (unsigned i = 0; i < shm::kLsStreams; ++i)
    if (c->streams[i].key.load() == key) return &c->streams[i];
  return nullptr;
}
static std::uint64_t key_of(cudaStream_t s) { return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(s)); }
static bool all_idle(shm::LsClient* c) {
  for (unsigned i = 0; i < shm::kLsStreams; ++i)
    if (ptb::ls::busy(c->streams[i])) {
      std::printf("  stream slot %u (key %llx): submitted %llu, completed %llu\n", i,
                  (unsigned long long)c->streams[i].key.load(), (unsigned long long)c->streams[i].submitted.load(),
                  (unsigned long long)c->streams[i].completed.load());
      return false;
    }
  return true;
}

static int run_checks() {
  make_segment();
  tiny<<<1, 32>>>(nullptr); // legacy stream: the first launch finds the segment
  ++g_expected;
  CHECK_CUDA(cudaDeviceSynchronize());
  shm::LsClient* c = my_client();
  check(c != nullptr, "the library claimed an LS client slot (pid " + num(getpid()) + ")");
  if (!c) return 1;
  check(slot_of(c, ptb::ls::kLegacyKey) != nullptr, "the legacy stream has key 1");

  // Several streams.
  cudaStream_t streams[3];
  for (cudaStream_t& s : streams) CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (int i = 0; i < 100; ++i)
    for (cudaStream_t s : streams) {
      tiny<<<1, 32, 0, s>>>(nullptr);
      ++g_expected;
    }
  // cudaLaunchKernelEx (the driver's cuLaunchKernelEx).
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(1);
  config.blockDim = dim3(32);
  config.stream = streams[0];
  int* nothing = nullptr;
  CHECK_CUDA(cudaLaunchKernelEx(&config, tiny, nothing));
  ++g_expected;
  CHECK_CUDA(cudaDeviceSynchronize());
  bool each = true;
  for (cudaStream_t s : streams) {
    shm::LsStream* w = slot_of(c, key_of(s));
    each = each && w && w->submitted.load() == (s == streams[0] ? 101u : 100u) && !ptb::ls::busy(*w);
  }
  check(each, "3 streams: each has its own slot, submitted == completed == its launches");
  check(c->launches.load() == g_expected,
        "launches counted: " + num(c->launches.load()) + " (expected " + num(g_expected) + ")");

  for (cudaStream_t s : streams)
    if (!slot_of(c, key_of(s))) {
      check(false, "every stream has a slot (the rest cannot be checked)");
      return 1;
    }

  // Busy while a 50 ms kernel runs, seen by a host thread polling the segment.
  shm::LsStream* w1 = slot_of(c, key_of(streams[1]));
  std::atomic<bool> stop{false}, seen_busy{false};
  std::thread poller([&] {
    while (!stop.load()) {
      if (ptb::ls::busy(*w1)) seen_busy = true;
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  });
  const auto t0 = std::chrono::steady_clock::now();
  spin<<<1, 1, 0, streams[1]>>>(50ull * 1000 * 1000);
  ++g_expected;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const bool busy_mid = ptb::ls::busy(*w1);
  CHECK_CUDA(cudaStreamSynchronize(streams[1]));
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  stop = true;
  poller.join();
  check(seen_busy.load() && busy_mid, "busy observed while a 50 ms kernel ran (" + std::to_string(ms) + " ms)");
  check(!ptb::ls::busy(*w1), "idle after the stream synchronized");

  // Launches inside a capture are not counted; each launch of the graph counts once.
  const std::uint64_t before = c->launches.load(), sub_before = slot_of(c, key_of(streams[2]))->submitted.load();
  cudaGraph_t graph;
  CHECK_CUDA(cudaStreamBeginCapture(streams[2], cudaStreamCaptureModeGlobal));
  for (int i = 0; i < 5; ++i) tiny<<<1, 32, 0, streams[2]>>>(nullptr);
  CHECK_CUDA(cudaStreamEndCapture(streams[2], &graph));
  check(c->launches.load() == before && slot_of(c, key_of(streams[2]))->submitted.load() == sub_before,
        "nothing counted for 5 launches inside a capture");
  cudaGraphExec_t exec;
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < 3; ++i) {
    CHECK_CUDA(cudaGraphLaunch(exec, streams[2]));
    ++g_expected;
  }
  CHECK_CUDA(cudaStreamSynchronize(streams[2]));
  check(c->launches.load() == before + 3 && slot_of(c, key_of(streams[2]))->submitted.load() == sub_before + 3,
        "3 graph launches counted 3 (" + num(c->launches.load() - before) + ")");
  check(all_idle(c), "every stream idle after the graph launches");

  // Per-thread default streams of two threads: a slot each.
  for (int t = 0; t < 2; ++t)
    std::thread([] {
      for (int i = 0; i < 10; ++i) tiny<<<1, 32, 0, cudaStreamPerThread>>>(nullptr);
      cudaStreamSynchronize(cudaStreamPerThread);
    }).join();
  g_expected += 20;
  CHECK_CUDA(cudaDeviceSynchronize());
  check(all_idle(c) && c->launches.load() == g_expected, "per-thread default streams of two threads counted, idle");

  // More streams than slots: the shared last slot counts them (overflow) and ends idle.
  std::vector<cudaStream_t> many(40);
  for (cudaStream_t& s : many) CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (cudaStream_t s : many) {
    spin<<<1, 1, 0, s>>>(1000 * 1000);
    ++g_expected;
  }
  CHECK_CUDA(cudaDeviceSynchronize());
  std::this_thread::sleep_for(std::chrono::milliseconds(10)); // host functions count the shared slot
  check(c->overflow.load() > 0, "streams beyond the table overflowed (" + num(c->overflow.load()) + ")");
  check(all_idle(c) && c->launches.load() == g_expected,
        "40 more streams: launches " + num(c->launches.load()) + " (expected " + num(g_expected) + "), all idle");

  // The C API: the preloaded library's (in the global scope), or the injected library's instance (through
  // dlopen of the same path).
  using BeginFn = int (*)();
  using EndFn = int (*)(void*);
  const char* path = std::getenv("CUDA_INJECTION64_PATH");
  // RTLD_DEFAULT is a null handle: only a failed dlopen means "no library".
  void* lib = path ? dlopen(path, RTLD_NOW) : RTLD_DEFAULT;
  const bool opened = !path || lib;
  BeginFn begin = opened ? reinterpret_cast<BeginFn>(dlsym(lib, "ptb_ls_begin")) : nullptr;
  EndFn end = opened ? reinterpret_cast<EndFn>(dlsym(lib, "ptb_ls_end")) : nullptr;
  check(begin && end, "ptb_ls_begin and ptb_ls_end found in the library");
  if (begin && end) {
    const std::uint64_t begun0 = c->requests_begun.load();
    int rc = 0;
    for (int i = 0; i < 5; ++i) {
      rc |= begin();
      spin<<<1, 1, 0, streams[0]>>>(2 * 1000 * 1000);
      ++g_expected;
      rc |= end(streams[0]);
    }
    const bool in_flight = c->requests_done.load() < c->requests_begun.load();
    CHECK_CUDA(cudaStreamSynchronize(streams[0]));
    check(rc == 0 && c->requests_begun.load() == begun0 + 5 && c->requests_done.load() == begun0 + 5,
          "5 requests begun and done (begun " + num(c->requests_begun.load()) + ", done " +
              num(c->requests_done.load()) + ", in flight before the sync: " + (in_flight ? "yes" : "no") + ")");
    bool times = true;
    for (std::uint64_t n = begun0 + 1; n <= begun0 + 5; ++n)
      times = times && c->request_begin_ns[n % shm::kRequestRing].load() != 0 &&
              (n == begun0 + 1 || c->request_begin_ns[n % shm::kRequestRing].load() >=
                                      c->request_begin_ns[(n - 1) % shm::kRequestRing].load());
    check(times, "request begin times in the ring, in order");
    check(end(streams[0]) == 4, "an end without a begin is refused (PTB_LS_NOT_OPEN)");
  }

  // After cudaDeviceReset the library registers the segment in the new context.
  CHECK_CUDA(cudaDeviceReset());
  for (int i = 0; i < 3; ++i) {
    tiny<<<1, 32>>>(nullptr);
    ++g_expected;
  }
  CHECK_CUDA(cudaDeviceSynchronize());
  check(all_idle(c) && c->launches.load() == g_expected,
        "after cudaDeviceReset: launches " + num(c->launches.load()) + " (expected " + num(g_expected) + "), idle");

  std::printf("ls_probe: %s (%d failed)\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}

static int run_bench(int n) {
  make_segment();
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (int i = 0; i < 1000; ++i) tiny<<<1, 32, 0, s>>>(nullptr); // warm up (and find the segment)
  CHECK_CUDA(cudaStreamSynchronize(s));
  cudaEvent_t e0, e1;
  CHECK_CUDA(cudaEventCreate(&e0));
  CHECK_CUDA(cudaEventCreate(&e1));
  double best_host = 1e30, best_dev = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    CHECK_CUDA(cudaEventRecord(e0, s));
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) tiny<<<1, 32, 0, s>>>(nullptr);
    const double host_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    CHECK_CUDA(cudaEventRecord(e1, s));
    CHECK_CUDA(cudaEventSynchronize(e1));
    float dev_ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&dev_ms, e0, e1));
    best_host = std::min(best_host, host_us / n);
    best_dev = std::min(best_dev, 1000.0 * dev_ms / n);
  }
  shm::LsClient* c = my_client();
  std::printf("ls_probe bench: %d launches x5, %s: host %.3f us/launch (%.0f launches/s), device %.3f us/launch, "
              "launches marked %llu\n",
              n, std::getenv("CUDA_INJECTION64_PATH") ? "injected"
              : std::getenv("LD_PRELOAD")          ? "preloaded"
                                                   : "plain", best_host, 1e6 / best_host, best_dev,
              c ? (unsigned long long)c->launches.load() : 0ull);
  return 0;
}

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "--check";
  if (mode == "--check") return run_checks();
  if (mode == "--bench") return run_bench(argc > 2 ? std::atoi(argv[2]) : 20000);
  if (mode == "--none") {
    tiny<<<1, 32>>>(nullptr);
    CHECK_CUDA(cudaDeviceSynchronize());
    std::printf("ls_probe: ran without a segment\n");
    return 0;
  }
  std::fprintf(stderr, "usage: ls_probe [--check | --bench N | --none]\n");
  return 2;
}

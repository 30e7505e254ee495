// Every reason a launch under a policy can run its original kernel instead of its twin (ptb/fallback.cuh),
// each provoked on purpose, one case per process (some leave the context broken or the device full):
//   test_fallback --case NAME      NAME: invalid_launch context_error too_many_tasks device_setup
//                                  no_occupancy policy_upload no_control_block fusion_mismatch; and
//                                  capture_first, where
//                                  the first launch made in a capture must not fall back
//   test_fallback --case no_occupancy --strict-expected
//                                  run under PTB_STRICT=1: the report comes, then the program aborts
// Each case checks: the fallback is counted under its reason (ptb::fallback_count) and under the policy
// that covered the launch (Policy::fallbacks); the hook hears of it once per kernel and reason (and not
// for an invalid configuration, whose launch reports its error as a plain launch does); the original
// kernel's result where it runs; and that the thread's pending error is the one a plain launch leaves.
#include <ptb/ptb.cuh>
#include "common.cuh"
#include <cstring>
#include <string>
#include <vector>

// ---------------------------------------------------------------- add_one: every element + 1 (twin by hand)
__global__ void add_one(unsigned* p, unsigned n) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1;
}
static __device__ __forceinline__ void add_one__ptb_task(const uint3 blockIdx, const dim3, unsigned* p, unsigned n) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1;
}
__global__ void add_one__ptb(unsigned* p, unsigned n, const ::ptb::Launch ptb_launch) {
  ::ptb::run_tasks(ptb_launch, [&](const uint3 b, const dim3 g) { add_one__ptb_task(b, g, p, n); });
}

// ---------------------------------------------------------------- big_shared: the twin needs more shared memory
// The original uses only dynamic shared memory; its twin (as if the rewrite had added 16 KB of static
// shared memory) cannot place a block with 40 KB dynamic on top within the default 48 KB per block.
__global__ void big_shared(unsigned* p, unsigned n) {
  extern __shared__ unsigned dyn[];
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  dyn[threadIdx.x] = i < n ? p[i] : 0;
  __syncthreads();
  if (i < n) p[i] = dyn[threadIdx.x] + 1;
}
__global__ void big_shared__ptb(unsigned* p, unsigned n, const ::ptb::Launch ptb_launch) {
  __shared__ unsigned pad[4096];
  extern __shared__ unsigned dyn[];
  ::ptb::run_tasks(ptb_launch, [&](const uint3 b, const dim3) {
    const unsigned i = b.x * blockDim.x + threadIdx.x;
    pad[threadIdx.x] = i;
    dyn[threadIdx.x] = i < n ? p[i] : 0;
    __syncthreads();
    if (i < n) p[i] = dyn[threadIdx.x] + 1 + (pad[threadIdx.x] - i);
  });
}

// ---------------------------------------------------------------- add_one fused alone, as fuse-kernels emits
// One slot of 128 threads (the shape it was generated for); never launched here: a launch of blocks of 64
// does not match it.
__global__ void __launch_bounds__(128) add_one__fused(unsigned* p, unsigned n, const ::ptb::Launch ptb_launch0,
                                                      const ::ptb::FusedShared) {
  __shared__ ::ptb::SlotShared ptb_slot_[1];
  const unsigned t = threadIdx.x;
  ::ptb::run_slot_tasks<::ptb::TaskSync::none, 1, 128>(ptb_launch0, ptb_slot_[0], t, blockIdx.x, [&](const uint3 b, const dim3) {
    const unsigned i = b.x * 128u + t;
    if (i < n) p[i] += 1;
  });
}

// ---------------------------------------------------------------- a kernel that faults (sticky error)
__global__ void fault(unsigned* p) { p[threadIdx.x] = 1; }

struct Heard {
  std::vector<ptb::FallbackReport> reports;
};
static Heard& heard() {
  static Heard h;
  return h;
}

static unsigned* fresh(unsigned n) {
  unsigned* p = nullptr;
  CK(cudaMalloc(&p, n * sizeof(unsigned)));
  CK(cudaMemset(p, 0, n * sizeof(unsigned)));
  return p;
}
static std::vector<unsigned> down(const unsigned* p, unsigned n) {
  std::vector<unsigned> h(n);
  CK(cudaMemcpy(h.data(), p, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  return h;
}
static bool all_equal(const std::vector<unsigned>& v, unsigned x) {
  for (unsigned e : v)
    if (e != x) return false;
  return true;
}

// The counts and the hook after a case: `reason` counted `times` (the other reasons none), `times` under
// `policy`, and heard `said` times (0 or 1 per kernel).
static void expect_counted(ptb::Fallback reason, unsigned long long times, const ptb::Policy& policy, size_t said) {
  for (unsigned i = 0; i < ptb::kFallbackReasons; ++i) {
    const auto f = static_cast<ptb::Fallback>(i);
    const unsigned long long want = f == reason ? times : 0;
    EXPECT(ptb::fallback_count(f) == want, "fallback_count(%s) = %llu, want %llu", ptb::fallback_name(f),
           ptb::fallback_count(f), want);
  }
  EXPECT(policy.fallbacks() == times, "Policy::fallbacks() = %llu, want %llu", policy.fallbacks(), times);
  EXPECT(heard().reports.size() == said, "the hook heard %zu reports, want %zu", heard().reports.size(), said);
  for (const auto& r : heard().reports)
    EXPECT(r.reason == reason && !r.message.empty() && r.message.find(ptb::fallback_name(reason)) != std::string::npos,
           "report: %s", r.message.c_str());
}

static ptb::LaunchConfig cfg(dim3 grid, dim3 block, size_t shmem, cudaStream_t stream, const ptb::Policy& policy) {
  ptb::LaunchConfig c(grid, block, shmem, stream);
  c.policy = policy;
  return c;
}

static ptb::Policy half() { return ptb::Policy::create(ptb::SmSet::first(8), 2); }

int main(int argc, char** argv) {
  std::string name;
  bool strict_expected = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--case") && i + 1 < argc) name = argv[++i];
    else if (!std::strcmp(argv[i], "--strict-expected")) strict_expected = true;
  }
  if (!strict_expected) ptb::set_fallback_hook([](const ptb::FallbackReport& r) { heard().reports.push_back(r); });
  const unsigned n = 1u << 16;
  CK(cudaSetDevice(0));
  if (name == "invalid_launch") {
    // A block of 2048 threads: the same error as the plain launch, left pending; counted, not reported.
    unsigned* p = fresh(n);
    add_one<<<1, 2048>>>(p, n);
    const cudaError_t plain = cudaGetLastError();
    const ptb::Policy pol = half();
    for (int k = 0; k < 3; ++k) ptb::launch(cfg(1, 2048, 0, nullptr, pol), add_one, add_one__ptb, p, n);
    const cudaError_t ours = cudaGetLastError();
    EXPECT(plain != cudaSuccess && ours == plain, "plain launch: %s, under the policy: %s", cudaGetErrorName(plain),
           cudaGetErrorName(ours));
    expect_counted(ptb::Fallback::invalid_launch, 3, pol, 0);
  } else if (name == "context_error") {
    // A fault leaves cudaErrorIllegalAddress in the context for good: the launches after it fall back and
    // their original launches fail with it, as in the plain program.
    const ptb::Policy pol = half();
    unsigned* p = fresh(n);
    ptb::launch(cfg(n / 256, 256, 0, nullptr, pol), add_one, add_one__ptb, p, n);  // a twin: fine
    CK(cudaDeviceSynchronize());
    fault<<<1, 32>>>(reinterpret_cast<unsigned*>(0x10));
    const cudaError_t sticky = cudaDeviceSynchronize();
    EXPECT(sticky == cudaErrorIllegalAddress, "the fault gave %s", cudaGetErrorName(sticky));
    for (int k = 0; k < 2; ++k) ptb::launch(cfg(n / 256, 256, 0, nullptr, pol), add_one, add_one__ptb, p, n);
    EXPECT(cudaPeekAtLastError() == cudaErrorIllegalAddress, "pending after the launches: %s",
           cudaGetErrorName(cudaPeekAtLastError()));
    expect_counted(ptb::Fallback::context_error, 2, pol, 1);
    if (!heard().reports.empty())
      EXPECT(heard().reports[0].error == cudaErrorIllegalAddress, "the report's error: %s",
             cudaGetErrorName(heard().reports[0].error));
    EXPECT(pol.launches() == 1, "twin launches: %llu", pol.launches());
  } else if (name == "too_many_tasks") {
    // 2^63 blocks, captured into a graph that is never run (nothing executes).
    const ptb::Policy pol = half();
    unsigned* p = fresh(n);
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    ptb::launch(cfg(dim3(0x7fffffffu, 65535, 65535), 32, 0, s, pol), add_one, add_one__ptb, p, n);
    cudaGraph_t g = nullptr;
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphDestroy(g));
    expect_counted(ptb::Fallback::too_many_tasks, 1, pol, 1);
  } else if (name == "device_setup" || name == "policy_upload") {
    // The device's memory taken before the runtime needs some: for its set-up (device_setup), or, once
    // set up, for a new policy's caps (policy_upload). The original was loaded before: it runs.
    unsigned* p = fresh(n);
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, add_one));
    if (name == "policy_upload") {
      const ptb::Policy warm = half();
      ptb::launch(cfg(n / 256, 256, 0, nullptr, warm), add_one, add_one__ptb, p, n);
      CK(cudaDeviceSynchronize());
    }
    std::vector<void*> hog;
    for (size_t chunk = size_t(1) << 34; chunk >= 64;) {  // down to what a small cudaMalloc takes
      void* q = nullptr;
      if (cudaMalloc(&q, chunk) == cudaSuccess) hog.push_back(q);
      else chunk /= 2;
    }
    (void)cudaGetLastError();  // the hog's last failed cudaMalloc
    const ptb::Policy pol = half();
    ptb::launch(cfg(n / 256, 256, 0, nullptr, pol), add_one, add_one__ptb, p, n);
    const cudaError_t e = cudaDeviceSynchronize();
    EXPECT(e == cudaSuccess && cudaGetLastError() == cudaSuccess, "the original's launch: %s", cudaGetErrorName(e));
    const unsigned want = name == "policy_upload" ? 2u : 1u;
    EXPECT(all_equal(down(p, n), want), "the original did not add one to every element");
    expect_counted(name == "device_setup" ? ptb::Fallback::device_setup : ptb::Fallback::policy_upload, 1, pol, 1);
    for (void* q : hog) cudaFree(q);
  } else if (name == "no_occupancy") {
    const ptb::Policy pol = half();
    unsigned* p = fresh(n);
    const size_t dyn = 40 * 1024;
    for (int k = 0; k < 2; ++k) ptb::launch(cfg(n / 256, 256, dyn, nullptr, pol), big_shared, big_shared__ptb, p, n);
    const cudaError_t e = cudaDeviceSynchronize();
    EXPECT(e == cudaSuccess && cudaGetLastError() == cudaSuccess, "the original's launch: %s", cudaGetErrorName(e));
    EXPECT(all_equal(down(p, n), 2u), "the original did not run twice");
    expect_counted(ptb::Fallback::no_occupancy, 2, pol, 1);
  } else if (name == "fusion_mismatch") {
    // The fused kernel was made for blocks of 128; the program launches blocks of 64: launch_fused says
    // no, and the caller (the generated launcher) runs the original, unconfined: a fallback.
    const ptb::Policy pol = half();
    unsigned* p = fresh(n);
    const ptb::FusedPart parts[1] = {{cfg(n / 64, 64, 0, nullptr, pol), dim3(128), 1u}};
    const bool fused = ptb::launch_fused(reinterpret_cast<const void*>(&add_one__fused), parts, p, n);
    EXPECT(!fused, "launch_fused ran a kernel made for another block shape");
    if (!fused) add_one<<<n / 64, 64>>>(p, n);
    CK(cudaDeviceSynchronize());
    EXPECT(all_equal(down(p, n), 1u), "the original did not run once");
    expect_counted(ptb::Fallback::fusion_mismatch, 1, pol, 1);
  } else if (name == "capture_first") {
    // Not a fallback: the process's first launch is made inside a capture (global mode), in the ptb
    // launch mode. The runtime sets the device up in the relaxed capture mode; the twin is captured, the
    // capture stays valid, and each replay runs the twin.
    ptb::set_launch_mode(ptb::LaunchMode::ptb);
    unsigned* p = fresh(n);
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    ptb::launch(cfg(n / 256, 256, 0, s, ptb::Policy()), add_one, add_one__ptb, p, n);
    cudaGraph_t g = nullptr;
    cudaGraphExec_t x = nullptr;
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&x, g, 0));
    for (int k = 0; k < 3; ++k) CK(cudaGraphLaunch(x, s));
    CK(cudaStreamSynchronize(s));
    EXPECT(all_equal(down(p, n), 3u), "three replays did not add three");
    EXPECT(ptb::process_policy().launches() == 1, "twin launches: %llu", ptb::process_policy().launches());
    expect_counted(ptb::Fallback::invalid_launch, 0, ptb::process_policy(), 0);
  } else if (name == "no_control_block") {
    // Every free control block taken by a capture (which holds them for good), and no memory left to grow
    // the pool: the rest of the capture's launches are captured as originals. Each runs once per replay.
    const ptb::Policy pol = half();
    unsigned* p = fresh(n);
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    ptb::launch(cfg(n / 256, 256, 0, s, pol), add_one, add_one__ptb, p, n);  // sets the device up
    CK(cudaStreamSynchronize(s));
    CK(cudaMemset(p, 0, n * sizeof(unsigned)));
    std::vector<void*> hog;
    for (size_t chunk = size_t(1) << 34; chunk >= 64;) {
      void* q = nullptr;
      if (cudaMalloc(&q, chunk) == cudaSuccess) hog.push_back(q);
      else chunk /= 2;
    }
    (void)cudaGetLastError();
    const unsigned launches = 600;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    for (unsigned k = 0; k < launches; ++k) ptb::launch(cfg(n / 256, 256, 0, s, pol), add_one, add_one__ptb, p, n);
    cudaGraph_t g = nullptr;
    cudaGraphExec_t x = nullptr;
    CK(cudaStreamEndCapture(s, &g));
    for (void* q : hog) cudaFree(q);
    CK(cudaGraphInstantiate(&x, g, 0));
    CK(cudaGraphLaunch(x, s));
    CK(cudaStreamSynchronize(s));
    EXPECT(all_equal(down(p, n), launches), "a replay did not run every launch once");
    const unsigned long long fell = ptb::fallback_count(ptb::Fallback::no_control_block);
    EXPECT(fell > 0 && fell < launches && pol.launches() - 1 + fell == launches,
           "%llu fell back, %llu twins, of %u launches", fell, pol.launches() - 1, launches);
    expect_counted(ptb::Fallback::no_control_block, fell, pol, 1);
  } else {
    std::printf("usage: test_fallback --case NAME [--strict-expected]\n");
    return 2;
  }
  if (strict_expected) {
    std::printf("FAIL %s: PTB_STRICT=1 did not abort\n", name.c_str());
    return 1;
  }
  if (g_failures) return 1;
  std::printf("PASS test_fallback %s\n", name.c_str());
  return 0;
}

// Shared helpers for the GPU test corpus (test/gpu/*.cu).
//
// Every program of the corpus is plain CUDA: it includes this header and nothing else from the project.
// The same source is built twice, as is ("original") and after ptb-transform ("transformed"); the
// transformed file includes <ptb/ptb.cuh> at its top, which defines PTB_RUNTIME_VERSION, so this header
// can tell the two builds apart. This header defines no kernel and launches nothing: every launch is
// written in the test's own file, where the tool rewrites it.
//
// Conventions:
//   tg::init(argc, argv, "name")  parses --bench and --seed N, seeds the RNG from std::random_device
//                                  (printed, so a failure can be replayed with --seed).
//   tg::check(cond, fmt, ...)      records a failure (the first reason is printed at the end).
//   tg::finish()                   prints "PASS name" or "FAIL name: reason" and returns the exit code.
//                                  In the transformed build it fails when a launch fell back to its
//                                  original kernel for any reason but an invalid configuration
//                                  (ptb/fallback.cuh): under a policy, every launch must be a twin.
//   tg::check_twins(n, what)       transformed build, where every launch must run as a twin (PTB_MODE=ptb,
//                                  or a process policy that restricts): exactly n twin launches so far.
//   tg::bench(name, stream, f)     --bench: times f (which launches the main kernel once) in the
//                                  original and the ptb launch mode, interleaved, and prints
//                                  "BENCH name orig_ms ptb_ms ratio".
//                                  --whole: runs f as the whole program would, in the build's own
//                                  launch mode, the process's first launch included, and prints
//                                  "WHOLE name first_ms .. total_ms .. launches .. form .. runtime ..".
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace tg {

struct State {
  const char* name = "?";
  bool bench = false;
  bool whole = false;  // --whole: tg::bench times the program's launches as a whole (bench_whole)
  uint64_t seed = 0;
  std::mt19937_64 rng;
  int failures = 0;
  std::string first_reason;
};

inline State& state() {
  static State s;
  return s;
}

inline std::mt19937_64& rng() { return state().rng; }

// Uniform integer in [lo, hi].
inline long long rand_int(long long lo, long long hi) {
  return std::uniform_int_distribution<long long>(lo, hi)(rng());
}
inline float rand_float(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng()); }
inline double rand_double(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng()); }

template <class T>
inline std::vector<T> random_ints(size_t n, long long lo, long long hi) {
  std::vector<T> v(n);
  std::uniform_int_distribution<long long> d(lo, hi);
  for (auto& x : v) x = static_cast<T>(d(rng()));
  return v;
}

template <class T>
inline std::vector<T> random_reals(size_t n, double lo, double hi) {
  std::vector<T> v(n);
  std::uniform_real_distribution<double> d(lo, hi);
  for (auto& x : v) x = static_cast<T>(d(rng()));
  return v;
}

inline void vfail(const char* fmt, va_list ap) {
  char buf[1024];
  vsnprintf(buf, sizeof buf, fmt, ap);
  State& s = state();
  if (s.failures == 0) s.first_reason = buf;
  if (s.failures < 8) fprintf(stderr, "  check failed: %s\n", buf);
  ++s.failures;
}

// Records a failure with a printf-style reason unless cond holds. Returns cond.
inline bool check(bool cond, const char* fmt, ...) {
  if (cond) return true;
  va_list ap;
  va_start(ap, fmt);
  vfail(fmt, ap);
  va_end(ap);
  return false;
}

inline int finish() {
  State& s = state();
#ifdef PTB_RUNTIME_VERSION
  const unsigned long long fell =
      ::ptb::fallback_count() - ::ptb::fallback_count(::ptb::Fallback::invalid_launch);
  check(fell == 0, "%llu launches ran their original kernel instead of the twin (ptb::fallback_count)", fell);
#endif
  fflush(stdout);
  if (s.failures == 0) {
    printf("PASS %s\n", s.name);
    return 0;
  }
  printf("FAIL %s: %s%s\n", s.name, s.first_reason.c_str(),
         s.failures > 1 ? (" (+" + std::to_string(s.failures - 1) + " more)").c_str() : "");
  return 1;
}

// Whether every launch of the transformed build must run as a twin: PTB_MODE=ptb, or the automatic mode
// with a process policy that restricts (PTB_SMS, PTB_BLOCKS_PER_SM). False in the original build.
inline bool twins_expected() {
#ifdef PTB_RUNTIME_VERSION
  if (::ptb::launch_mode() == ::ptb::LaunchMode::ptb) return true;
  if (::ptb::launch_mode() == ::ptb::LaunchMode::original) return false;
  const ::ptb::Policy p = ::ptb::process_policy();
  return p.sms() != ::ptb::SmSet::all() || p.per_sm() != 0;
#else
  return false;
#endif
}

// Where twins_expected(): exactly `made` launches ran as twins under the process policy so far.
inline void check_twins(unsigned long long made, const char* what) {
#ifdef PTB_RUNTIME_VERSION
  if (!twins_expected()) return;
  const unsigned long long twins = ::ptb::process_policy().launches();
  check(twins == made, "%s: %llu launches made, %llu ran as twins", what, made, twins);
#else
  (void)made;
  (void)what;
#endif
}

[[noreturn]] inline void die(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  printf("FAIL %s: %s\n", state().name, buf);
  fflush(stdout);
  exit(1);
}

}  // namespace tg

// Fails the program at once (a CUDA API call is not expected to fail here).
#define CUDA_CHECK(expr)                                                                               \
  do {                                                                                                 \
    cudaError_t tg_e_ = (expr);                                                                        \
    if (tg_e_ != cudaSuccess)                                                                          \
      tg::die("%s:%d: %s returned %s (%s)", __FILE__, __LINE__, #expr, cudaGetErrorName(tg_e_),        \
              cudaGetErrorString(tg_e_));                                                              \
  } while (0)

namespace tg {

// After launches: the launch error (cudaGetLastError) and the execution error (cudaDeviceSynchronize).
inline void sync_check(const char* what) {
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) die("%s: launch error %s (%s)", what, cudaGetErrorName(e), cudaGetErrorString(e));
  e = cudaDeviceSynchronize();
  if (e != cudaSuccess) die("%s: execution error %s (%s)", what, cudaGetErrorName(e), cudaGetErrorString(e));
}

inline void init(int argc, char** argv, const char* name) {
  State& s = state();
  s.name = name;
  bool have_seed = false;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--bench")) {
      s.bench = true;
    } else if (!strcmp(argv[i], "--whole")) {
      s.bench = s.whole = true;
    } else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
      s.seed = strtoull(argv[++i], nullptr, 0);
      have_seed = true;
    } else {
      fprintf(stderr, "usage: %s [--bench | --whole] [--seed N]\n", argv[0]);
      exit(2);
    }
  }
  if (!have_seed) {
    std::random_device rd;
    s.seed = (uint64_t(rd()) << 32) ^ rd();
  }
  s.rng.seed(s.seed);
  printf("SEED %s %llu%s\n", name, (unsigned long long)s.seed,
#ifdef PTB_RUNTIME_VERSION
         " (transformed build)"
#else
         " (original build)"
#endif
  );
  int ndev = 0;
  cudaError_t e = cudaGetDeviceCount(&ndev);
  if (e != cudaSuccess || ndev == 0) die("no CUDA device (%s)", cudaGetErrorName(e));
  CUDA_CHECK(cudaSetDevice(0));
}

inline bool bench_mode() { return state().bench; }

// Device buffer holding n elements of T.
template <class T>
struct DevBuf {
  T* p = nullptr;
  size_t n = 0;
  DevBuf() = default;
  explicit DevBuf(size_t count) { alloc(count); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  ~DevBuf() {
    if (p) cudaFree(p);
  }
  void alloc(size_t count) {
    n = count;
    CUDA_CHECK(cudaMalloc(&p, std::max<size_t>(1, n) * sizeof(T)));
  }
  size_t bytes() const { return n * sizeof(T); }
  // upload and fill_bytes have finished on the device when they return: the programs also launch into
  // non-blocking streams, which the legacy default stream (cudaMemcpy, cudaMemset) does not order, and a
  // cudaMemset of device memory, like a pageable cudaMemcpy to the device, may return before it is done.
  // (Without it, launch_shapes_streams' poison raced with its launch into a non-blocking stream: under
  // compute-sanitizer the poison landed after the kernel's stores, H100.)
  void upload(const std::vector<T>& h) {
    if (h.size() != n) die("upload size mismatch");
    CUDA_CHECK(cudaMemcpy(p, h.data(), bytes(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  std::vector<T> download() const {
    std::vector<T> h(n);
    CUDA_CHECK(cudaMemcpy(h.data(), p, bytes(), cudaMemcpyDeviceToHost));
    return h;
  }
  void fill_bytes(unsigned char b) {
    CUDA_CHECK(cudaMemset(p, b, bytes()));
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  void poison() { fill_bytes(0xFF); }  // 0xFFFFFFFF: -1 for ints, NaN for float/double
  operator T*() const { return p; }
};

template <class T>
inline uint64_t bits_of(T v) {
  uint64_t b = 0;
  memcpy(&b, &v, sizeof(T) < 8 ? sizeof(T) : 8);
  return b;
}

// Exact comparison (bitwise for floating point: NaN poison is caught). Returns the number of mismatches.
template <class T>
inline size_t compare_exact(const std::vector<T>& got, const std::vector<T>& want, const char* what) {
  if (got.size() != want.size()) {
    check(false, "%s: size %zu != %zu", what, got.size(), want.size());
    return 1;
  }
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (memcmp(&got[i], &want[i], sizeof(T)) != 0) {
      if (!bad) first = i;
      ++bad;
    }
  if (bad) {
    check(false, "%s: %zu of %zu elements differ, first at %zu: got %.9g (0x%llx) want %.9g (0x%llx)", what, bad,
          got.size(), first, (double)got[first], (unsigned long long)bits_of(got[first]), (double)want[first],
          (unsigned long long)bits_of(want[first]));
  }
  return bad;
}

// Floating-point comparison: |got - want| <= tol[i] (tol per element, from the error analysis of the test).
template <class T>
inline size_t compare_tol(const std::vector<T>& got, const std::vector<double>& want, const std::vector<double>& tol,
                          const char* what) {
  size_t bad = 0, first = 0;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double g = (double)got[i];
    double err = std::fabs(g - want[i]);
    if (!(err <= tol[i])) {  // also catches NaN
      if (!bad) first = i;
      ++bad;
    }
    if (err > worst || std::isnan(err)) worst = err;
  }
  if (bad)
    check(false, "%s: %zu of %zu elements out of tolerance, first at %zu: got %.9g want %.9g tol %.3g", what, bad,
          got.size(), first, (double)got[first], want[first], tol[first]);
  return bad;
}

// ---------------------------------------------------------------------------------------------------------
// Benchmark helper. `launch` launches the program's main kernel(s) once in `stream` (through the same
// launch code the test uses). In the transformed build it runs the launch in the runtime's `original` and
// `ptb` modes, interleaved, and prints "BENCH name orig_ms ptb_ms ratio" (ratio = ptb / orig, medians).
// Without the runtime it only reports the original's time, as a note, and the program exits 0.
namespace detail {
template <class F>
inline float time_once(cudaStream_t stream, F& launch, cudaEvent_t a, cudaEvent_t b) {
  CUDA_CHECK(cudaEventRecord(a, stream));
  launch();
  CUDA_CHECK(cudaEventRecord(b, stream));
  CUDA_CHECK(cudaEventSynchronize(b));
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) die("bench launch failed: %s", cudaGetErrorName(e));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
  return ms;
}
inline float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5f * (v[n / 2 - 1] + v[n / 2]);
}
}  // namespace detail

// --whole: the program's bench work as a user's program runs it: one process, the build's own launch mode
// (the transformed build's default is the runtime's automatic dispatch; PTB_MODE in the environment
// chooses another), `launches` calls of `launch` back to back from the process's first launch on, timed
// by cudaEvents from before the first to after the last (so whatever the first launch sets up or loads
// counts). Prints
//   WHOLE name first_ms F total_ms T launches N form <original|ptb-auto|ptb-ptb|ptb-original>
//         runtime_before <none|set-up> runtime_after <none|set-up>
// where F is the first launch alone and runtime_* says whether the PTB runtime had set up its device
// state (SM discovery, control slots) before the first launch and after the last. A program that
// launched kernels before calling tg::bench would have paid its first launch outside the timer: the
// corpus's programs do not (bench/ptb_overhead/README.md, "Whole programs").
namespace detail {
inline const char* runtime_state() {
#ifdef PTB_RUNTIME_VERSION
  return ::ptb::runtime_set_up() ? "set-up" : "none";
#else
  return "none";
#endif
}
// Which build and launch mode ran: "original" (the original build), else "ptb-" and the runtime's launch
// mode as PTB_MODE spells it (ptb-auto, ptb-ptb, ptb-original).
inline std::string launch_form() {
#ifdef PTB_RUNTIME_VERSION
  return std::string("ptb-") + ::ptb::launch_mode_name(::ptb::launch_mode());
#else
  return "original";
#endif
}
}  // namespace detail

template <class F>
inline int bench_whole(const char* name, cudaStream_t stream, F& launch, int launches) {
  cudaEvent_t a, f, b;
  CUDA_CHECK(cudaEventCreate(&a));
  CUDA_CHECK(cudaEventCreate(&f));
  CUDA_CHECK(cudaEventCreate(&b));
  const char* before = detail::runtime_state();
  CUDA_CHECK(cudaEventRecord(a, stream));
  launch();
  CUDA_CHECK(cudaEventRecord(f, stream));
  for (int i = 1; i < launches; ++i) launch();
  CUDA_CHECK(cudaEventRecord(b, stream));
  CUDA_CHECK(cudaEventSynchronize(b));
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) die("bench launch failed: %s", cudaGetErrorName(e));
  float first = 0, total = 0;
  CUDA_CHECK(cudaEventElapsedTime(&first, a, f));
  CUDA_CHECK(cudaEventElapsedTime(&total, a, b));
  printf("WHOLE %s first_ms %.4f total_ms %.4f launches %d form %s runtime_before %s runtime_after %s\n", name,
         first, total, launches, detail::launch_form().c_str(), before, detail::runtime_state());
  CUDA_CHECK(cudaEventDestroy(a));
  CUDA_CHECK(cudaEventDestroy(f));
  CUDA_CHECK(cudaEventDestroy(b));
  CUDA_CHECK(cudaDeviceSynchronize());
  return 0;
}

template <class F>
inline int bench(const char* name, cudaStream_t stream, F&& launch, int reps = 25, int warmup = 3) {
  if (state().whole) return bench_whole(name, stream, launch, warmup + reps);
  cudaEvent_t a, b;
  CUDA_CHECK(cudaEventCreate(&a));
  CUDA_CHECK(cudaEventCreate(&b));
#ifdef PTB_RUNTIME_VERSION
  const ::ptb::LaunchMode saved = ::ptb::launch_mode();
  std::vector<float> t_orig, t_ptb;
  for (int w = 0; w < warmup; ++w) {
    ::ptb::set_launch_mode(::ptb::LaunchMode::original);
    detail::time_once(stream, launch, a, b);
    ::ptb::set_launch_mode(::ptb::LaunchMode::ptb);
    detail::time_once(stream, launch, a, b);
  }
  for (int r = 0; r < reps; ++r) {
    // alternate which mode goes first, so neither always follows the other
    for (int k = 0; k < 2; ++k) {
      bool orig = ((r + k) % 2) == 0;
      ::ptb::set_launch_mode(orig ? ::ptb::LaunchMode::original : ::ptb::LaunchMode::ptb);
      float ms = detail::time_once(stream, launch, a, b);
      (orig ? t_orig : t_ptb).push_back(ms);
    }
  }
  ::ptb::set_launch_mode(saved);
  float mo = detail::median(t_orig), mp = detail::median(t_ptb);
  printf("BENCH %s %.4f %.4f %.4f\n", name, mo, mp, mp / mo);
  if (mo < 0.1f) printf("NOTE %s: original launch takes %.4f ms (< 0.1 ms)\n", name, mo);
#else
  std::vector<float> t;
  for (int w = 0; w < warmup; ++w) detail::time_once(stream, launch, a, b);
  for (int r = 0; r < reps; ++r) t.push_back(detail::time_once(stream, launch, a, b));
  printf("NOTE %s: --bench compares launch modes only in the transformed build (PTB_RUNTIME_VERSION is not "
         "defined); original launch median %.4f ms%s\n",
         name, detail::median(t), detail::median(t) < 0.1f ? " (< 0.1 ms!)" : "");
#endif
  CUDA_CHECK(cudaEventDestroy(a));
  CUDA_CHECK(cudaEventDestroy(b));
  CUDA_CHECK(cudaDeviceSynchronize());
  return 0;
}

template <class F>
inline int bench(const char* name, F&& launch, int reps = 25) {
  return bench(name, (cudaStream_t)0, launch, reps);
}

// 32-bit mixing hash, usable on host and device (tests use it to make block/thread-dependent values).
__host__ __device__ inline uint32_t hash32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

}  // namespace tg

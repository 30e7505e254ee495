// ptb/fallback.cuh: launches that a policy covered but that ran the original kernel instead (a fallback):
// why, how many, and who is told.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "detail/policy_state.cuh"
#include "detail/runtime.cuh"

#if defined(__GNUC__) && __has_include(<cxxabi.h>)
#include <cxxabi.h>
#define PTB_DETAIL_HAS_CXXABI 1
#endif

namespace ptb {

// Why a launch ran its original kernel where a policy covered it (or PTB_MODE=ptb asked for its twin).
enum class Fallback : unsigned {
  invalid_launch,   // a grid, block or shared-memory size the device cannot run: the original launch
                    // fails as a plain launch would (counted, not reported: the program sees the error)
  context_error,    // the CUDA context reports an error before the launch (a sticky one such as
                    // cudaErrorIllegalAddress, left by an earlier kernel; or a bad stream): the original
                    // launch fails with it too
  too_many_tasks,   // 2^56 blocks or more (the task loop's limit)
  device_setup,     // the runtime could not set itself up on the device (memory, a stream), or could not
                    // put the thread in the relaxed capture mode to do so in a stream capture
  no_occupancy,     // the twin cannot place one block on an SM (more registers or shared memory than
                    // the original's), or its limits could not be read
  policy_upload,    // the policy's caps could not be written to the device
  no_control_block, // no free control block, and the pool could not grow (device memory is full)
  fusion_mismatch,  // a fused launch whose parts' launches do not match the fused kernel (block shape,
                    // stream, slots): the caller runs the parts' original kernels
};
constexpr unsigned kFallbackReasons = 8;

inline const char* fallback_name(Fallback f) {
  switch (f) {
  case Fallback::invalid_launch: return "invalid_launch";
  case Fallback::context_error: return "context_error";
  case Fallback::too_many_tasks: return "too_many_tasks";
  case Fallback::device_setup: return "device_setup";
  case Fallback::no_occupancy: return "no_occupancy";
  case Fallback::policy_upload: return "policy_upload";
  case Fallback::no_control_block: return "no_control_block";
  case Fallback::fusion_mismatch: return "fusion_mismatch";
  }
  return "unknown";
}

// What a report says: the first fallback of one kernel for one reason.
struct FallbackReport {
  Fallback reason;
  const void* kernel;      // the original kernel's address
  std::string kernel_name; // demangled where the name could be read, else empty
  int device;
  cudaError_t error;   // context_error: the error the context reported; else cudaSuccess
  std::string message; // the line printed on stderr when no hook is set
};

// Called instead of printing on stderr, once per kernel and reason (from the launching thread, with no
// lock of the runtime held). An empty function restores printing.
inline void set_fallback_hook(std::function<void(const FallbackReport&)> hook);

// Fallbacks of the process so far, for one reason or in all.
inline unsigned long long fallback_count(Fallback reason);
inline unsigned long long fallback_count();

namespace detail {

struct FallbackLog {
  std::atomic<unsigned long long> counts[kFallbackReasons] = {};
  std::mutex __m; // reported and hook
  std::set<std::pair<const void*, unsigned>> reported;
  std::function<void(const FallbackReport&)> hook;
};
inline FallbackLog& fallback_log() {
  static FallbackLog* log = new FallbackLog(); // never destroyed: launches may come during exit
  return *log;
}

// PTB_STRICT=1: a reported fallback ends the program (std::abort) after its report.
inline bool fallback_strict() {
  static const bool strict = [] {
    const char* e = std::getenv("PTB_STRICT");
    return e && e[0] == '1' && e[1] == '\0';
  }();
  return strict;
}

inline std::string kernel_name(const void* kernel) {
  const char* name = nullptr;
  if (cudaFuncGetName(&name, kernel) != cudaSuccess || !name) return std::string();
#ifdef PTB_DETAIL_HAS_CXXABI
  int status = 0;
  if (char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status)) {
    std::string s(d);
    std::free(d);
    return s;
  }
#endif
  return std::string(name);
}

inline const char* fallback_text(Fallback f) {
  switch (f) {
  case Fallback::invalid_launch: return "its launch configuration is invalid on this device";
  case Fallback::context_error: return "the CUDA context reports an error";
  case Fallback::too_many_tasks: return "its grid has 2^56 blocks or more";
  case Fallback::device_setup: return "the runtime could not set itself up on the device";
  case Fallback::no_occupancy: return "its twin cannot place a block on an SM";
  case Fallback::policy_upload: return "the policy's caps could not be written to the device";
  case Fallback::no_control_block: return "no control block was free";
  case Fallback::fusion_mismatch: return "its parts' launches do not match the fused kernel";
  }
  return "unknown reason";
}

// Count a fallback of `kernel` under `policy` (may be null), and report the first one of this kernel for
// this reason. `error`: the error behind a context_error. Call with no lock of the runtime held.
inline void note_fallback(Fallback reason, const void* kernel, PolicyState* policy, cudaError_t error) {
  FallbackLog& log = fallback_log();
  log.counts[static_cast<unsigned>(reason)].fetch_add(1, std::memory_order_relaxed);
  if (policy) {
    std::lock_guard<std::mutex> __g(rt().__m);
    ++policy->fallbacks;
  }
  if (reason == Fallback::invalid_launch) return; // the launch reports its error as a plain one would
  std::function<void(const FallbackReport&)> hook;
  {
    std::lock_guard<std::mutex> __g(log.__m);
    if (!log.reported.insert({kernel, static_cast<unsigned>(reason)}).second) return;
    hook = log.hook;
  }
  FallbackReport __r;
  __r.reason = reason;
  __r.kernel = kernel;
  __r.kernel_name = kernel_name(kernel);
  __r.device = -1;
  (void)cudaGetDevice(&__r.device);
  __r.error = reason == Fallback::context_error ? error : cudaSuccess;
  std::string what = fallback_text(reason);
  if (reason == Fallback::context_error) {
    what += " (";
    what += cudaGetErrorName(error);
    what += ")";
  }
  const bool ran = reason != Fallback::context_error;
  __r.message = "ptb: warning: kernel '" + (__r.kernel_name.empty() ? std::string("?") : __r.kernel_name) +
                "' on device " + std::to_string(__r.device) +
                (ran ? " ran its original kernel, unconfined: "
                     : " was not launched as its twin, and its original launch fails too: ") +
                what + " [fallback " + fallback_name(reason) + "; reported once per kernel and reason]";
  if (hook)
    hook(__r);
  else
    std::fprintf(stderr, "%s\n", __r.message.c_str());
  if (fallback_strict()) {
    std::fprintf(stderr, "ptb: PTB_STRICT=1: a launch under a policy ran its original kernel; aborting\n");
    std::abort();
  }
}

} // namespace detail

inline void set_fallback_hook(std::function<void(const FallbackReport&)> hook) {
  detail::FallbackLog& log = detail::fallback_log();
  std::lock_guard<std::mutex> __g(log.__m);
  log.hook = std::move(hook);
}

inline unsigned long long fallback_count(Fallback reason) {
  const unsigned __i = static_cast<unsigned>(reason);
  return __i < kFallbackReasons ? detail::fallback_log().counts[__i].load(std::memory_order_relaxed) : 0;
}
inline unsigned long long fallback_count() {
  unsigned long long n = 0;
  for (unsigned __i = 0; __i < kFallbackReasons; ++__i) n += fallback_count(static_cast<Fallback>(__i));
  return n;
}

} // namespace ptb

// Helpers shared by the programs of bench/programs (README.md there): error checks, the GPU timer that
// starts before a program's first launch, arguments, and the one result line.
//
// A program prints, on success, exactly one line
//   PROGRAM <name> gpu_ms <ms> launches <n> form <original|ptb-auto|ptb-ptb|ptb-original> runtime <none|set-up>
// where gpu_ms is the time between two cudaEvents in the legacy default stream: one recorded before the
// program's first kernel launch, one after its last (so the first launch's set-up counts), and form says
// which build and launch mode ran (a transformed build includes <ptb/ptb.cuh>, which defines
// PTB_RUNTIME_VERSION), and runtime whether the PTB runtime set up its device state (runtime_state()).
// On a wrong result it prints "FAIL <name>: ..." and exits with status 1.
#pragma once
#include <cuda_runtime.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace bp {

inline const char*& program_name() {
  static const char* n = "?";
  return n;
}

[[noreturn]] inline void fail(const char* fmt, ...) {
  std::printf("FAIL %s: ", program_name());
  va_list ap;
  va_start(ap, fmt);
  std::vprintf(fmt, ap);
  va_end(ap);
  std::printf("\n");
  std::fflush(stdout);
  std::exit(1);
}

#define BP_CK(x)                                                                                 \
  do {                                                                                           \
    cudaError_t e_ = (x);                                                                        \
    if (e_ != cudaSuccess) ::bp::fail("%s:%d: %s -> %s", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
  } while (0)

// `--name value` from the command line, else `def`.
inline long arg(int argc, char** argv, const char* name, long def) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::strtol(argv[i + 1], nullptr, 10);
  return def;
}

// Deterministic values from an index (host and device).
__host__ __device__ inline uint32_t hash32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

// cudaEvents in the legacy default stream around the GPU part of a program. Create it (and the data)
// before start(); start() right before the first launch; stop() after the last one: it waits for the
// GPU and returns the milliseconds between the two.
struct Timer {
  cudaEvent_t a, b;
  Timer() {
    BP_CK(cudaEventCreate(&a));
    BP_CK(cudaEventCreate(&b));
  }
  void start() { BP_CK(cudaEventRecord(a, 0)); }
  float stop() {
    BP_CK(cudaEventRecord(b, 0));
    BP_CK(cudaEventSynchronize(b));
    BP_CK(cudaGetLastError());  // a launch that failed must not pass for a fast one
    float ms = 0;
    BP_CK(cudaEventElapsedTime(&ms, a, b));
    return ms;
  }
};

// Which build and launch mode ran: "original" (the original build), else "ptb-" and the runtime's launch
// mode as PTB_MODE spells it (ptb-auto, ptb-ptb, ptb-original).
inline std::string form() {
#ifdef PTB_RUNTIME_VERSION
  return std::string("ptb-") + ::ptb::launch_mode_name(::ptb::launch_mode());
#else
  return "original";
#endif
}

// Whether the PTB runtime set up its state for the device (SM discovery, control slots, pinned memory):
// "set-up" or "none" (always "none" in the original build). A launch dispatched to the original
// kernel by the automatic mode sets up nothing.
inline const char* runtime_state() {
#ifdef PTB_RUNTIME_VERSION
  return ::ptb::runtime_set_up() ? "set-up" : "none";
#else
  return "none";
#endif
}

inline void result(float ms, unsigned long long launches) {
  std::printf("PROGRAM %s gpu_ms %.4f launches %llu form %s runtime %s\n", program_name(), ms, launches, form().c_str(),
              runtime_state());
}

}  // namespace bp

// ptb/launch_mode.cuh: how ptb::launch runs a kernel (LaunchMode: automatic, ptb, original; PTB_MODE).
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ptb {

// How ptb::launch (and launch_kernel_args) runs a kernel. Process-wide; the initial value comes from
// PTB_MODE (auto|ptb|original; unset: automatic). docs/design/dispatch-by-need.md.
//  - automatic: the twin only where a policy can confine or yield the launch: a Policy given for the
//    launch (LaunchConfig::policy) or set on its stream (set_stream_policy), or a process policy that
//    restricts (PTB_SMS, PTB_BLOCKS_PER_SM, or process_policy().set with fewer SMs or a cap). Every
//    other launch runs the original kernel through one cudaLaunchKernel and touches none of the
//    runtime's state (no device set-up, no lock, no thread): it costs what <<<>>> costs.
//  - ptb: the twin for every launch the runtime can run as a twin.
//  - original: the original kernel for every launch, whatever the policies.
enum class LaunchMode { ptb, original, automatic };

namespace detail {
constexpr int kModePtb = 0, kModeOriginal = 1, kModeAutomatic = 2;
inline int mode_from_env() {
  const char* e = std::getenv("PTB_MODE");
  if (!e || !*e || std::strcmp(e, "auto") == 0 || std::strcmp(e, "automatic") == 0) return kModeAutomatic;
  if (std::strcmp(e, "ptb") == 0) return kModePtb;
  if (std::strcmp(e, "original") == 0) return kModeOriginal;
  std::fprintf(stderr, "ptb: PTB_MODE=%s not understood (auto, ptb or original); using auto\n", e);
  return kModeAutomatic;
}
inline std::atomic<int>& mode_word() {
  static std::atomic<int> __m{mode_from_env()};
  return __m;
}
} // namespace detail

inline void set_launch_mode(LaunchMode __m) {
  detail::mode_word().store(__m == LaunchMode::original ? detail::kModeOriginal
                            : __m == LaunchMode::ptb    ? detail::kModePtb
                                                        : detail::kModeAutomatic,
                            std::memory_order_relaxed);
}
inline LaunchMode launch_mode() {
  const int __m = detail::mode_word().load(std::memory_order_relaxed);
  return __m == detail::kModeOriginal ? LaunchMode::original
         : __m == detail::kModePtb    ? LaunchMode::ptb
                                      : LaunchMode::automatic;
}
// How PTB_MODE spells a mode: "auto", "ptb" or "original" (benchmarks print it beside their results).
inline const char* launch_mode_name(LaunchMode __m) {
  return __m == LaunchMode::ptb ? "ptb" : __m == LaunchMode::original ? "original" : "auto";
}

} // namespace ptb

// The original given part of the GPU, as the reference of a confined twin (issue 41: "confined to half of the SMs,
// <= 1.05x the original in a 64-SM green context"). Preloaded into an original program (run_on_gpu.sh --half:
// LD_PRELOAD with GREEN_SMS=K), it makes a green context of K SMs of device 0 current on the loading thread before
// the program's first CUDA call, so that the program's CUDA runtime, which uses the thread's current context,
// runs every call and launch there. Single-threaded programs only (other threads would use the primary context).
// Says "green_preload: K of N SMs" on standard error; exits 3 when the driver refuses, so that the run counts as
// failed rather than as the whole GPU. The green context: bench/colocate/green_context.h.
#include <cuda.h>

#include <cstdio>
#include <cstdlib>

#include "../../colocate/green_context.h"

namespace {

__attribute__((constructor)) void enter_at_load() {
  const char* env = std::getenv("GREEN_SMS");
  const unsigned want = env ? static_cast<unsigned>(std::strtoul(env, nullptr, 10)) : 0;
  if (want == 0) {
    std::fprintf(stderr, "green_preload: GREEN_SMS not set\n");
    std::exit(3);
  }
  unsigned got = 0, total = 0;
  if (!colo::enter_green_context("green_preload", want, &got, &total)) {
    std::fprintf(stderr, "green_preload: no green context of %u SMs\n", want);
    std::exit(3);
  }
  std::fprintf(stderr, "green_preload: %u of %u SMs\n", got, total);
}

}  // namespace

// ptb/detail/last_error.cuh: the program's pending CUDA error, kept across the runtime's own calls.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

namespace ptb {

namespace detail {

// The thread's last error is the program's. Where the runtime's own calls failed (a fallback, a policy
// that could not be written to a device), drop_ours() clears what they left there, but only when nothing
// was pending before them: a pending error of the program's stays for its cudaGetLastError (a fallback's
// original launch then sets the last error as a plain launch would).
struct LastErrorGuard {
  const cudaError_t before = cudaPeekAtLastError();
  void drop_ours() const {
    if (before == cudaSuccess) (void)cudaGetLastError();
  }
};

} // namespace detail

} // namespace ptb

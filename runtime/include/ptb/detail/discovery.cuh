// ptb/detail/discovery.cuh: the SM ids a device reports, found once per device by a small kernel.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "config.cuh"
#include "device_state.cuh"
#include "host_stamps.cuh"
#include "intrinsics.cuh"

namespace ptb {

namespace detail {

// A template, so that the header can be included by several translation units of one program.
template <int _Unused = 0> __global__ void discover_sms_kernel(unsigned* seen) {
  if (threadIdx.x == 0) {
    seen[smid() % kMaxSm] = 1;
    if (blockIdx.x == 0) seen[kMaxSm] = nsmid();
  }
}

// The discovery kernel's host address, as one of the program's modules registered it. Every translation
// unit that includes the runtime instantiates the kernel and stores its address here when the program
// starts, except one compiled with PTB_DISCOVERY_ELSEWHERE: the main output of ptb-transform
// --twins-apart, whose module then holds no kernel of the runtime (its first launch loads less); its twins
// part instantiates the kernel, and the runtime needs it only when a twin first runs
// (docs/reference/generated-code.md, "Twins apart"). Null when no translation unit did (set-up then fails, and the
// launches run the original kernels).
inline std::atomic<const void*>& discovery_kernel() {
  static std::atomic<const void*> kernel{nullptr};
  return kernel;
}

#ifndef PTB_DISCOVERY_ELSEWHERE
inline const bool discovery_kernel_registered =
    (discovery_kernel().store(reinterpret_cast<const void*>(discover_sms_kernel<0>)), true);
#endif

// Find the SM ids the device reports (once per device). Identity mapping if not every SM was seen.
inline void discover_locked(DeviceState& d) {
  if (d.discovered) return;
  d.discovered = true;
  for (unsigned __i = 0; __i < kMaxSm; ++__i) d.dense_of[__i] = -1;
  unsigned* buf = nullptr;
  std::vector<unsigned> h(kMaxSm + 1, 0);
  bool ok = cudaMalloc(&buf, (kMaxSm + 1) * sizeof(unsigned)) == cudaSuccess;
  ok = ok && cudaMemsetAsync(buf, 0, (kMaxSm + 1) * sizeof(unsigned), d.ctl) == cudaSuccess;
  const void* kernel = discovery_kernel().load();
  ok = ok && kernel;
  if (ok) {
    // cudaLaunchKernel returns the launch's own error: no cudaGetLastError, which would also clear an
    // error the user has not read yet.
    void* argv[] = {&buf};
    ok = cudaLaunchKernel(kernel, dim3(d.sms * 32), dim3(32), argv, 0, d.ctl) == cudaSuccess;
  }
  ok = ok &&
       cudaMemcpyAsync(h.data(), buf, (kMaxSm + 1) * sizeof(unsigned), cudaMemcpyDeviceToHost, d.ctl) == cudaSuccess;
  ok = ok && cudaStreamSynchronize(d.ctl) == cudaSuccess;
  // buf is not freed: cudaFree waits for the device, and a paused PTB kernel may be waiting for this
  // very thread (a policy change). 1 KB once per device.
  unsigned n = 0;
  if (ok)
    for (unsigned __i = 0; __i < kMaxSm; ++__i)
      if (h[__i]) ++n;
  if (ok && n == static_cast<unsigned>(d.sms)) {
    unsigned __k = 0;
    for (unsigned __i = 0; __i < kMaxSm; ++__i)
      if (h[__i]) {
        d.dense_of[__i] = static_cast<int>(__k);
        d.raw_of[__k++] = static_cast<int>(__i);
      }
    d.nsmid = h[kMaxSm];
  } else {
    for (int __i = 0; __i < d.sms && __i < static_cast<int>(kMaxSm); ++__i) {
      d.dense_of[__i] = __i;
      d.raw_of[__i] = __i;
    }
    d.nsmid = static_cast<unsigned>(d.sms);
  }
  d.ndense = static_cast<unsigned>(std::min<int>(d.sms, kMaxSm));
  host_stamp("discover");
}

} // namespace detail

} // namespace ptb

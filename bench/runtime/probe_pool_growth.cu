// What growing the runtime's pool of control blocks costs the launching thread while the GPU is busy
// (issue 10: single launches over the stress test's time bound when hundreds of launches were in flight;
// issue 41: the first page is paid by a program's first twin launch). Calls the runtime's own
// detail::grow_pool_locked on a device state of its own, six pages one after the other, each while a 20 ms
// kernel runs in another stream; prints each call's steps (the runtime's host stamps), the page's size, and
// whether that kernel was still running after it (no call waited for it).
//   nvcc -std=c++17 -arch=sm_90 -O2 -I runtime/include bench/runtime/probe_pool_growth.cu -o probe_pool_growth
#define PTB_DEBUG_HOST_STAMPS 1
#include <chrono>
#include <cstdio>
#include <string>

static std::chrono::steady_clock::time_point g_last;
static std::string g_steps;
void ptb_debug_host_stamp(const char* what) {
  const auto now = std::chrono::steady_clock::now();
  char b[96];
  std::snprintf(b, sizeof b, " %s %.1f us,", what, std::chrono::duration<double, std::micro>(now - g_last).count());
  g_steps += b;
  g_last = now;
}

#include <ptb/ptb.cuh>

__global__ void spin_ms(unsigned ms) {
  const unsigned long long t0 = ptb::detail::globaltimer();
  while (ptb::detail::globaltimer() - t0 < ms * 1000000ull) {
  }
}

int main() {
  cudaStream_t busy;
  ptb::detail::DeviceState d;
  cudaStreamCreateWithFlags(&busy, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&d.ctl, cudaStreamNonBlocking);
  spin_ms<<<1, 32, 0, busy>>>(1);  // load the kernel and warm the context
  cudaDeviceSynchronize();
  for (int page = 0; page < 6; ++page) {
    spin_ms<<<1, 32, 0, busy>>>(20);
    const unsigned before = d.pool_size();
    g_steps.clear();
    const auto t0 = std::chrono::steady_clock::now();
    g_last = t0;
    const bool ok = ptb::detail::grow_pool_locked(d);
    const double total_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    const bool still_running = cudaStreamQuery(busy) == cudaErrorNotReady;
    std::printf("page %d: %s, %u control blocks (%zu B);%s total %.1f us; 20 ms kernel still running after: %s\n",
                page, ok ? "grown" : "FAILED", d.pool_size() - before,
                sizeof(ptb::detail::ControlBlock) * (d.pool_size() - before), g_steps.c_str(), total_us,
                still_running ? "yes" : "NO");
    cudaDeviceSynchronize();
  }
  std::printf("last error: %s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}

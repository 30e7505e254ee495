// What growing the runtime's pool of control blocks costs the launching thread while the GPU is busy
// (issue 10: single launches over the stress test's time bound when hundreds of launches were in flight).
// The calls of detail::grow_pool_locked, one by one, host-timed, while a 20 ms kernel runs in another
// stream; then whether that kernel was still running (no call waited for it).
//   nvcc -std=c++17 -arch=sm_90 -O2 -I runtime/include bench/runtime/probe_pool_growth.cu -o probe_pool_growth
#include <ptb/ptb.cuh>
#include <chrono>
#include <cstdio>

__global__ void spin_ms(unsigned ms) {
  const unsigned long long t0 = ptb::detail::globaltimer();
  while (ptb::detail::globaltimer() - t0 < ms * 1000000ull) {
  }
}

static double us_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t).count();
}

int main() {
  cudaStream_t busy, ctl;
  cudaStreamCreateWithFlags(&busy, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&ctl, cudaStreamNonBlocking);
  spin_ms<<<1, 32, 0, busy>>>(1);  // load the kernel and warm the context
  cudaDeviceSynchronize();
  const size_t bytes = sizeof(ptb::detail::ControlBlock) * ptb::detail::kPoolPageSize;
  for (int rep = 0; rep < 5; ++rep) {
    spin_ms<<<1, 32, 0, busy>>>(20);
    const auto t0 = std::chrono::steady_clock::now();
    void* dev = nullptr;
    auto t = std::chrono::steady_clock::now();
    cudaMalloc(&dev, bytes);
    const double malloc_us = us_since(t);
    t = std::chrono::steady_clock::now();
    cudaMemsetAsync(dev, 0, bytes, ctl);
    const double memset_us = us_since(t);
    unsigned* h = nullptr;
    t = std::chrono::steady_clock::now();
    cudaHostAlloc(&h, 2 * sizeof(unsigned) * ptb::detail::kPoolPageSize, cudaHostAllocMapped);
    const double hostalloc_us = us_since(t);
    unsigned* dh = nullptr;
    t = std::chrono::steady_clock::now();
    cudaHostGetDevicePointer(reinterpret_cast<void**>(&dh), h, 0);
    const double devptr_us = us_since(t);
    t = std::chrono::steady_clock::now();
    cudaStreamSynchronize(ctl);
    const double sync_us = us_since(t);
    const double total_us = us_since(t0);
    const bool still_running = cudaStreamQuery(busy) == cudaErrorNotReady;
    std::printf("grow %d: cudaMalloc(%zu B) %.1f us, memset %.1f us, cudaHostAlloc %.1f us, device pointer %.1f us, "
                "sync %.1f us; total %.1f us; 20 ms kernel still running after: %s\n",
                rep, bytes, malloc_us, memset_us, hostalloc_us, devptr_us, sync_us, total_us, still_running ? "yes" : "NO");
    cudaDeviceSynchronize();
  }
  std::printf("last error: %s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}

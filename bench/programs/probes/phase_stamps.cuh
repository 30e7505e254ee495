// Phase stamps of a twin's workers (per_launch.sh): included with nvcc -include together with
// -DPTB_DEBUG_STAMPS, it defines the runtime's debug hook (ptb/detail/task_loop.cuh) so that every worker
// writes %globaltimer at its entry (0), when its first run is published (1), when it finds no task left (2),
// and worker 0 after the launch's close (3). The stamps go to host-mapped memory, overwritten by each
// launch, so at exit they hold the last launch's; the program then prints one line
//   STAMPS <workers> workers, us after the first entry: entry p50 .. | first run p50 .. | no task .. | close ..
// (percentiles over the workers). Mapped memory, not a __device__ array: at exit the CUDA runtime may
// already be gone, and host memory needs no CUDA call to read.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace phase_stamps {
constexpr int kWorkers = 4096;  // workers beyond this are not stamped
__device__ unsigned long long* slots;
struct Report {
  unsigned long long* h = nullptr;
  Report() {
    void* d = nullptr;
    if (cudaHostAlloc(reinterpret_cast<void**>(&h), 4 * kWorkers * sizeof *h, cudaHostAllocMapped) != cudaSuccess ||
        cudaHostGetDevicePointer(&d, h, 0) != cudaSuccess || cudaMemcpyToSymbol(slots, &d, sizeof d) != cudaSuccess) {
      h = nullptr;
      return;
    }
    std::fill(h, h + 4 * kWorkers, 0ull);
  }
  double at(int what, unsigned long long t0, double q) const {
    std::vector<double> v;
    for (int w = 0; w < kWorkers; ++w)
      if (h[w] && h[what * kWorkers + w] >= t0) v.push_back(static_cast<double>(h[what * kWorkers + w] - t0) / 1000.0);
    if (v.empty()) return -1.0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
  }
  ~Report() {
    if (h == nullptr) {
      std::printf("STAMPS none (no mapped memory)\n");
      return;
    }
    unsigned long long t0 = ~0ull;
    int n = 0;
    for (int w = 0; w < kWorkers; ++w)
      if (h[w]) {
        t0 = std::min(t0, h[w]);
        ++n;
      }
    const double close = h[3 * kWorkers] >= t0 ? static_cast<double>(h[3 * kWorkers] - t0) / 1000.0 : -1.0;
    std::printf("STAMPS %d workers, us after the first entry: entry p50 %.2f max %.2f | first run p50 %.2f max %.2f"
                " | no task p10 %.2f p50 %.2f p90 %.2f max %.2f | close %.2f\n",
                n, at(0, t0, .5), at(0, t0, 1), at(1, t0, .5), at(1, t0, 1), at(2, t0, .1), at(2, t0, .5), at(2, t0, .9),
                at(2, t0, 1), close);
  }
} report;
}  // namespace phase_stamps

__device__ void ptb_debug_stamp(int what, unsigned worker) {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  if (worker < phase_stamps::kWorkers && phase_stamps::slots != nullptr) phase_stamps::slots[what * phase_stamps::kWorkers + worker] = t;
}

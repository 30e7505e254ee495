// probe_end.cu: what the end of a launch costs on the device: a one-warp kernel that does what the last
// worker's close does (dependent atomics, fences, a store to host-mapped memory), timed with events
// against an empty kernel (median of 201 launches each, interleaved). Question: which of these lengthen a
// kernel by microseconds (docs/design/runtime.md, "What a persistent loop can reach": ~3 us close + ~4 us after it).
// Second part: an empty kernel launched plainly and as a PTB twin through ptb::launch (1 and 1056 tasks): event
// time (host enqueue included, as in tg::bench) and the host time of the launch call alone.
//   nvcc -O2 -arch=sm_90 -std=c++17 -I runtime/include -o probe_end probe_end.cu && ./probe_end
#include <cuda_runtime.h>

#include <chrono>

#include "ptb/ptb.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

// CUDA_CHECK and tg::detail::median: the GPU corpus harness (standalone use: no tg::init needed).
#include "../../test/gpu/common.cuh"

enum Kind { kEmpty, kStoreDev, kStoreMapped, kFenceStoreMapped, kAtomics6, kAtomicFence6, kAtomicAcqRel6, kFences6 };
const char* kName[] = {"empty",           "store device",        "store mapped",          "fence + store mapped",
                       "6 dep. atomics",  "6 (atomic + fence.sc)", "6 (atomic + fence.acq_rel)", "6 fence.sc"};

template <int K>
__global__ void end_kernel(unsigned* dev, unsigned* mapped) {
  if (threadIdx.x != 0) return;
  if constexpr (K == kStoreDev) *(volatile unsigned*)dev = 1;
  if constexpr (K == kStoreMapped) *(volatile unsigned*)mapped = 1;
  if constexpr (K == kFenceStoreMapped) {
    __threadfence();
    *(volatile unsigned*)mapped = 1;
  }
  if constexpr (K == kAtomics6 || K == kAtomicFence6 || K == kAtomicAcqRel6) {
    unsigned v = 0;
    for (int i = 0; i < 6; ++i) {
      v = atomicAdd(dev + (v & 1), 1u);  // each depends on the last
      if constexpr (K == kAtomicFence6) __threadfence();
      if constexpr (K == kAtomicAcqRel6) asm volatile("fence.acq_rel.gpu;" ::: "memory");
    }
    dev[8] = v;
  }
  if constexpr (K == kFences6) {
    for (int i = 0; i < 6; ++i) {
      *(volatile unsigned*)(dev + 16 + i) = i;
      __threadfence();
    }
  }
}

__global__ void empty_original(int*) {}
__global__ void empty_twin(int* p, const ptb::Launch launch) {
  ptb::run_tasks(launch, [&](const uint3, const dim3) { (void)p; });
}

using Fn = void (*)(unsigned*, unsigned*);
static const Fn fns[] = {end_kernel<0>, end_kernel<1>, end_kernel<2>, end_kernel<3>,
                         end_kernel<4>, end_kernel<5>, end_kernel<6>, end_kernel<7>};

int main() {
  cudaDeviceProp p;
  CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
  printf("device: %s\n", p.name);
  unsigned *dev, *hmap, *dmap;
  CUDA_CHECK(cudaMalloc(&dev, 4096));
  CUDA_CHECK(cudaMemset(dev, 0, 4096));
  CUDA_CHECK(cudaHostAlloc(&hmap, 4096, cudaHostAllocMapped));
  CUDA_CHECK(cudaHostGetDevicePointer((void**)&dmap, hmap, 0));
  const int n = sizeof(fns) / sizeof(fns[0]), reps = 201;
  cudaEvent_t a, b;
  CUDA_CHECK(cudaEventCreate(&a));
  CUDA_CHECK(cudaEventCreate(&b));
  std::vector<std::vector<float>> t(n);
  for (int r = 0; r < reps + 10; ++r)
    for (int k = 0; k < n; ++k) {
      CUDA_CHECK(cudaEventRecord(a));
      fns[k]<<<1, 32>>>(dev, dmap);
      CUDA_CHECK(cudaEventRecord(b));
      CUDA_CHECK(cudaEventSynchronize(b));
      float ms;
      CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
      if (r >= 10) t[k].push_back(ms * 1000.f);
    }
  for (int k = 0; k < n; ++k) {
    std::sort(t[k].begin(), t[k].end());
    printf("  END %-28s median %6.2f us  (p10 %6.2f, p90 %6.2f)\n", kName[k], t[k][reps / 2], t[k][reps / 10],
           t[k][reps * 9 / 10]);
  }
  // plain vs PTB launch of an empty kernel
  for (unsigned grid : {1u, 1056u}) {
    std::vector<float> ev[2], host[2];
    for (int r = 0; r < reps + 10; ++r)
      for (int k = 0; k < 2; ++k) {
        ptb::set_launch_mode(k ? ptb::LaunchMode::ptb : ptb::LaunchMode::original);
        CUDA_CHECK(cudaEventRecord(a));
        const auto h0 = std::chrono::steady_clock::now();
        ptb::launch(ptb::LaunchConfig(grid, 256), empty_original, empty_twin, (int*)dev);
        const auto h1 = std::chrono::steady_clock::now();
        CUDA_CHECK(cudaEventRecord(b));
        CUDA_CHECK(cudaEventSynchronize(b));
        float ms;
        CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
        if (r >= 10) {
          ev[k].push_back(ms * 1000.f);
          host[k].push_back(std::chrono::duration<float, std::micro>(h1 - h0).count());
        }
      }
    for (int k = 0; k < 2; ++k) {
      std::sort(ev[k].begin(), ev[k].end());
      std::sort(host[k].begin(), host[k].end());
      printf("  LAUNCH %-9s %4u tasks: event median %6.2f us, host call median %6.2f us\n", k ? "ptb" : "original",
             grid, ev[k][reps / 2], host[k][reps / 2]);
    }
  }
  return 0;
}

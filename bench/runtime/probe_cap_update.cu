// How fast can the host change a word that running persistent workers read (the SM caps of a policy)?
// Every SM runs workers that poll one device word (thread 0 of each block, every ~200 ns) while the rest
// of the block keeps the SM busy (idle spin, or streaming DRAM loads with --busy). The host writes a new
// value by each method below and measures, on the host clock, from just before the call until every
// worker has reported seeing it (each worker bumps a host-mapped counter). Median / max of --reps.
//   A memcpy-async      cudaMemcpyAsync from pinned memory on a non-blocking stream (no wait)
//   B memcpy+sync       the same followed by cudaStreamSynchronize (what Policy::set does today)
//   C memcpy-prio       A on the highest-priority stream
//   D write-value       cuStreamWriteValue32 (driver entry point) on a non-blocking stream
//   E mapped            the word itself in host-mapped memory, written by a host store (workers read it
//                       through PCIe: the baseline, not a candidate for per-task reads)
// Also prints how long the call itself took on the host (median).
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// CUDA_CHECK: the GPU corpus harness's (it exits with the call, file and line on an error).
#include "../../test/gpu/common.cuh"

__global__ void workers(const volatile unsigned* word, unsigned* dev_count, unsigned* host_count,
                        const volatile unsigned* stop, const float4* data, size_t n, float* sink, int busy) {
  // stop and dev_count are device memory: only the method's word may be host memory. The last worker to
  // see a change tells the host once (one PCIe write per change, not one per worker).
  __shared__ unsigned last;
  __shared__ volatile unsigned stopping;
  if (threadIdx.x == 0) {
    last = *word;
    stopping = 0;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (;;) {
      if (*stop) break;
      const unsigned v = *word;
      if (v != last) {
        last = v;
        if (atomicAdd(dev_count, 1u) % gridDim.x == gridDim.x - 1) {
          __threadfence_system();
          atomicAdd_system(host_count, gridDim.x);
        }
      }
      __nanosleep(200);
    }
    stopping = 1;
  } else if (busy) {
    float acc = 0.f;
    size_t i = (blockIdx.x * blockDim.x + threadIdx.x) % n;
    while (!stopping) {
      for (int k = 0; k < 64; ++k) {
        float4 v = data[i];
        acc += v.x + v.w;
        i += gridDim.x * blockDim.x;
        if (i >= n) i -= n;
      }
    }
    if (acc == 12345.f) *sink = acc;
  }
}

using WriteValueFn = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

int main(int argc, char** argv) {
  int reps = 40, busy = 0, per_sm = 4;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (a == "--busy") busy = 1;
    else if (a == "--per-sm" && i + 1 < argc) per_sm = std::atoi(argv[++i]);
  }
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const int blocks = prop.multiProcessorCount * per_sm;
  std::printf("device %s, %d SMs, %d worker blocks of 256, %s\n", prop.name, prop.multiProcessorCount, blocks,
              busy ? "busy (DRAM streaming)" : "idle spin");

  unsigned *dword, *hmapped, *dmapped_word, *hcount, *dcount, *devcount, *dstop, *staging;
  CUDA_CHECK(cudaMalloc(&dword, 4));
  CUDA_CHECK(cudaMemset(dword, 0, 4));
  CUDA_CHECK(cudaHostAlloc(&hmapped, 4, cudaHostAllocMapped));
  CUDA_CHECK(cudaHostGetDevicePointer(&dmapped_word, hmapped, 0));
  CUDA_CHECK(cudaHostAlloc(&hcount, 4, cudaHostAllocMapped));
  CUDA_CHECK(cudaHostGetDevicePointer(&dcount, hcount, 0));
  CUDA_CHECK(cudaMalloc(&dstop, 4));
  CUDA_CHECK(cudaMalloc(&devcount, 4));
  CUDA_CHECK(cudaHostAlloc(&staging, 4, cudaHostAllocDefault));
  const size_t n = size_t(1) << 26;  // 1 GiB of float4
  float4* data;
  float* sink;
  CUDA_CHECK(cudaMalloc(&data, n * sizeof(float4)));
  CUDA_CHECK(cudaMemset(data, 0, n * sizeof(float4)));
  CUDA_CHECK(cudaMalloc(&sink, 4));

  cudaStream_t work, ctl, prio;
  int lo = 0, hi = 0;
  CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
  CUDA_CHECK(cudaStreamCreateWithFlags(&work, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithFlags(&ctl, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithPriority(&prio, cudaStreamNonBlocking, hi));
  WriteValueFn write_value = nullptr;
  cudaDriverEntryPointQueryResult q;
  if (cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", reinterpret_cast<void**>(&write_value), 12000, cudaEnableDefault, &q) !=
          cudaSuccess ||
      q != cudaDriverEntryPointSuccess)
    write_value = nullptr;

  const char* names[] = {"A memcpy-async", "B memcpy+sync", "C memcpy-prio", "D write-value", "E mapped"};
  for (int method = 0; method < 5; ++method) {
    if (method == 3 && !write_value) {
      std::printf("%-16s unavailable\n", names[method]);
      continue;
    }
    CUDA_CHECK(cudaMemset(dstop, 0, 4));
    CUDA_CHECK(cudaMemset(devcount, 0, 4));
    *hcount = 0;
    *hmapped = 0;
    CUDA_CHECK(cudaMemset(dword, 0, 4));
    CUDA_CHECK(cudaDeviceSynchronize());
    const unsigned* word = method == 4 ? dmapped_word : dword;
    workers<<<blocks, 256, 0, work>>>(word, devcount, dcount, dstop, data, n, sink, busy);
    CUDA_CHECK(cudaGetLastError());
    auto t_start = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - t_start < std::chrono::milliseconds(20)) {
    }
    std::vector<double> seen_us, call_us;
    for (int r = 1; r <= reps; ++r) {
      const unsigned target = static_cast<unsigned>(r) * blocks;
      const auto t0 = std::chrono::steady_clock::now();
      switch (method) {
        case 0: *staging = r; CUDA_CHECK(cudaMemcpyAsync(dword, staging, 4, cudaMemcpyHostToDevice, ctl)); break;
        case 1:
          *staging = r;
          CUDA_CHECK(cudaMemcpyAsync(dword, staging, 4, cudaMemcpyHostToDevice, ctl));
          CUDA_CHECK(cudaStreamSynchronize(ctl));
          break;
        case 2: *staging = r; CUDA_CHECK(cudaMemcpyAsync(dword, staging, 4, cudaMemcpyHostToDevice, prio)); break;
        case 3:
          if (write_value(reinterpret_cast<CUstream>(ctl), reinterpret_cast<CUdeviceptr>(dword), r, 0) != CUDA_SUCCESS) {
            std::fprintf(stderr, "cuStreamWriteValue32 failed\n");
            return 1;
          }
          break;
        case 4: *reinterpret_cast<volatile unsigned*>(hmapped) = r; break;
      }
      const auto t1 = std::chrono::steady_clock::now();
      while (*reinterpret_cast<volatile unsigned*>(hcount) < target) {
        if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(2)) {
          std::printf("%-16s timed out at rep %d (%u of %u seen)\n", names[method], r, *hcount, target);
          break;
        }
      }
      const auto t2 = std::chrono::steady_clock::now();
      seen_us.push_back(std::chrono::duration<double, std::micro>(t2 - t0).count());
      call_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      // let the workers settle
      const auto t3 = std::chrono::steady_clock::now();
      while (std::chrono::steady_clock::now() - t3 < std::chrono::microseconds(300)) {
      }
      CUDA_CHECK(cudaStreamSynchronize(ctl));
      CUDA_CHECK(cudaStreamSynchronize(prio));
    }
    const unsigned one = 1;
    CUDA_CHECK(cudaMemcpyAsync(dstop, &one, 4, cudaMemcpyHostToDevice, ctl));
    CUDA_CHECK(cudaStreamSynchronize(work));
    std::sort(seen_us.begin(), seen_us.end());
    std::sort(call_us.begin(), call_us.end());
    std::printf("%-16s all workers saw it: median %7.1f us  p90 %7.1f  max %7.1f   host call median %6.1f us\n",
                names[method], seen_us[seen_us.size() / 2], seen_us[seen_us.size() * 9 / 10], seen_us.back(),
                call_us[call_us.size() / 2]);
  }
  return 0;
}

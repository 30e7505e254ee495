// Which SMs does an MPS client limited by CUDA_MPS_ACTIVE_THREAD_PERCENTAGE run on? (issue 40: can BE keep SMs
// that the LS service's process cannot use, without touching the LS program?)
//
//   nvcc -std=c++17 -O2 -arch=sm_90 -o mps_sms bench/colocate/probes/mps_sms.cu
//   ./mps_sms [launches]      (under MPS; bench/colocate/probes/mps_sms.sh runs it at several percentages)
//
// Each launch is 8 blocks per SM of the device, each block spinning about 20 us and recording its %smid; the
// program prints, per launch, how many distinct SMs ran blocks and their list as ranges, and "SAME" or
// "DIFFERENT" for whether every launch used the same set.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

__global__ void record_smid(unsigned* out, long long spin) {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  const long long t0 = clock64();
  while (clock64() - t0 < spin) {
  }
  if (threadIdx.x == 0) out[blockIdx.x] = id;
}

static std::string ranges(const std::vector<int>& on) {
  std::string s;
  for (size_t i = 0; i < on.size();) {
    if (!on[i]) { ++i; continue; }
    size_t j = i;
    while (j + 1 < on.size() && on[j + 1]) ++j;
    if (!s.empty()) s += ",";
    s += std::to_string(i);
    if (j > i) s += "-" + std::to_string(j);
    i = j + 1;
  }
  return s;
}

int main(int argc, char** argv) {
  const int launches = argc > 1 ? std::atoi(argv[1]) : 3;
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) { std::fprintf(stderr, "mps_sms: no GPU\n"); return 1; }
  int clock_khz = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
  const int blocks = 8 * p.multiProcessorCount;
  unsigned* d = nullptr;
  if (cudaMalloc(&d, blocks * sizeof(unsigned)) != cudaSuccess) return 1;
  std::vector<unsigned> h(blocks);
  std::string first;
  bool same = true;
  for (int l = 0; l < launches; ++l) {
    cudaMemset(d, 0xff, blocks * sizeof(unsigned));
    record_smid<<<blocks, 128>>>(d, 20LL * clock_khz / 1000);
    if (cudaDeviceSynchronize() != cudaSuccess) { std::fprintf(stderr, "mps_sms: launch failed\n"); return 1; }
    cudaMemcpy(h.data(), d, blocks * sizeof(unsigned), cudaMemcpyDeviceToHost);
    std::vector<int> on(p.multiProcessorCount, 0);
    int n = 0;
    for (unsigned id : h) {
      if (id >= static_cast<unsigned>(p.multiProcessorCount)) { std::fprintf(stderr, "mps_sms: block not run\n"); return 1; }
      if (!on[id]) ++n;
      on[id] = 1;
    }
    const std::string r = ranges(on);
    if (l == 0) first = r;
    else if (r != first) same = false;
    std::printf("launch %d: %d of %d SMs: %s\n", l, n, p.multiProcessorCount, r.c_str());
  }
  std::printf("%s\n", same ? "SAME" : "DIFFERENT");
  return 0;
}

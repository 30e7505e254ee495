// Probe of CUDA green contexts on the GPU machine (issue 10, docs/results/progress-under-policy.md, "Tried and
// taken out", green contexts): what SM partitions the driver offers, which %smid values each holds, and whether a
// kernel launched into a full partition waits there (its blocks pending in the hardware) while SMs
// outside the partition are free. That is the property a stranded launch lacks.
//
//   nvcc -std=c++17 -O2 -arch=sm_90 -o green_ctx_probe test/gpu/stress/green_ctx_probe.cu -lcuda
//   ./green_ctx_probe
//
// Prints the SM resource (count, minimum partition, alignment), each partition's %smid values, then the
// wait test: a blocker fills partition 0 for ~20 ms, a second kernel is launched into partition 0 and a
// third into the primary context; it prints when each started (globaltimer, us after the blocker) and
// on which SMs. Exit status 0 when every call succeeded (the printed facts are the result).
#include <cuda.h>
#include <cuda_runtime.h>

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <vector>

#define CU(x)                                                                       \
  do {                                                                              \
    CUresult r_ = (x);                                                              \
    if (r_ != CUDA_SUCCESS) {                                                       \
      const char* s_ = nullptr;                                                     \
      cuGetErrorString(r_, &s_);                                                    \
      std::printf("FAILED %s: %s (line %d)\n", #x, s_ ? s_ : "?", __LINE__);       \
      return 1;                                                                     \
    }                                                                               \
  } while (0)
#define RT(x)                                                                       \
  do {                                                                              \
    cudaError_t e_ = (x);                                                           \
    if (e_ != cudaSuccess) {                                                        \
      std::printf("FAILED %s: %s (line %d)\n", #x, cudaGetErrorString(e_), __LINE__); \
      return 1;                                                                     \
    }                                                                               \
  } while (0)

__device__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ unsigned smid() {
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}

// Each block records its SM and start time, then spins for `spin_ns`.
__global__ void stamp(unsigned* sm, unsigned long long* t0, unsigned long long spin_ns) {
  const unsigned long long start = now_ns();
  if (threadIdx.x == 0) {
    sm[blockIdx.x] = smid();
    t0[blockIdx.x] = start;
  }
  while (now_ns() - start < spin_ns) {
  }
}

struct Result {
  std::vector<unsigned> sm;
  std::vector<unsigned long long> t0;
};

static int launch_stamp(cudaStream_t s, unsigned blocks, unsigned threads, unsigned long long spin_ns,
                        unsigned** d_sm, unsigned long long** d_t0) {
  RT(cudaMalloc(d_sm, blocks * sizeof(unsigned)));
  RT(cudaMalloc(d_t0, blocks * sizeof(unsigned long long)));
  stamp<<<blocks, threads, 0, s>>>(*d_sm, *d_t0, spin_ns);
  RT(cudaGetLastError());
  return 0;
}
static int fetch(unsigned blocks, unsigned* d_sm, unsigned long long* d_t0, Result& r) {
  r.sm.resize(blocks);
  r.t0.resize(blocks);
  RT(cudaMemcpy(r.sm.data(), d_sm, blocks * sizeof(unsigned), cudaMemcpyDeviceToHost));
  RT(cudaMemcpy(r.t0.data(), d_t0, blocks * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  return 0;
}
static void print_sms(const char* what, const std::vector<unsigned>& v) {
  std::set<unsigned> s(v.begin(), v.end());
  std::printf("%s: %zu SMs:", what, s.size());
  for (unsigned x : s) std::printf(" %u", x);
  std::printf("\n");
}

int main() {
  RT(cudaFree(0));
  CUdevice dev;
  CU(cuDeviceGet(&dev, 0));
  CUcontext primary;
  CU(cuCtxGetCurrent(&primary));
  char name[256];
  CU(cuDeviceGetName(name, sizeof name, dev));
  int drv = 0;
  cuDriverGetVersion(&drv);
  std::printf("device: %s, driver API %d\n", name, drv);

  CUdevResource all;
  CU(cuDeviceGetDevResource(dev, &all, CU_DEV_RESOURCE_TYPE_SM));
  std::printf("SM resource: smCount %u, minSmPartitionSize %u, smCoscheduledAlignment %u\n", all.sm.smCount,
              all.sm.minSmPartitionSize, all.sm.smCoscheduledAlignment);

  // Partitions of the minimum size, as many as fit; the rest is left over.
  const unsigned min_count = all.sm.minSmPartitionSize;
  unsigned groups = 0;
  CU(cuDevSmResourceSplitByCount(nullptr, &groups, &all, nullptr, 0, min_count));
  std::vector<CUdevResource> part(groups);
  CUdevResource rest;
  CU(cuDevSmResourceSplitByCount(part.data(), &groups, &all, &rest, 0, min_count));
  std::printf("split by %u: %u partitions, %u SMs left over\n", min_count, groups, rest.sm.smCount);

  std::vector<CUgreenCtx> gctx(groups);
  std::vector<cudaStream_t> gstream(groups), gstream2(groups);
  std::vector<std::set<unsigned>> members(groups);
  for (unsigned g = 0; g < groups; ++g) {
    CUdevResourceDesc desc;
    CU(cuDevResourceGenerateDesc(&desc, &part[g], 1));
    CU(cuGreenCtxCreate(&gctx[g], desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
    CUstream s1, s2;
    CU(cuGreenCtxStreamCreate(&s1, gctx[g], CU_STREAM_NON_BLOCKING, 0));
    CU(cuGreenCtxStreamCreate(&s2, gctx[g], CU_STREAM_NON_BLOCKING, 0));
    gstream[g] = reinterpret_cast<cudaStream_t>(s1);
    gstream2[g] = reinterpret_cast<cudaStream_t>(s2);
    // Which SMs: many short blocks launched into the partition's stream (through the runtime API).
    const unsigned blocks = 2048;
    unsigned* d_sm;
    unsigned long long* d_t0;
    if (launch_stamp(gstream[g], blocks, 128, 2000, &d_sm, &d_t0)) return 1;
    RT(cudaStreamSynchronize(gstream[g]));
    Result r;
    if (fetch(blocks, d_sm, d_t0, r)) return 1;
    members[g].insert(r.sm.begin(), r.sm.end());
    char what[64];
    std::snprintf(what, sizeof what, "partition %u (%u SMs)", g, part[g].sm.smCount);
    print_sms(what, r.sm);
    cudaFree(d_sm);
    cudaFree(d_t0);
  }

  // The wait test on partition 0: the blocker fills every SM of it (many blocks of 1024 threads, two per
  // SM fit: 2 x members x 2 blocks); then a waiter into partition 0 and a free kernel into the primary
  // context's stream.
  if (groups == 0) return 0;
  cudaStream_t plain;
  RT(cudaStreamCreateWithFlags(&plain, cudaStreamNonBlocking));
  const unsigned nb = 4 * static_cast<unsigned>(members[0].size());
  unsigned *b_sm, *w_sm, *f_sm;
  unsigned long long *b_t0, *w_t0, *f_t0;
  if (launch_stamp(gstream[0], nb, 1024, 20000000ull, &b_sm, &b_t0)) return 1;  // 20 ms
  // let the blocker's blocks reach their SMs
  struct timespec ts{0, 2000000};
  nanosleep(&ts, nullptr);
  if (launch_stamp(gstream2[0], 8, 128, 1000, &w_sm, &w_t0)) return 1;
  if (launch_stamp(plain, 8, 128, 1000, &f_sm, &f_t0)) return 1;
  RT(cudaDeviceSynchronize());
  Result b, w, f;
  if (fetch(nb, b_sm, b_t0, b) || fetch(8, w_sm, w_t0, w) || fetch(8, f_sm, f_t0, f)) return 1;
  const unsigned long long base = *std::min_element(b.t0.begin(), b.t0.end());
  const unsigned long long bend = *std::max_element(b.t0.begin(), b.t0.end());
  print_sms("blocker (partition 0)", b.sm);
  std::printf("blocker blocks started from 0 to %.1f us\n", (bend - base) / 1e3);
  print_sms("waiter (partition 0)", w.sm);
  std::printf("waiter started at %.1f us after the blocker (blocker spins 20000 us)\n",
              (*std::min_element(w.t0.begin(), w.t0.end()) - base) / 1e3);
  print_sms("free kernel (primary context)", f.sm);
  std::printf("free kernel started at %.1f us after the blocker\n",
              (*std::min_element(f.t0.begin(), f.t0.end()) - base) / 1e3);
  bool inside = true;
  for (unsigned s : w.sm) inside = inside && members[0].count(s);
  std::printf("waiter inside partition 0: %s\n", inside ? "yes" : "no");
  return 0;
}

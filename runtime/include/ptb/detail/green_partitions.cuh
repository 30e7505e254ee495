// ptb/detail/green_partitions.cuh: the device's SMs cut into partitions of CUDA green contexts (driver
// 12.4 and later), so that a stranded launch's resume workers can wait *inside* its set: a block launched
// into a green context's stream is dispatched only to that partition's SMs and waits in the hardware for
// room there, where a block of an ordinary stream lands on any SM with room (outside the set, when the
// set is full) and leaves. docs/runtime.md, "Resume workers that wait inside the set".
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
//
// Facts this relies on, measured on the H100 (test/gpu/stress/green_ctx_probe.cu, 2026-11-23): the driver
// offers partitions of 8 SMs (minSmPartitionSize 8, alignment 8): 15 of them and 12 SMs left over; each
// holds SMs of four GPCs (partition 0: %smid 0 1 16 17 32 33 48 49); a kernel launched into a full
// partition waited there (started after the blocker, on the partition's SMs) while a kernel of the primary
// context started at once on free SMs outside it.
//
// The driver's functions come from cudaGetDriverEntryPointByVersion: programs need not link libcuda.
// Nothing here waits for the device: the partitions' SMs are found by a small kernel per partition whose
// result is read once its event has passed (poll_green_locked); until then a partition is not used.
#pragma once
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "config.cuh"
#include "discovery.cuh"

namespace ptb {

namespace detail {

struct GreenPartition {
  cudaStream_t stream = nullptr;  // a stream of the partition's green context
  unsigned* seen = nullptr;       // device: discovery's output (kMaxSm + 1 words)
  unsigned* host = nullptr;       // pinned copy of it
  cudaEvent_t found = nullptr;    // passed: `host` holds the partition's SMs
  bool known = false;             // smids is filled
  std::vector<unsigned> smids;    // the partition's %smid values
  cudaEvent_t last = nullptr;     // after the last resume batch sent here
  unsigned last_rec = ~0u, last_gen = ~0u;  // whose batch that was
};

struct GreenPartitions {
  bool tried = false;
  std::vector<GreenPartition> parts;
  unsigned long long batches = 0;  // resume batches sent to partitions (for tests and reports)
};

// PTB_GREEN=0 turns the partitions off (resume workers then go to ordinary streams, as before).
inline bool green_enabled() {
  static const bool on = [] {
    const char* e = std::getenv("PTB_GREEN");
    return !(e && std::strcmp(e, "0") == 0);
  }();
  return on;
}

template <class F>
inline bool driver_fn(const char* name, unsigned version, F& f) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(name, &p, version, cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess || !p)
    return false;
  f = reinterpret_cast<F>(p);
  return true;
}

// Cut device `dev` (the current device) into green-context partitions of the smallest size the driver
// allows and start finding their SMs. Once per device; on any failure there are no partitions.
inline void create_green_partitions(int dev, unsigned sms, GreenPartitions& g) {
  if (g.tried) return;
  g.tried = true;
  if (!green_enabled()) return;
  PFN_cuDeviceGet_v2000 get_device;
  PFN_cuDeviceGetDevResource_v12040 get_resource;
  PFN_cuDevSmResourceSplitByCount_v12040 split;
  PFN_cuDevResourceGenerateDesc_v12040 describe;
  PFN_cuGreenCtxCreate_v12040 create;
  PFN_cuGreenCtxStreamCreate_v12050 stream_create;
  if (!driver_fn("cuDeviceGet", 2000, get_device) || !driver_fn("cuDeviceGetDevResource", 12040, get_resource) ||
      !driver_fn("cuDevSmResourceSplitByCount", 12040, split) ||
      !driver_fn("cuDevResourceGenerateDesc", 12040, describe) || !driver_fn("cuGreenCtxCreate", 12040, create) ||
      !driver_fn("cuGreenCtxStreamCreate", 12050, stream_create))
    return;
  CUdevice cu_dev;
  CUdevResource all;
  if (get_device(&cu_dev, dev) != CUDA_SUCCESS || get_resource(cu_dev, &all, CU_DEV_RESOURCE_TYPE_SM) != CUDA_SUCCESS)
    return;
  const unsigned size = all.sm.minSmPartitionSize;
  if (size == 0 || size >= all.sm.smCount) return;  // nothing smaller than the device
  unsigned n = 0;
  if (split(nullptr, &n, &all, nullptr, 0, size) != CUDA_SUCCESS || n == 0) return;
  std::vector<CUdevResource> res(n);
  CUdevResource rest;
  if (split(res.data(), &n, &all, &rest, 0, size) != CUDA_SUCCESS) return;
  std::vector<GreenPartition> parts;
  for (unsigned i = 0; i < n; ++i) {
    GreenPartition p;
    CUdevResourceDesc desc;
    CUgreenCtx ctx;
    CUstream s;
    if (describe(&desc, &res[i], 1) != CUDA_SUCCESS || create(&ctx, desc, cu_dev, CU_GREEN_CTX_DEFAULT_STREAM) != CUDA_SUCCESS ||
        stream_create(&s, ctx, CU_STREAM_NON_BLOCKING, 0) != CUDA_SUCCESS)
      return;  // contexts made so far stay (a few, once per process); none is used
    p.stream = reinterpret_cast<cudaStream_t>(s);
    bool ok = cudaMalloc(&p.seen, (kMaxSm + 1) * sizeof(unsigned)) == cudaSuccess &&
              cudaHostAlloc(&p.host, (kMaxSm + 1) * sizeof(unsigned), cudaHostAllocDefault) == cudaSuccess &&
              cudaEventCreateWithFlags(&p.found, cudaEventDisableTiming) == cudaSuccess &&
              cudaEventCreateWithFlags(&p.last, cudaEventDisableTiming) == cudaSuccess &&
              cudaMemsetAsync(p.seen, 0, (kMaxSm + 1) * sizeof(unsigned), p.stream) == cudaSuccess;
    if (ok) {
      void* argv[] = {&p.seen};
      ok = cudaLaunchKernel(reinterpret_cast<const void*>(discover_sms_kernel<0>), dim3(sms * 8), dim3(32), argv, 0,
                            p.stream) == cudaSuccess &&
           cudaMemcpyAsync(p.host, p.seen, (kMaxSm + 1) * sizeof(unsigned), cudaMemcpyDeviceToHost, p.stream) ==
               cudaSuccess &&
           cudaEventRecord(p.found, p.stream) == cudaSuccess;
    }
    if (!ok) return;
    parts.push_back(p);
  }
  g.parts = std::move(parts);
}

// Read the SMs of partitions whose discovery has finished (never waits).
inline void poll_green(GreenPartitions& g) {
  for (GreenPartition& p : g.parts) {
    if (p.known || cudaEventQuery(p.found) != cudaSuccess) continue;
    p.known = true;
    for (unsigned i = 0; i < kMaxSm; ++i)
      if (p.host[i]) p.smids.push_back(i);
  }
}

}  // namespace detail

}  // namespace ptb

// ptb/detail/pool.cuh: the pool of control blocks: growing it, taking a free control block for a launch.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include <cstring>

#include "control_block.cuh"
#include "device_state.cuh"

namespace ptb {

namespace detail {


// A new page of control blocks, zeroed, not yet in the pool: needs no lock (the monitor makes pages ahead
// of need outside the lock, see below). Measured on the H100 (bench/runtime/probe_pool_growth.cu,
// 2026-11-24): 0.34-1.04 ms of host time, mostly cudaMalloc of the page's 18 MB; no call waits for
// running kernels. False on a CUDA error (nothing is kept).
inline bool make_pool_page(cudaStream_t ctl, PoolPage& b) {
  b = PoolPage{};
  bool ok = cudaMalloc(&b.dev, sizeof(ControlBlock) * kPoolPageSize) == cudaSuccess;
  ok = ok && cudaMemsetAsync(b.dev, 0, sizeof(ControlBlock) * kPoolPageSize, ctl) == cudaSuccess;
  ok = ok && cudaHostAlloc(&b.hflags, 2 * sizeof(unsigned) * kPoolPageSize, cudaHostAllocMapped) == cudaSuccess;
  if (ok) {
    std::memset(b.hflags, 0, 2 * sizeof(unsigned) * kPoolPageSize);
    b.hstrand = b.hflags + kPoolPageSize;
    ok = cudaHostGetDevicePointer(reinterpret_cast<void**>(&b.dflags), b.hflags, 0) == cudaSuccess;
    b.dstrand = b.dflags + kPoolPageSize;
  }
  ok = ok && cudaStreamSynchronize(ctl) == cudaSuccess;
  if (!ok) {
    // Nothing of the page is in use yet (the memset, if any, has been waited for or failed).
    if (b.hflags) (void)cudaFreeHost(b.hflags);
    if (b.dev) (void)cudaFree(b.dev);
    b = PoolPage{};
  }
  return ok;
}

inline void add_pool_page_locked(DeviceState& d, const PoolPage& b) {
  d.pages.push_back(b);
  d.recs.resize(d.recs.size() + kPoolPageSize);
}

inline bool grow_pool_locked(DeviceState& d) {
  PoolPage b;
  if (!make_pool_page(d.ctl, b)) return false;
  add_pool_page_locked(d, b);
  return true;
}

// Whether the pool is nearly used up (fewer than a quarter of its control blocks free for launches): then
// the monitor adds a page ahead of need, so that a launch does not grow the pool itself (issue 10: with
// hundreds of launches in flight, a launch that grew the pool spent 0.53 ms in its launch call, over the
// stress test's time bound for a 14 us launch).
inline bool pool_nearly_full_locked(const DeviceState& d) {
  const unsigned n = d.pool_size();
  unsigned free = 0;
  for (unsigned i = 0; i < n; ++i)
    if (!d.recs[i].captured && *(volatile unsigned*)d.hflag(i) == 0) ++free;
  return 4 * free < n - d.ncaptured;
}

inline bool acquire_control_locked(DeviceState& d, bool captured, unsigned& out) {
  // Captured control blocks are never freed: keep at least half of the pool for ordinary launches by growing it
  // (outside captures, where growing is safe).
  if (!captured && 2 * (d.ncaptured + 64) > d.pool_size() && !grow_pool_locked(d)) return false;
  for (int round = 0; round < 2; ++round) {
    const unsigned n = d.pool_size();
    for (unsigned k = 0; k < n; ++k) {
      const unsigned i = (d.cursor + k) % n;
      if (d.recs[i].captured) continue;
      volatile unsigned* f = d.hflag(i);
      if (*f == 0) {
        *f = kBusy;
        d.cursor = (i + 1) % n;
        ControlRec& r = d.recs[i];
        r.captured = captured;
        if (captured) ++d.ncaptured;
        r.registered = false;
        r.relaunch = nullptr;
        r.seen_strand = *(volatile unsigned*)(d.pages[i / kPoolPageSize].hstrand + i % kPoolPageSize);
        out = i;
        return true;
      }
    }
    if (captured || !grow_pool_locked(d)) return false;
  }
  return false;
}

}  // namespace detail

}  // namespace ptb

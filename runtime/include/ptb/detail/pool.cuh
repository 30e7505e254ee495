// ptb/detail/pool.cuh: the pool of control blocks: growing it, taking a free control block for a launch.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include <cstring>

#include "control_block.cuh"
#include "device_state.cuh"

namespace ptb {

namespace detail {


inline bool grow_pool_locked(DeviceState& d) {
  PoolPage b;
  if (cudaMalloc(&b.dev, sizeof(ControlBlock) * kPoolPageSize) != cudaSuccess) return false;
  if (cudaMemsetAsync(b.dev, 0, sizeof(ControlBlock) * kPoolPageSize, d.ctl) != cudaSuccess) return false;
  if (cudaHostAlloc(&b.hflags, 2 * sizeof(unsigned) * kPoolPageSize, cudaHostAllocMapped) != cudaSuccess) return false;
  std::memset(b.hflags, 0, 2 * sizeof(unsigned) * kPoolPageSize);
  b.hstrand = b.hflags + kPoolPageSize;
  if (cudaHostGetDevicePointer(reinterpret_cast<void**>(&b.dflags), b.hflags, 0) != cudaSuccess) return false;
  b.dstrand = b.dflags + kPoolPageSize;
  if (cudaStreamSynchronize(d.ctl) != cudaSuccess) return false;
  d.pages.push_back(b);
  d.recs.resize(d.recs.size() + kPoolPageSize);
  return true;
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
        r.last_batch = r.last_strand = {};  // the batch limits are per launch: the block's last launch's must not delay this one
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

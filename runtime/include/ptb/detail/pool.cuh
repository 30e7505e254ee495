// ptb/detail/pool.cuh: the pool of control blocks: growing it, taking a free control block for a launch.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "control_block.cuh"
#include "device_state.cuh"
#include "host_stamps.cuh"

namespace ptb {

namespace detail {

// The host words of a page (free flags and strand counters) are the runtime's own memory, registered with
// CUDA, not memory from cudaHostAlloc: a cudaDeviceReset (or the CUDA runtime's teardown at exit) unmaps
// what CUDA allocated, and the monitor thread, which reads these words, would fault (a program that
// reset its device under a restricting policy died so). Registered memory stays readable
// after the registration is gone. It is never freed: a page lives as long as the process (kHostWordsBytes
// per 256 control blocks), also after a reset retired its device state (device_setup.cuh).
// The first page's registration also holds the device's staging bytes (a policy's caps and room on their way
// to the device: caps.cuh), after the words: one registration instead of a cudaHostAlloc, which took 1.2-1.3 ms
// on the H200 as the first pinned allocation of a process (bench/programs/first_twin.sh, 2026-11-29), the
// largest step of a device's set-up.
constexpr size_t kHostWordsBytes = 4096;
constexpr size_t kStagingOffset = 2 * sizeof(unsigned) * kPoolPageSize;
static_assert(kStagingOffset + kCapsBytes <= kHostWordsBytes,
              "a page's host words and the staging fit in one registration");

// The first page's allocation also holds the device bytes of the first policy's caps (caps.cuh), after its
// control blocks: the first launch then pays one cudaMalloc instead of two (a first small cudaMalloc took
// 80-120 us of a first twin launch, docs/results/yieldable-speed.md).
constexpr size_t kPageBytes = sizeof(ControlBlock) * kPoolPageSize;
constexpr size_t kSpareCapsBytes = (kCapsBytes + 255) / 256 * 256;

inline bool grow_pool_locked(DeviceState& d) {
  PoolPage b;
  const bool first = d.pages.empty();
  void* raw = nullptr;
  if (cudaMalloc(&raw, kPageBytes + (first ? kSpareCapsBytes : 0)) != cudaSuccess) return false;
  b.dev = static_cast<ControlBlock*>(raw);
  host_stamp("pool-malloc");
  if (cudaMemsetAsync(b.dev, 0, kPageBytes, d.ctl) != cudaSuccess) return false;
  void* words = std::aligned_alloc(kHostWordsBytes, kHostWordsBytes);
  if (!words) return false;
  std::memset(words, 0, kHostWordsBytes);
  if (cudaHostRegister(words, kHostWordsBytes, cudaHostRegisterMapped | cudaHostRegisterPortable) != cudaSuccess) {
    std::free(words);
    return false;
  }
  host_stamp("pool-register");
  b.hflags = static_cast<unsigned*>(words);
  b.hstrand = b.hflags + kPoolPageSize;
  if (cudaHostGetDevicePointer(reinterpret_cast<void**>(&b.dflags), b.hflags, 0) != cudaSuccess) return false;
  b.dstrand = b.dflags + kPoolPageSize;
  if (cudaStreamSynchronize(d.ctl) != cudaSuccess) return false;
  if (first) {
    d.staging = static_cast<unsigned char*>(words) + kStagingOffset;
    d.spare_caps = static_cast<unsigned char*>(raw) + kPageBytes;
  }
  d.pages.push_back(b);
  d.recs.resize(d.recs.size() + kPoolPageSize);
  return true;
}

// may_grow: the pool may grow in a capture (the thread is in the relaxed capture mode: prepare.cuh).
inline bool acquire_control_locked(DeviceState& d, bool captured, unsigned& out, bool may_grow = false) {
  // Captured control blocks are never freed: keep at least half of the pool for ordinary launches by growing it
  // (outside captures, where growing is safe).
  if (!captured && 2 * (d.ncaptured + 64) > d.pool_size() && !grow_pool_locked(d)) return false;
  for (int round = 0; round < 2; ++round) {
    const unsigned n = d.pool_size();
    for (unsigned __k = 0; __k < n; ++__k) {
      const unsigned __i = (d.cursor + __k) % n;
      if (d.recs[__i].captured) continue;
      volatile unsigned* f = d.hflag(__i);
      if (*f == 0) {
        *f = kBusy;
        d.cursor = (__i + 1) % n;
        ControlRec& __r = d.recs[__i];
        __r.captured = captured;
        if (captured) ++d.ncaptured;
        __r.registered = false;
        __r.relaunch = nullptr;
        __r.seen_strand = *(volatile unsigned*)(d.pages[__i / kPoolPageSize].hstrand + __i % kPoolPageSize);
        __r.last_batch =
            __r.last_strand = {}; // the batch limits are per launch: the block's last launch's must not delay this one
        out = __i;
        return true;
      }
    }
    if ((captured && !may_grow) || !grow_pool_locked(d)) return false;
  }
  return false;
}

} // namespace detail

} // namespace ptb

// ptb/detail/device_state.cuh: the runtime's state per device: the pool of control blocks (in pages) and
// the host's record of each, SM identity, occupancy cache, streams, trace buffer.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <unordered_map>
#include <vector>

#include "../smset.cuh"
#include "../launch_params.cuh"
#include "config.cuh"
#include "control_block.cuh"
#include "trace_record.cuh"

namespace ptb {

namespace detail {

constexpr unsigned kPoolPageSize = 256; // control blocks per page of the pool
// The monitor launches resume workers in a stream of its own that is idle (resume workers that joined a
// launch keep their stream busy until that launch ends, and a resume queued behind them would wait for
// it): created when first needed (not on a program's first launch), more when all are busy, up to
// kResumeStreams.
constexpr unsigned kResumeStreams = 16;
constexpr unsigned kBusy = 1;

struct PolicyState;

// One page of the pool: kPoolPageSize control blocks in device memory and, per control block, two words in
// host-mapped memory (its free flag and its strand counter).
struct PoolPage {
  ControlBlock* dev = nullptr;
  unsigned* hflags = nullptr;  // host view of the mapped free flags
  unsigned* dflags = nullptr;  // device view
  unsigned* hstrand = nullptr; // mapped "needs workers" counters
  unsigned* dstrand = nullptr;
};

// The host's record of one control block of the pool: its generation, its owner and how to resume its launch.
struct ControlRec {
  unsigned gen = 0;        // generation the control block is at (host's count of completed uses)
  bool captured = false;   // owned by a captured graph node forever
  bool registered = false; // relaunch is set
  unsigned seen_strand = 0;
  std::chrono::steady_clock::time_point last_batch{};  // last batch (answers either kind of request)
  std::chrono::steady_clock::time_point last_strand{}; // last batch for a stranded launch's anchor
  PolicyState* policy = nullptr;
  Launch launch{};
  unsigned resume_workers = 0;
  std::function<cudaError_t(const Launch&, unsigned, cudaStream_t)> relaunch;
};

struct OccKey {
  const void* twin;
  unsigned threads;
  size_t shmem;
  bool operator==(const OccKey& __o) const { return twin == __o.twin && threads == __o.threads && shmem == __o.shmem; }
};
struct OccHash {
  size_t operator()(const OccKey& __k) const {
    return std::hash<const void*>()(__k.twin) ^ (size_t(__k.threads) * 0x9e3779b97f4a7c15ull) ^ (__k.shmem << 20);
  }
};

struct DeviceState {
  int dev = -1;
  bool ok = false;
  unsigned long long context = 0; // id of the context it was set up in (context.cuh); 0: not known
  int sms = 0, max_threads = 0, max_block[3] = {0, 0, 0}, max_grid[3] = {0, 0, 0};
  size_t smem_optin = 0;
  std::vector<PoolPage> pages;
  std::vector<ControlRec> recs;
  unsigned cursor = 0;
  unsigned ncaptured = 0;
  cudaStream_t ctl = nullptr;
  cudaStream_t resume[kResumeStreams] = {};
  unsigned nresume = 0; // created
  unsigned resume_rr = 0;
  unsigned char* staging = nullptr; // kCapsBytes bytes of the first pool page's registered words (pool.cuh)
  // kCapsBytes device bytes after the first pool page's control blocks, for the first policy's caps (caps.cuh)
  unsigned char* spare_caps = nullptr;
  bool discovered = false;
  int dense_of[kMaxSm]; // %smid -> dense index, -1: not seen
  int raw_of[kMaxSms];  // dense index -> %smid
  unsigned ndense = 0;
  unsigned nsmid = 0;
  std::unordered_map<OccKey, int, OccHash> occ;
  TraceBuf trace{nullptr, nullptr, 0, 0};
  TraceBuf saved_trace{nullptr, nullptr, 0, 0};
  unsigned trace_tags = 0;

  unsigned pool_size() const { return static_cast<unsigned>(recs.size()); }
  unsigned* hflag(unsigned __i) const { return pages[__i / kPoolPageSize].hflags + __i % kPoolPageSize; }
  ControlBlock* control(unsigned __i) const { return pages[__i / kPoolPageSize].dev + __i % kPoolPageSize; }
};

} // namespace detail

} // namespace ptb

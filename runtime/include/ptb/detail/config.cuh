// ptb/detail/config.cuh: the runtime's limits and the default tuning of the task loop.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once

namespace ptb {

namespace detail {

constexpr unsigned kMaxSm = 256; // %smid values handled (H100: 132); larger ids share caps modulo

// The room a policy gives on a device, in its caps buffer after the kMaxSm per-%smid caps: SMs allowed
// without a cap, SMs allowed with the cap, the cap (0: none). A kernel with `occ` blocks per SM has
// places(room, occ) places under it (a place: room for one worker on an SM).
struct PolicyRoom {
  unsigned free_sms, capped_sms, cap, pad;
};
constexpr unsigned kCapsBytes = kMaxSm + sizeof(PolicyRoom);
__host__ __device__ inline unsigned long long places(const PolicyRoom& __r, unsigned occ) {
  const unsigned capped = __r.cap != 0 && __r.cap < occ ? __r.cap : occ;
  return static_cast<unsigned long long>(occ) * __r.free_sms + static_cast<unsigned long long>(capped) * __r.capped_sms;
}
constexpr unsigned kRetCap = 4096;        // nodes for handed-back ranges, per launch (>= workers, mostly)
constexpr unsigned kRetShards = 32;       // handed-back ranges live in this many stacks (less contention)
constexpr unsigned kMaxChunk = 127;       // largest range (7 bits in a packed range); Launch::max_chunk <= it
constexpr unsigned kAnyGen = 0xffffffffu; // resume workers of a captured launch: join any running replay
constexpr unsigned long long kMaxTasks = 1ull << 56; // ranges are packed as (begin << 7 | length)
// Default tuning (ptb::Tuning): a worker re-reads its SM's cap after a task once about check_cycles
// clock cycles (32768: ~16.5 us at 1.98 GHz) passed since the last read; claims take at most max_chunk tasks
// and about chunk_cycles of work; where every SM is allowed, each original worker starts on a static
// chunk (first_chunk, first_share: ptb::Tuning).
// Measured on the H100 (docs/results/runtime-overhead.md): every check ends a run
// of tasks (a block-wide meeting with the leader's bookkeeping on the critical path), so checks every
// 8 us cost 5-15% on tasks of ~1 us; claims of more than ~32 tasks lengthen the tail of compute-heavy
// kernels (persistent workers are starved unevenly).
constexpr unsigned kDefaultCheckCycles = 32768;
constexpr unsigned kDefaultMaxChunk = 32;
constexpr unsigned kDefaultFirstChunk = 4;
constexpr unsigned kDefaultFirstShare = 4;
constexpr unsigned kDefaultChunkCycles = 131072;
// A launch whose workers all landed on SMs outside its set (a grid smaller than the GPU does this often)
// asks the host for workers; if no worker from the host reached the device for this many microseconds,
// its last worker runs the tasks itself where it is (see leave()). The host may be unable to answer:
// CUDA's lazy module loading makes a launch of a kernel not loaded yet wait for every running kernel, and
// such a wait held the host thread that would have launched the workers (measured: wavefront programs
// hung for good under PTB_SMS=0-65).
// The grace must be longer than the host's answer when it can answer (the monitor polls every 100 us and
// relaunches a launch's workers at most every 500 us): a host that answers, but whose workers find the set
// full, is waited for, so the set is kept (test_policy's stranded test).
constexpr unsigned kDefaultStrandGraceUs = 2000;

} // namespace detail

} // namespace ptb

// ptb/host.cuh: the host side of the PTB runtime: launch, control-state pool, policies, resume.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "device.cuh"
#include "smset.cuh"

namespace ptb {

// How ptb::launch (and launch_kernel_args) runs a kernel. Process-wide; the initial value comes from
// PTB_MODE (auto|ptb|original; unset: automatic). docs/runtime.md, "Dispatch by need".
//  - automatic: the twin only where a policy can confine or yield the launch: a Policy given for the
//    launch (LaunchConfig::policy) or set on its stream (set_stream_policy), or a process policy that
//    restricts (PTB_SMS, PTB_BLOCKS_PER_SM, or process_policy().set with fewer SMs or a cap). Every
//    other launch runs the original kernel through one cudaLaunchKernel and touches none of the
//    runtime's state (no device set-up, no lock, no thread): it costs what <<<>>> costs.
//  - ptb: the twin for every launch the runtime can run as a twin (the default before 2026-11-23).
//  - original: the original kernel for every launch, whatever the policies.
enum class LaunchMode { ptb, original, automatic };

namespace detail {
constexpr int kModePtb = 0, kModeOriginal = 1, kModeAutomatic = 2;
inline int mode_from_env() {
  const char* e = std::getenv("PTB_MODE");
  if (!e || !*e || std::strcmp(e, "auto") == 0 || std::strcmp(e, "automatic") == 0) return kModeAutomatic;
  if (std::strcmp(e, "ptb") == 0) return kModePtb;
  if (std::strcmp(e, "original") == 0) return kModeOriginal;
  std::fprintf(stderr, "ptb: PTB_MODE=%s not understood (auto, ptb or original); using auto\n", e);
  return kModeAutomatic;
}
inline std::atomic<int>& mode_word() {
  static std::atomic<int> m{mode_from_env()};
  return m;
}
}  // namespace detail

inline void set_launch_mode(LaunchMode m) {
  detail::mode_word().store(m == LaunchMode::original ? detail::kModeOriginal
                            : m == LaunchMode::ptb    ? detail::kModePtb
                                                      : detail::kModeAutomatic,
                            std::memory_order_relaxed);
}
inline LaunchMode launch_mode() {
  const int m = detail::mode_word().load(std::memory_order_relaxed);
  return m == detail::kModeOriginal ? LaunchMode::original : m == detail::kModePtb ? LaunchMode::ptb : LaunchMode::automatic;
}

// Tuning of the task loop (process-wide, read at each launch). check_cycles: clock cycles between two
// reads of the SM's cap by a worker (the yield delay, besides the task in flight); max_chunk: most tasks
// one claim takes (1..127); first_chunk: tasks each original worker starts with, without a claim (only
// when every SM is allowed; 0: none); chunk_cycles: a claim takes no more tasks than run in about this
// many cycles (0: no limit). Initial values from PTB_CHECK_CYCLES, PTB_MAX_CHUNK, PTB_FIRST_CHUNK,
// PTB_CHUNK_CYCLES. Defaults {32768, 32, 4, 131072}, chosen from the H100 sweeps (docs/runtime.md, Tuning).
struct Tuning {
  unsigned check_cycles = detail::kDefaultCheckCycles;
  unsigned max_chunk = detail::kDefaultMaxChunk;
  unsigned first_chunk = detail::kDefaultFirstChunk;
  unsigned chunk_cycles = detail::kDefaultChunkCycles;
  // A launch whose workers all landed outside its SM set: when no worker from the host reached the device
  // for this long (the host is not answering), its last worker runs the tasks where it is. Initial value
  // from PTB_STRAND_GRACE_US.
  unsigned strand_grace_us = detail::kDefaultStrandGraceUs;
};
namespace detail {
inline Tuning& tuning_locked() {
  static Tuning t = [] {
    Tuning x;
    auto env = [](const char* n, unsigned& v) {
      if (const char* e = std::getenv(n)) v = static_cast<unsigned>(std::strtoul(e, nullptr, 10));
    };
    env("PTB_CHECK_CYCLES", x.check_cycles);
    env("PTB_MAX_CHUNK", x.max_chunk);
    env("PTB_FIRST_CHUNK", x.first_chunk);
    env("PTB_CHUNK_CYCLES", x.chunk_cycles);
    env("PTB_STRAND_GRACE_US", x.strand_grace_us);
    return x;
  }();
  t.max_chunk = std::max(1u, std::min(t.max_chunk, kMaxChunk));
  t.first_chunk = std::min(t.first_chunk, t.max_chunk);
  if (t.check_cycles == 0) t.check_cycles = 1;
  t.strand_grace_us = std::min(t.strand_grace_us, 4000000u);  // in ns it must fit 32 bits
  return t;
}
struct Runtime;
inline Runtime& rt();
}  // namespace detail
inline void set_tuning(const Tuning& t);
inline Tuning tuning();

namespace detail {
struct PolicyState;
}

// Where a launch's workers may run: a set of SMs and a cap on workers per SM (0: no cap beyond
// occupancy). A handle: copies refer to the same policy; policies live as long as the process.
// Changing a policy (set) takes effect at once on the launches running under it: workers on SMs it
// removes leave after their current task, and SMs it adds get new workers.
class Policy {
 public:
  Policy() = default;  // empty: "not given" (the stream's policy, else the process policy applies)
  explicit Policy(detail::PolicyState* p) : p_(p) {}  // internal
  static Policy create(const SmSet& sms = SmSet::all(), unsigned per_sm = 0);
  void set(const SmSet& sms, unsigned per_sm = 0) const;
  SmSet sms() const;
  unsigned per_sm() const;
  explicit operator bool() const { return p_ != nullptr; }
  bool operator==(const Policy& o) const { return p_ == o.p_; }
  detail::PolicyState* state() const { return p_; }

 private:
  detail::PolicyState* p_ = nullptr;
};

// The process policy: all SMs and no cap unless PTB_SMS (e.g. "0-65") / PTB_BLOCKS_PER_SM say otherwise.
// In the automatic launch mode, launches under no other policy run as twins only while it restricts
// (set() with fewer SMs or a cap): originals launched before a set() run on unconfined until they end.
inline Policy process_policy();
// A stream's policy (an empty Policy removes it). Precedence: LaunchConfig::policy, then the stream's,
// then the process policy.
inline void set_stream_policy(cudaStream_t stream, Policy policy);
inline Policy stream_policy(cudaStream_t stream);

struct LaunchConfig {
  dim3 grid, block;
  size_t shmem;
  cudaStream_t stream;
  Policy policy;  // optional, per launch (empty: the stream's or the process's)
  LaunchConfig(dim3 grid_, dim3 block_, size_t shmem_ = 0, cudaStream_t stream_ = 0)
      : grid(grid_), block(block_), shmem(shmem_), stream(stream_) {}
};

namespace detail {

template <class... Params>
struct TwinOf {
  using type = void (*)(Params..., Launch);
};

constexpr unsigned kMaxDevices = 16;
constexpr unsigned kSlotsPerBlock = 256;
constexpr unsigned kResumeStreams = 4;
constexpr unsigned kBusy = 1;

// A template, so that the header can be included by several translation units of one program.
template <int Unused = 0>
__global__ void discover_sms_kernel(unsigned* seen) {
  if (threadIdx.x == 0) {
    seen[smid() % kMaxSm] = 1;
    if (blockIdx.x == 0) seen[kMaxSm] = nsmid();
  }
}

struct SlotBlock {
  Slot* dev = nullptr;
  unsigned* hflags = nullptr;   // host view of the mapped free flags
  unsigned* dflags = nullptr;   // device view
  unsigned* hstrand = nullptr;  // mapped "needs workers" counters
  unsigned* dstrand = nullptr;
};

struct SlotRec {
  unsigned gen = 0;          // generation the slot is at (host's count of completed uses)
  bool captured = false;     // owned by a captured graph node forever
  bool registered = false;   // relaunch is set
  unsigned seen_strand = 0;
  std::chrono::steady_clock::time_point last_resume{};
  PolicyState* policy = nullptr;
  Launch launch{};
  unsigned resume_workers = 0;
  std::function<cudaError_t(const Launch&, unsigned, cudaStream_t)> relaunch;
};

struct OccKey {
  const void* twin;
  unsigned threads;
  size_t shmem;
  bool operator==(const OccKey& o) const { return twin == o.twin && threads == o.threads && shmem == o.shmem; }
};
struct OccHash {
  size_t operator()(const OccKey& k) const {
    return std::hash<const void*>()(k.twin) ^ (size_t(k.threads) * 0x9e3779b97f4a7c15ull) ^ (k.shmem << 20);
  }
};

struct DeviceState {
  int dev = -1;
  bool ok = false;
  int sms = 0, max_threads = 0, max_block[3] = {0, 0, 0}, max_grid[3] = {0, 0, 0};
  size_t smem_optin = 0;
  std::vector<SlotBlock> blocks;
  std::vector<SlotRec> recs;
  unsigned cursor = 0;
  unsigned ncaptured = 0;
  cudaStream_t ctl = nullptr;
  cudaStream_t resume[kResumeStreams] = {};
  unsigned resume_rr = 0;
  unsigned char* staging = nullptr;  // pinned, kMaxSm bytes
  bool discovered = false;
  int dense_of[kMaxSm];              // %smid -> dense index, -1: not seen
  int raw_of[kMaxSms];               // dense index -> %smid
  unsigned ndense = 0;
  unsigned nsmid = 0;
  std::unordered_map<OccKey, int, OccHash> occ;
  TraceBuf trace{nullptr, nullptr, 0, 0};
  TraceBuf saved_trace{nullptr, nullptr, 0, 0};
  unsigned trace_tags = 0;

  unsigned nslots() const { return static_cast<unsigned>(recs.size()); }
  unsigned* hflag(unsigned i) const { return blocks[i / kSlotsPerBlock].hflags + i % kSlotsPerBlock; }
  Slot* slot(unsigned i) const { return blocks[i / kSlotsPerBlock].dev + i % kSlotsPerBlock; }
};

struct PolicyState {
  SmSet sms = SmSet::all();
  unsigned per_sm = 0;
  unsigned char* caps[kMaxDevices] = {};  // device copies, allocated on first use on each device
  unsigned char last[kMaxDevices][kMaxSm] = {};  // what was last written there
};

inline bool restricts(const SmSet& sms, unsigned per_sm) { return per_sm != 0 || sms != SmSet::all(); }
inline bool restricted(const PolicyState& p) { return restricts(p.sms, p.per_sm); }

// The process policy as PTB_SMS ("0-65,70") and PTB_BLOCKS_PER_SM give it (unset or unreadable: all SMs,
// no cap).
inline void process_policy_from_env(SmSet& sms, unsigned& per_sm) {
  sms = SmSet::all();
  per_sm = 0;
  if (const char* e = std::getenv("PTB_SMS")) {
    SmSet s;
    if (SmSet::parse(e, s)) sms = s;
  }
  if (const char* e = std::getenv("PTB_BLOCKS_PER_SM")) per_sm = static_cast<unsigned>(std::atoi(e));
}

// Lock-free copies of what the automatic mode asks at each launch (written under the runtime's lock,
// read without it): whether the process policy restricts, and how many streams have a policy.
inline std::atomic<bool>& process_restricts_word() {
  static std::atomic<bool> w{[] {
    SmSet s;
    unsigned k = 0;
    process_policy_from_env(s, k);
    return restricts(s, k);
  }()};
  return w;
}
inline std::atomic<unsigned>& stream_policy_count() {
  static std::atomic<unsigned> n{0};
  return n;
}

struct Runtime {
  std::mutex m;
  DeviceState* devs[kMaxDevices] = {};
  PolicyState* process = nullptr;
  std::unordered_map<cudaStream_t, PolicyState*> stream_policies;
  std::thread monitor;
  std::atomic<bool> stop{false};
  bool monitor_started = false;
  bool trace_on = false;
  size_t trace_cap = 0;
  ~Runtime() {
    stop.store(true);
    if (monitor.joinable()) monitor.join();
    // Device memory and streams are left to the driver's teardown (freeing here could run after it).
  }
};
inline Runtime& rt() {
  static Runtime r;
  return r;
}

inline PolicyState* process_policy_state_locked() {
  Runtime& r = rt();
  if (!r.process) {
    r.process = new PolicyState();
    process_policy_from_env(r.process->sms, r.process->per_sm);
    process_restricts_word().store(restricted(*r.process), std::memory_order_release);
  }
  return r.process;
}

// Automatic mode: whether a launch in `stream` with the launch's own policy `given` must run as the twin,
// i.e. whether any policy can confine or yield it: a policy given for the launch or for its stream (any
// Policy the program made, even one that allows every SM today: the program may restrict it at any
// time), or a process policy that restricts now. No lock and no runtime state unless some stream has a
// policy (then one look-up under the lock).
inline bool needs_twin(const Policy& given, cudaStream_t stream) {
  if (given) return true;
  if (process_restricts_word().load(std::memory_order_acquire)) return true;
  if (stream_policy_count().load(std::memory_order_acquire) == 0) return false;
  Runtime& r = rt();
  std::lock_guard<std::mutex> g(r.m);
  return r.stream_policies.find(stream) != r.stream_policies.end();
}

// Whether this launch runs the original kernel (launch mode and, in automatic mode, needs_twin).
inline bool runs_original(const Policy& given, cudaStream_t stream) {
  const int m = mode_word().load(std::memory_order_relaxed);
  if (m == kModeOriginal) return true;
  if (m == kModePtb) return false;
  return !needs_twin(given, stream);
}

// Find the SM ids the device reports (once per device). Identity mapping if not every SM was seen.
inline void discover_locked(DeviceState& d) {
  if (d.discovered) return;
  d.discovered = true;
  for (unsigned i = 0; i < kMaxSm; ++i) d.dense_of[i] = -1;
  unsigned* buf = nullptr;
  std::vector<unsigned> h(kMaxSm + 1, 0);
  bool ok = cudaMalloc(&buf, (kMaxSm + 1) * sizeof(unsigned)) == cudaSuccess;
  ok = ok && cudaMemsetAsync(buf, 0, (kMaxSm + 1) * sizeof(unsigned), d.ctl) == cudaSuccess;
  if (ok) {
    // cudaLaunchKernel returns the launch's own error: no cudaGetLastError, which would also clear an
    // error the user has not read yet.
    void* argv[] = {&buf};
    ok = cudaLaunchKernel(reinterpret_cast<const void*>(discover_sms_kernel<0>), dim3(d.sms * 32), dim3(32), argv, 0,
                          d.ctl) == cudaSuccess;
  }
  ok = ok && cudaMemcpyAsync(h.data(), buf, (kMaxSm + 1) * sizeof(unsigned), cudaMemcpyDeviceToHost, d.ctl) == cudaSuccess;
  ok = ok && cudaStreamSynchronize(d.ctl) == cudaSuccess;
  // buf is not freed: cudaFree waits for the device, and a paused PTB kernel may be waiting for this
  // very thread (a policy change). 1 KB once per device.
  unsigned n = 0;
  if (ok)
    for (unsigned i = 0; i < kMaxSm; ++i)
      if (h[i]) ++n;
  if (ok && n == static_cast<unsigned>(d.sms)) {
    unsigned k = 0;
    for (unsigned i = 0; i < kMaxSm; ++i)
      if (h[i]) {
        d.dense_of[i] = static_cast<int>(k);
        d.raw_of[k++] = static_cast<int>(i);
      }
    d.nsmid = h[kMaxSm];
  } else {
    for (int i = 0; i < d.sms && i < static_cast<int>(kMaxSm); ++i) {
      d.dense_of[i] = i;
      d.raw_of[i] = i;
    }
    d.nsmid = static_cast<unsigned>(d.sms);
  }
  d.ndense = static_cast<unsigned>(std::min<int>(d.sms, kMaxSm));
}

inline void compute_caps_locked(DeviceState& d, const PolicyState& p, unsigned char* out) {
  const unsigned cap = p.per_sm == 0 ? 255u : std::min(p.per_sm, 255u);
  if (p.sms == SmSet::all()) {
    for (unsigned i = 0; i < kMaxSm; ++i) out[i] = static_cast<unsigned char>(cap);
    return;
  }
  discover_locked(d);
  for (unsigned i = 0; i < kMaxSm; ++i) {
    const int k = d.dense_of[i];
    out[i] = static_cast<unsigned char>((k >= 0 && p.sms.contains(static_cast<unsigned>(k))) ? cap : 0u);
  }
}

// Write the policy's caps to device d (allocating them on first use). False on a CUDA error. *grew: some
// SM's cap went up (new workers are useful).
inline bool upload_caps_locked(DeviceState& d, PolicyState& p, bool* grew = nullptr) {
  unsigned char caps[kMaxSm];
  compute_caps_locked(d, p, caps);
  bool fresh = false;
  if (!p.caps[d.dev]) {
    if (cudaMalloc(&p.caps[d.dev], kMaxSm) != cudaSuccess) {
      p.caps[d.dev] = nullptr;
      return false;
    }
    fresh = true;
  }
  if (grew) {
    *grew = false;
    for (unsigned i = 0; i < kMaxSm && !fresh; ++i)
      if (caps[i] > p.last[d.dev][i]) *grew = true;
  }
  std::memcpy(d.staging, caps, kMaxSm);
  if (cudaMemcpyAsync(p.caps[d.dev], d.staging, kMaxSm, cudaMemcpyHostToDevice, d.ctl) != cudaSuccess) return false;
  if (cudaStreamSynchronize(d.ctl) != cudaSuccess) return false;
  std::memcpy(p.last[d.dev], caps, kMaxSm);
  return true;
}

inline bool grow_pool_locked(DeviceState& d) {
  SlotBlock b;
  if (cudaMalloc(&b.dev, sizeof(Slot) * kSlotsPerBlock) != cudaSuccess) return false;
  if (cudaMemsetAsync(b.dev, 0, sizeof(Slot) * kSlotsPerBlock, d.ctl) != cudaSuccess) return false;
  if (cudaHostAlloc(&b.hflags, 2 * sizeof(unsigned) * kSlotsPerBlock, cudaHostAllocMapped) != cudaSuccess) return false;
  std::memset(b.hflags, 0, 2 * sizeof(unsigned) * kSlotsPerBlock);
  b.hstrand = b.hflags + kSlotsPerBlock;
  if (cudaHostGetDevicePointer(reinterpret_cast<void**>(&b.dflags), b.hflags, 0) != cudaSuccess) return false;
  b.dstrand = b.dflags + kSlotsPerBlock;
  if (cudaStreamSynchronize(d.ctl) != cudaSuccess) return false;
  d.blocks.push_back(b);
  d.recs.resize(d.recs.size() + kSlotsPerBlock);
  return true;
}

inline DeviceState* device_locked(int dev) {
  Runtime& r = rt();
  if (dev < 0 || dev >= static_cast<int>(kMaxDevices)) return nullptr;
  if (r.devs[dev]) return r.devs[dev]->ok ? r.devs[dev] : nullptr;
  DeviceState* d = new DeviceState();
  r.devs[dev] = d;
  d->dev = dev;
  int v = 0;
  bool ok = cudaDeviceGetAttribute(&d->sms, cudaDevAttrMultiProcessorCount, dev) == cudaSuccess;
  ok = ok && cudaDeviceGetAttribute(&d->max_threads, cudaDevAttrMaxThreadsPerBlock, dev) == cudaSuccess;
  ok = ok && cudaDeviceGetAttribute(&d->max_block[0], cudaDevAttrMaxBlockDimX, dev) == cudaSuccess;
  ok = ok && cudaDeviceGetAttribute(&d->max_block[1], cudaDevAttrMaxBlockDimY, dev) == cudaSuccess;
  ok = ok && cudaDeviceGetAttribute(&d->max_block[2], cudaDevAttrMaxBlockDimZ, dev) == cudaSuccess;
  ok = ok && cudaDeviceGetAttribute(&d->max_grid[0], cudaDevAttrMaxGridDimX, dev) == cudaSuccess;
  ok = ok && cudaDeviceGetAttribute(&d->max_grid[1], cudaDevAttrMaxGridDimY, dev) == cudaSuccess;
  ok = ok && cudaDeviceGetAttribute(&d->max_grid[2], cudaDevAttrMaxGridDimZ, dev) == cudaSuccess;
  ok = ok && cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) == cudaSuccess;
  d->smem_optin = static_cast<size_t>(v);
  ok = ok && cudaStreamCreateWithFlags(&d->ctl, cudaStreamNonBlocking) == cudaSuccess;
  for (unsigned i = 0; ok && i < kResumeStreams; ++i)
    ok = cudaStreamCreateWithFlags(&d->resume[i], cudaStreamNonBlocking) == cudaSuccess;
  ok = ok && cudaHostAlloc(&d->staging, kMaxSm, cudaHostAllocDefault) == cudaSuccess;
  // Load the runtime's own kernel now, not in the middle of a running PTB kernel (lazy loading waits).
  cudaFuncAttributes fa;
  ok = ok && cudaFuncGetAttributes(&fa, discover_sms_kernel<0>) == cudaSuccess;
  ok = ok && grow_pool_locked(*d);
  PolicyState* pp = process_policy_state_locked();
  ok = ok && upload_caps_locked(*d, *pp);
  d->ok = ok;
  return ok ? d : nullptr;
}

inline void start_monitor_locked();

// Occupancy of the twin for this block and dynamic shared memory (cached; 0: cannot run).
inline int occupancy_locked(DeviceState& d, const void* original, const void* twin, unsigned threads, size_t shmem) {
  const OccKey k{twin, threads, shmem};
  auto it = d.occ.find(k);
  if (it != d.occ.end()) return it->second;
  if (shmem > 48 * 1024) {
    // The original may have been allowed more dynamic shared memory: give the twin the same limit.
    cudaFuncAttributes fo, ft;
    if (cudaFuncGetAttributes(&fo, original) != cudaSuccess) return 0;
    if (cudaFuncGetAttributes(&ft, twin) != cudaSuccess) return 0;
    if (static_cast<size_t>(fo.maxDynamicSharedSizeBytes) < shmem) return 0;
    if (ft.maxDynamicSharedSizeBytes < fo.maxDynamicSharedSizeBytes &&
        cudaFuncSetAttribute(twin, cudaFuncAttributeMaxDynamicSharedMemorySize, fo.maxDynamicSharedSizeBytes) != cudaSuccess)
      return 0;
  }
  int occ = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, twin, static_cast<int>(threads), shmem) != cudaSuccess) return 0;
  if (occ > 0) d.occ.emplace(k, occ);
  return occ;
}

struct Prepared {
  DeviceState* d = nullptr;
  unsigned slot = 0;
  unsigned workers = 0;
  unsigned resume_workers = 0;
  PolicyState* policy = nullptr;
  Launch launch{};
};

inline bool acquire_slot_locked(DeviceState& d, bool captured, unsigned& out) {
  // Captured slots are never freed: keep at least half of the pool for ordinary launches by growing it
  // (outside captures, where growing is safe).
  if (!captured && 2 * (d.ncaptured + 64) > d.nslots() && !grow_pool_locked(d)) return false;
  for (int round = 0; round < 2; ++round) {
    const unsigned n = d.nslots();
    for (unsigned k = 0; k < n; ++k) {
      const unsigned i = (d.cursor + k) % n;
      if (d.recs[i].captured) continue;
      volatile unsigned* f = d.hflag(i);
      if (*f == 0) {
        *f = kBusy;
        d.cursor = (i + 1) % n;
        SlotRec& r = d.recs[i];
        r.captured = captured;
        if (captured) ++d.ncaptured;
        r.registered = false;
        r.relaunch = nullptr;
        r.seen_strand = *(volatile unsigned*)(d.blocks[i / kSlotsPerBlock].hstrand + i % kSlotsPerBlock);
        out = i;
        return true;
      }
    }
    if (captured || !grow_pool_locked(d)) return false;
  }
  return false;
}

// The policy a launch in `stream` runs under: the launch's own, the stream's, or the process's.
inline PolicyState* policy_for_locked(const LaunchConfig& c) {
  Runtime& r = rt();
  PolicyState* pol = c.policy.state();
  if (!pol && !r.stream_policies.empty()) {
    auto it = r.stream_policies.find(c.stream);
    if (it != r.stream_policies.end()) pol = it->second;
  }
  return pol ? pol : process_policy_state_locked();
}

// The policy's caps on device d (uploaded on first use; during a capture only if already there) and
// the monitor when the policy restricts. False: the launch cannot run as PTB.
inline bool ready_policy_locked(DeviceState& d, PolicyState& pol, bool captured) {
  if (!pol.caps[d.dev] && (captured || !upload_caps_locked(d, pol))) return false;
  if (restricted(pol)) start_monitor_locked();
  return true;
}

// A launch's shape against the device's limits.
inline bool fits_device(const DeviceState& d, dim3 grid, dim3 block) {
  if (block.x == 0 || block.y == 0 || block.z == 0) return false;
  if (block.x > static_cast<unsigned>(d.max_block[0]) || block.y > static_cast<unsigned>(d.max_block[1]) ||
      block.z > static_cast<unsigned>(d.max_block[2]) ||
      static_cast<unsigned long long>(block.x) * block.y * block.z > static_cast<unsigned>(d.max_threads))
    return false;
  return grid.x <= static_cast<unsigned>(d.max_grid[0]) && grid.y <= static_cast<unsigned>(d.max_grid[1]) &&
         grid.z <= static_cast<unsigned>(d.max_grid[2]);
}

// Original workers for a launch that has work for `need` of them, `full` fitting on the device at once.
// Under a partial SM set, at least one per SM: the hardware places a grid smaller than the GPU where it
// likes, and when every worker lands outside the set the launch is stranded (it needs workers from the
// host, or its last worker breaks the set: see leave()). Measured on the H100 (test/gpu/stress/
// wavefront.cu): with one worker per task, about half of the 1..255-task launches under PTB_SMS=0-65
// were stranded, ~90 us each. Extra workers on SMs outside the set leave after one load.
inline unsigned worker_count(const DeviceState& d, const PolicyState& pol, unsigned long long full,
                             unsigned long long need) {
  const unsigned long long sms = static_cast<unsigned long long>(d.sms);
  if (pol.sms != SmSet::all() && need < sms) need = sms;
  return static_cast<unsigned>(std::min(full, need));
}

inline unsigned long long task_count(dim3 grid) {
  return static_cast<unsigned long long>(grid.x) * grid.y * static_cast<unsigned long long>(grid.z);
}

// The control block of one launch in slot s of d: `workers` original workers run the tasks of `grid`.
inline void fill_launch_locked(DeviceState& d, const PolicyState& pol, unsigned s, bool captured, dim3 grid,
                               unsigned workers, Launch& L) {
  const unsigned long long ntasks = task_count(grid);
  L.slot = d.slot(s);
  L.caps = pol.caps[d.dev];
  L.free_flag = d.blocks[s / kSlotsPerBlock].dflags + s % kSlotsPerBlock;
  L.strand_seq = d.blocks[s / kSlotsPerBlock].dstrand + s % kSlotsPerBlock;
  L.trace = d.trace;
  if (L.trace.recs) L.trace.tag = ++d.trace_tags;
  L.ntasks = ntasks;
  L.gx = grid.x;
  L.gy = grid.y;
  L.gz = grid.z;
  L.workers = workers;
  const Tuning tu = tuning_locked();
  L.check_cycles = tu.check_cycles;
  L.max_chunk = tu.max_chunk;
  L.chunk_cycles = tu.chunk_cycles;
  L.strand_grace_ns = tu.strand_grace_us * 1000u;
  // Every SM allowed: each original worker starts on a static first chunk (no atomic at start).
  L.first = 0;
  if (!restricted(pol) && tu.first_chunk) {
    const unsigned long long f = ntasks / (4ull * workers);
    L.first = static_cast<unsigned>(f < 1 ? 1 : (f > tu.first_chunk ? tu.first_chunk : f));
  }
  L.base = static_cast<unsigned long long>(L.first) * workers;
  L.flags = captured ? kCaptured : 0u;
  L.gen = captured ? kAnyGen : d.recs[s].gen;
}

// Everything before the twin's launch. False: launch the original instead (it reports the same error a
// plain launch would, or runs where the twin cannot).
inline bool prepare(const LaunchConfig& c, const void* original, const void* twin, Prepared& p) {
  const unsigned long long ntasks = task_count(c.grid);
  if (ntasks == 0 || ntasks >= kMaxTasks) return false;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return false;
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(c.stream, &cs) != cudaSuccess) return false;
  const bool captured = cs != cudaStreamCaptureStatusNone;
  Runtime& r = rt();
  std::lock_guard<std::mutex> g(r.m);
  // During a capture make no call that could synchronize (it would invalidate the capture): a device
  // not set up yet, a policy not on this device yet or an exhausted pool mean the original is captured.
  if (captured && !(r.devs[dev] && r.devs[dev]->ok)) return false;
  DeviceState* d = device_locked(dev);
  if (!d) return false;
  if (!fits_device(*d, c.grid, c.block) || c.shmem > d->smem_optin) return false;
  const unsigned threads = c.block.x * c.block.y * c.block.z;
  const int occ = occupancy_locked(*d, original, twin, threads, c.shmem);
  if (occ <= 0) return false;
  PolicyState* pol = policy_for_locked(c);
  if (!ready_policy_locked(*d, *pol, captured)) return false;
  unsigned s = 0;
  if (!acquire_slot_locked(*d, captured, s)) return false;
  const unsigned long long full = static_cast<unsigned long long>(occ) * d->sms;
  p.d = d;
  p.slot = s;
  p.workers = worker_count(*d, *pol, full, ntasks);
  p.resume_workers = static_cast<unsigned>(full);
  p.policy = pol;
  fill_launch_locked(*d, *pol, s, captured, c.grid, p.workers, p.launch);
  return true;
}

// The twin's launch failed: the slot was not used.
inline void release_locked(const Prepared& p) {
  if (p.d->recs[p.slot].captured) --p.d->ncaptured;
  p.d->recs[p.slot].captured = false;
  *(volatile unsigned*)p.d->hflag(p.slot) = 0;
}
inline void release(const Prepared& p) {
  std::lock_guard<std::mutex> g(rt().m);
  release_locked(p);
}

// The twin is launched: remember how to launch more workers for it (resume).
inline void commit(const Prepared& p, std::function<cudaError_t(const Launch&, unsigned, cudaStream_t)>&& f) {
  std::lock_guard<std::mutex> g(rt().m);
  SlotRec& r = p.d->recs[p.slot];
  if (!r.captured) r.gen = (r.gen + 1) & 0x7fffffffu;  // the generation the slot will be at when it is free
  r.launch = p.launch;
  r.policy = p.policy;
  r.resume_workers = p.resume_workers;
  r.relaunch = std::move(f);
  r.registered = true;
}

inline bool live_locked(const DeviceState& d, unsigned i) {
  const SlotRec& r = d.recs[i];
  if (!r.registered) return false;
  return r.captured || *(volatile unsigned*)d.hflag(i) == kBusy;
}

// Launch new workers for slot i (they join if the launch still runs, else leave at once).
inline void resume_locked(DeviceState& d, unsigned i) {
  SlotRec& r = d.recs[i];
  Launch L = r.launch;
  L.flags |= kResume;
  cudaStream_t s = d.resume[d.resume_rr++ % kResumeStreams];
  int cur = -1;
  cudaGetDevice(&cur);
  if (cur != d.dev) cudaSetDevice(d.dev);
  const cudaError_t e = r.relaunch(L, r.resume_workers, s);
  (void)e;  // a failed resume leaves the anchor waiting; it asks again (strand signal) within 200 us
  if (cur != d.dev && cur >= 0) cudaSetDevice(cur);
}

inline void monitor_loop() {
  Runtime& r = rt();
  while (!r.stop.load()) {
    std::this_thread::sleep_for(std::chrono::microseconds(100));
    std::lock_guard<std::mutex> g(r.m);
    for (unsigned dv = 0; dv < kMaxDevices; ++dv) {
      DeviceState* d = r.devs[dv];
      if (!d || !d->ok) continue;
      for (unsigned i = 0; i < d->nslots(); ++i) {
        SlotRec& rec = d->recs[i];
        if (!rec.registered) continue;
        const unsigned s = *(volatile unsigned*)(d->blocks[i / kSlotsPerBlock].hstrand + i % kSlotsPerBlock);
        if (s == rec.seen_strand) continue;
        rec.seen_strand = s;
        if (!live_locked(*d, i) || !rec.policy || rec.policy->sms.empty()) continue;
        const auto now = std::chrono::steady_clock::now();
        if (now - rec.last_resume < std::chrono::microseconds(500)) continue;  // one batch at a time
        rec.last_resume = now;
        resume_locked(*d, i);
      }
    }
  }
}

inline void start_monitor_locked() {
  Runtime& r = rt();
  if (r.monitor_started) return;
  r.monitor_started = true;
  r.monitor = std::thread(monitor_loop);
}

template <class... Params>
struct Relauncher {
  typename TwinOf<Params...>::type twin;
  std::tuple<Params...> args;
  dim3 block;
  size_t shmem;
  template <size_t... I>
  cudaError_t go(const Launch& L, unsigned workers, cudaStream_t s, std::index_sequence<I...>) {
    Launch l = L;
    void* argv[] = {static_cast<void*>(&std::get<I>(args))..., static_cast<void*>(&l)};
    return cudaLaunchKernel(reinterpret_cast<const void*>(twin), dim3(workers), block, argv, shmem, s);
  }
  cudaError_t operator()(const Launch& L, unsigned workers, cudaStream_t s) {
    return go(L, workers, s, std::index_sequence_for<Params...>{});
  }
};

template <class... Params, size_t... I>
cudaError_t launch_tuple(const LaunchConfig& c, void (*original)(Params...), typename TwinOf<Params...>::type twin,
                         std::tuple<Params...>& a, std::index_sequence<I...>) {
  Prepared p;
  if (!prepare(c, reinterpret_cast<const void*>(original), reinterpret_cast<const void*>(twin), p)) {
    void* argv[] = {static_cast<void*>(&std::get<I>(a))..., nullptr};
    return cudaLaunchKernel(reinterpret_cast<const void*>(original), c.grid, c.block, argv, c.shmem, c.stream);
  }
  void* argv[] = {static_cast<void*>(&std::get<I>(a))..., static_cast<void*>(&p.launch)};
  const cudaError_t e =
      cudaLaunchKernel(reinterpret_cast<const void*>(twin), dim3(p.workers), c.block, argv, c.shmem, c.stream);
  if (e != cudaSuccess) {
    release(p);
    return e;
  }
  commit(p, Relauncher<Params...>{twin, a, c.block, c.shmem});
  return cudaSuccess;
}

template <class... Params, size_t... I>
cudaError_t launch_argv(void (*original)(Params...), typename TwinOf<Params...>::type twin, const LaunchConfig& c,
                        void** argv, std::index_sequence<I...>) {
  std::tuple<Params...> a(*static_cast<Params*>(argv[I])...);
  return launch_tuple(c, original, twin, a, std::index_sequence<I...>{});
}

}  // namespace detail

namespace detail {
template <class... Params, size_t... I>
cudaError_t launch_original(const LaunchConfig& c, void (*original)(Params...), std::tuple<Params...>& a,
                            std::index_sequence<I...>) {
  void* argv[] = {static_cast<void*>(&std::get<I>(a))..., nullptr};
  return cudaLaunchKernel(reinterpret_cast<const void*>(original), c.grid, c.block, argv, c.shmem, c.stream);
}
}  // namespace detail

// Launch the twin's workers in config.stream, or the original kernel with config's grid: in `original`
// mode, and in `automatic` mode when no policy can confine or yield the launch (see LaunchMode). Errors
// are reported as a plain launch reports them: through cudaGetLastError() / cudaPeekAtLastError().
// (`twin` is spelled through TwinOf so that Params are deduced from `original` alone: nvcc cannot deduce
// a parameter pack that is not last in a function type. Its type is exactly void (*)(Params..., Launch).)
template <class... Params, class... Args>
void launch(const LaunchConfig& config, void (*original)(Params...), typename detail::TwinOf<Params...>::type twin,
            Args&&... args) {
  std::tuple<Params...> a(std::forward<Args>(args)...);
  if (detail::runs_original(config.policy, config.stream))
    (void)detail::launch_original(config, original, a, std::index_sequence_for<Params...>{});
  else
    (void)detail::launch_tuple(config, original, twin, a, std::index_sequence_for<Params...>{});
}

// The cudaLaunchKernel form; argv points at the original kernel's arguments. Dispatched as launch() is
// (it has no launch policy: the stream's or the process's decides in automatic mode); returns what
// cudaLaunchKernel returns.
template <class... Params>
cudaError_t launch_kernel_args(void (*original)(Params...), typename detail::TwinOf<Params...>::type twin, dim3 grid,
                               dim3 block,
                               void** argv, size_t shmem, cudaStream_t stream) {
  if (detail::runs_original(Policy(), stream))
    return cudaLaunchKernel(reinterpret_cast<const void*>(original), grid, block, argv, shmem, stream);
  return detail::launch_argv(original, twin, LaunchConfig(grid, block, shmem, stream), argv,
                             std::index_sequence_for<Params...>{});
}

inline void set_tuning(const Tuning& t) {
  std::lock_guard<std::mutex> g(detail::rt().m);
  detail::tuning_locked() = t;
  detail::tuning_locked();  // clamps
}
inline Tuning tuning() {
  std::lock_guard<std::mutex> g(detail::rt().m);
  return detail::tuning_locked();
}

// ---- policies ----
inline Policy Policy::create(const SmSet& sms, unsigned per_sm) {
  Policy p;
  p.p_ = new detail::PolicyState();  // lives as long as the process (running kernels may point at it)
  p.p_->sms = sms;
  p.p_->per_sm = per_sm;
  // Put the caps on the current device now (not during a later stream capture).
  int dev = 0;
  if (cudaGetDevice(&dev) == cudaSuccess) {
    std::lock_guard<std::mutex> g(detail::rt().m);
    if (detail::DeviceState* d = detail::device_locked(dev)) detail::upload_caps_locked(*d, *p.p_);
    if (detail::restricted(*p.p_)) detail::start_monitor_locked();
  }
  return p;
}
inline void Policy::set(const SmSet& sms, unsigned per_sm) const {
  if (!p_) return;
  detail::Runtime& r = detail::rt();
  std::lock_guard<std::mutex> g(r.m);
  p_->sms = sms;
  p_->per_sm = per_sm;
  // Automatic mode: launches from now on run as twins iff the process policy restricts. Originals that
  // are running already are not confined (they end as they are).
  if (p_ == r.process) detail::process_restricts_word().store(detail::restricted(*p_), std::memory_order_release);
  if (detail::restricted(*p_)) detail::start_monitor_locked();
  int cur = -1;
  cudaGetDevice(&cur);
  for (unsigned dv = 0; dv < detail::kMaxDevices; ++dv) {
    detail::DeviceState* d = r.devs[dv];
    if (!d || !d->ok || !p_->caps[dv]) continue;
    if (static_cast<int>(dv) != cur) cudaSetDevice(static_cast<int>(dv));
    bool grew = false;
    if (detail::upload_caps_locked(*d, *p_, &grew) && grew) {
      for (unsigned i = 0; i < d->nslots(); ++i)
        if (d->recs[i].policy == p_ && detail::live_locked(*d, i)) detail::resume_locked(*d, i);
    }
    if (static_cast<int>(dv) != cur && cur >= 0) cudaSetDevice(cur);
  }
}
inline SmSet Policy::sms() const {
  std::lock_guard<std::mutex> g(detail::rt().m);
  return p_ ? p_->sms : SmSet::all();
}
inline unsigned Policy::per_sm() const {
  std::lock_guard<std::mutex> g(detail::rt().m);
  return p_ ? p_->per_sm : 0;
}
inline Policy process_policy() {
  std::lock_guard<std::mutex> g(detail::rt().m);
  detail::PolicyState* s = detail::process_policy_state_locked();
  return Policy(s);
}
inline void set_stream_policy(cudaStream_t stream, Policy policy) {
  std::lock_guard<std::mutex> g(detail::rt().m);
  if (policy)
    detail::rt().stream_policies[stream] = policy.state();
  else
    detail::rt().stream_policies.erase(stream);
  detail::stream_policy_count().store(static_cast<unsigned>(detail::rt().stream_policies.size()),
                                      std::memory_order_release);
}
inline Policy stream_policy(cudaStream_t stream) {
  std::lock_guard<std::mutex> g(detail::rt().m);
  auto& m = detail::rt().stream_policies;
  auto it = m.find(stream);
  detail::PolicyState* s = it == m.end() ? nullptr : it->second;
  return Policy(s);
}

// Load both kernels now (CUDA's lazy loading makes the first launch of a kernel wait for the kernels
// running at that time; a kernel meant to start beside a long-running one must be loaded before).
template <class... Params>
cudaError_t preload(void (*original)(Params...), typename detail::TwinOf<Params...>::type twin) {
  cudaFuncAttributes a;
  cudaError_t e = cudaFuncGetAttributes(&a, reinterpret_cast<const void*>(original));
  if (e == cudaSuccess) e = cudaFuncGetAttributes(&a, reinterpret_cast<const void*>(twin));
  return e;
}

// ---- SM identity ----
// The %smid values the current device reports, by dense index (discovered once per device by running a
// small kernel on every SM; identity if not every SM could be seen). Empty on a CUDA error.
inline std::vector<unsigned> sm_ids() {
  std::vector<unsigned> out;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return out;
  std::lock_guard<std::mutex> g(detail::rt().m);
  detail::DeviceState* d = detail::device_locked(dev);
  if (!d) return out;
  detail::discover_locked(*d);
  for (unsigned i = 0; i < d->ndense; ++i) out.push_back(static_cast<unsigned>(d->raw_of[i]));
  return out;
}
// Number of SMs of the current device (cached).
inline unsigned sm_count() {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return 0;
  std::lock_guard<std::mutex> g(detail::rt().m);
  detail::DeviceState* d = detail::device_locked(dev);
  return d ? static_cast<unsigned>(d->sms) : 0;
}

}  // namespace ptb

// ptb/detail/prepare.cuh: everything before a twin's launch (device, occupancy, policy, control block, the
// Launch value) and after it (release or commit).
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "../fallback.cuh"
#include "../launch_config.cuh"
#include "../smset.cuh"
#include "../tuning.cuh"
#include "../launch_params.cuh"
#include "caps.cuh"
#include "config.cuh"
#include "context.cuh"
#include "last_error.cuh"
#include "device_setup.cuh"
#include "device_state.cuh"
#include "host_stamps.cuh"
#include "monitor.cuh"
#include "policy_state.cuh"
#include "pool.cuh"
#include "runtime.cuh"

namespace ptb {

namespace detail {

// Occupancy of the twin for this block and dynamic shared memory (cached; 0: cannot run; -1: the original
// cannot run it either, its dynamic shared memory above the original's limit: an invalid launch).
inline int occupancy_locked(DeviceState& d, const void* original, const void* twin, unsigned threads, size_t shmem) {
  const OccKey __k{twin, threads, shmem};
  auto it = d.occ.find(__k);
  if (it != d.occ.end()) return it->second;
  if (shmem > 48 * 1024) {
    // The original may have been allowed more dynamic shared memory: give the twin the same limit.
    cudaFuncAttributes fo, ft;
    if (cudaFuncGetAttributes(&fo, original) != cudaSuccess) return 0;
    if (cudaFuncGetAttributes(&ft, twin) != cudaSuccess) return 0;
    if (static_cast<size_t>(fo.maxDynamicSharedSizeBytes) < shmem) return -1;
    if (ft.maxDynamicSharedSizeBytes < fo.maxDynamicSharedSizeBytes &&
        cudaFuncSetAttribute(twin, cudaFuncAttributeMaxDynamicSharedMemorySize, fo.maxDynamicSharedSizeBytes) !=
            cudaSuccess)
      return 0;
  }
  int occ = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, twin, static_cast<int>(threads), shmem) != cudaSuccess)
    return 0;
  if (occ > 0) d.occ.emplace(__k, occ);
  return occ;
}

struct Prepared {
  DeviceState* d = nullptr;
  unsigned control = 0;
  unsigned workers = 0;
  unsigned resume_workers = 0;
  PolicyState* policy = nullptr;
  cudaStream_t stream = nullptr;
  bool in_turn = false; // the launch takes its turn among the policy's launches (launch_order.cuh)
  bool fills = false;   // it can take all of the policy's room (the next launch waits for it)
  Launch launch{};
};

// The policy a launch in `stream` on device `dev` runs under: the launch's own, the stream's, the policy of the
// controller the device's launches follow (PTB_QOSD: controller_link.cuh), or the process's.
inline PolicyState* policy_for_locked(const LaunchConfig& c, int dev) {
  Runtime& __r = rt();
  PolicyState* pol = c.policy.state();
  if (!pol && !__r.stream_policies.empty()) {
    auto it = __r.stream_policies.find(c.stream);
    if (it != __r.stream_policies.end()) pol = it->second;
  }
  if (!pol && dev >= 0 && dev < static_cast<int>(kMaxDevices)) pol = __r.linked[dev];
  return pol ? pol : process_policy_state_locked();
}

// The same on the current device, for a caller that does not hold the runtime's lock (a fallback's count:
// fallback.cuh). The program's last error is left as it was.
inline PolicyState* covering_policy(const LaunchConfig& c) {
  const LastErrorGuard guard;
  int dev = -1;
  if (cudaGetDevice(&dev) != cudaSuccess) dev = -1;
  guard.drop_ours();
  std::lock_guard<std::mutex> __g(rt().__m);
  return policy_for_locked(c, dev);
}

// The policy's caps on device d (uploaded on first use; during a capture only if already there) and
// the monitor when the policy restricts. False: the launch cannot run as PTB.
// no_set_up: in a capture whose rules forbid the upload's calls (the fused launch's case).
inline bool ready_policy_locked(DeviceState& d, PolicyState& pol, bool no_set_up) {
  if (!pol.caps[d.dev] && (no_set_up || !upload_caps_locked(d, pol))) return false;
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

// The Launch value of one launch on control block s of d: `workers` original workers run the tasks of `grid`,
// `occ` of them fit on an SM.
inline void fill_launch_locked(DeviceState& d, const PolicyState& pol, unsigned s, bool captured, dim3 grid,
                               unsigned workers, unsigned occ, Launch& __L) {
  const unsigned long long ntasks = task_count(grid);
  __L.control = d.control(s);
  __L.caps = pol.caps[d.dev];
  __L.free_flag = d.pages[s / kPoolPageSize].dflags + s % kPoolPageSize;
  __L.strand_seq = d.pages[s / kPoolPageSize].dstrand + s % kPoolPageSize;
  __L.trace = d.trace;
  if (__L.trace.recs) __L.trace.tag = ++d.trace_tags;
  __L.ntasks = ntasks;
  __L.gx = grid.x;
  __L.gy = grid.y;
  __L.gz = grid.z;
  __L.workers = workers;
  __L.occ = occ;
  const Tuning tu = tuning_locked();
  __L.check_cycles = tu.check_cycles;
  __L.max_chunk = tu.max_chunk;
  __L.chunk_cycles = tu.chunk_cycles;
  __L.strand_grace_ns = tu.strand_grace_us * 1000u;
  // Every SM allowed: each original worker starts on a static first chunk (no atomic at start) of about
  // tasks / (first_share x workers) tasks, at least 1, at most first_chunk. first_share 1 rounds up: with
  // at most first_chunk tasks per worker the chunks cover every task and the launch makes no claim
  // (L.base may pass ntasks: the last workers' chunks are cut at ntasks, or empty).
  __L.first = 0;
  if (!restricted(pol) && tu.first_chunk) {
    const unsigned long long per = static_cast<unsigned long long>(tu.first_share) * workers;
    unsigned long long f = tu.first_share == 1 ? (ntasks + per - 1) / per : ntasks / per;
    if (f < 1) f = 1;
    __L.first = static_cast<unsigned>(f > tu.first_chunk ? tu.first_chunk : f);
  }
  __L.base = static_cast<unsigned long long>(__L.first) * workers;
  __L.flags = captured ? kCaptured : 0u;
  __L.gen = captured ? kAnyGen : d.recs[s].gen;
}

// Whether a launch with `tasks` tasks (at `occ` blocks per SM) can take every place the policy allows on d:
// occ on each allowed SM, or the cap where it applies and is lower. (A launch with fewer tasks leaves
// places: its workers beyond its tasks leave at once.)
inline bool fills_policy_locked(const DeviceState& d, const PolicyState& pol, int occ, unsigned long long tasks) {
  return tasks >= places(policy_room_locked(d, pol), static_cast<unsigned>(occ > 0 ? occ : 1));
}

// A launch under a restricting policy takes its place among the policy's launches: it waits for those
// made two and three before it, and the one just before it if that one fills the policy's room, where
// they were made in other streams (launch_order.cuh; not during a capture: a graph's replays are not
// ordered this way); commit() records its end.
inline void take_turn_locked(const DeviceState& d, PolicyState& pol, bool captured, cudaStream_t s, int occ,
                             unsigned long long tasks, Prepared& p) {
  p.stream = s;
  p.in_turn = !captured && restricted(pol) && tuning_locked().order_streams;
  if (!p.in_turn) return;
  order_before_locked(pol.order[d.dev], s);
  p.fills = fills_policy_locked(d, pol, occ, tasks);
}

// In a stream capture, the runtime's own set-up calls (cudaMalloc for a device's state, a policy's caps
// or more control blocks; a synchronize of its own stream) would invalidate a capture made in the global
// or thread-local mode. For them the calling thread is put in the relaxed mode, which CUDA provides for
// libraries (cudaThreadExchangeStreamCaptureMode), and back at the end of the scope. Before, a launch
// under a policy that was the first on its device, or one past the pool's free control blocks, was
// captured as its original kernel: every replay of the graph ran it unconfined.
class RelaxedCaptureMode {
public:
  explicit RelaxedCaptureMode(bool captured) {
    on_ = captured && cudaThreadExchangeStreamCaptureMode(&mode_) == cudaSuccess;
  }
  ~RelaxedCaptureMode() {
    if (on_) (void)cudaThreadExchangeStreamCaptureMode(&mode_);
  }
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;
  bool on() const { return on_; }

private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
  bool on_ = false;
};

// The calling thread's context id, made current first if none is (a thread's first CUDA call, or the
// first after a cudaDeviceReset): 0 if none can be.
inline unsigned long long launch_context(int dev) {
  unsigned long long id = current_context_id();
  if (id == 0 && cudaSetDevice(dev) == cudaSuccess) id = current_context_id();
  return id;
}

// Everything before the twin's launch. False: launch the original instead (it reports the same error a
// plain launch would, or runs where the twin cannot), for the reason in `why` (fallback.cuh; `error`: the
// context's error for Fallback::context_error), with `policy` the policy that covered it where known.
inline bool prepare(const LaunchConfig& c, const void* original, const void* twin, Prepared& p, Fallback& why,
                    cudaError_t& error, PolicyState*& policy) {
  host_stamp("prepare");
  const LastErrorGuard guard;
  const auto fall = [&](Fallback f) {
    why = f;
    guard.drop_ours();
    return false;
  };
  error = cudaSuccess;
  policy = nullptr;
  const auto fall_early = [&](Fallback f) { // before the lock: the covering policy is looked up for the count
    policy = covering_policy(c);
    return fall(f);
  };
  const unsigned long long ntasks = task_count(c.grid);
  if (ntasks == 0) return fall_early(Fallback::invalid_launch);
  if (ntasks >= kMaxTasks) return fall_early(Fallback::too_many_tasks);
  int dev = 0;
  if ((error = cudaGetDevice(&dev)) != cudaSuccess) return fall_early(Fallback::context_error);
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  if ((error = cudaStreamIsCapturing(c.stream, &cs)) != cudaSuccess) return fall_early(Fallback::context_error);
  const bool captured = cs != cudaStreamCaptureStatusNone;
  const unsigned long long context = captured ? 0 : launch_context(dev);
  const RelaxedCaptureMode relaxed(captured);
  const bool no_set_up = captured && !relaxed.on();
  Runtime& __r = rt();
  std::lock_guard<std::mutex> __g(__r.__m);
  policy = policy_for_locked(c, dev);
  if (no_set_up && !(__r.devs[dev] && __r.devs[dev]->ok)) return fall(Fallback::device_setup);
  DeviceState* d = device_locked(dev, context);
  if (!d) return fall(Fallback::device_setup);
  host_stamp("device");
  if (!fits_device(*d, c.grid, c.block) || c.shmem > d->smem_optin) return fall(Fallback::invalid_launch);
  const unsigned threads = c.block.x * c.block.y * c.block.z;
  const int occ = occupancy_locked(*d, original, twin, threads, c.shmem);
  if (occ < 0) return fall(Fallback::invalid_launch);
  if (occ == 0) return fall(Fallback::no_occupancy);
  host_stamp("occupancy");
  PolicyState* pol = policy;
  if (!ready_policy_locked(*d, *pol, no_set_up)) return fall(Fallback::policy_upload);
  host_stamp("policy");
  unsigned s = 0;
  if (!acquire_control_locked(*d, captured, s, !no_set_up)) return fall(Fallback::no_control_block);
  const unsigned long long full = static_cast<unsigned long long>(occ) * d->sms;
  p.d = d;
  p.control = s;
  p.workers = worker_count(*d, *pol, full, ntasks);
  p.resume_workers = static_cast<unsigned>(full);
  p.policy = pol;
  fill_launch_locked(*d, *pol, s, captured, c.grid, p.workers, static_cast<unsigned>(occ), p.launch);
  take_turn_locked(*d, *pol, captured, c.stream, occ, ntasks, p);
  host_stamp("prepared");
  return true;
}

// The twin's launch failed: the control block was not used.
inline void release_locked(const Prepared& p) {
  if (p.d->recs[p.control].captured) --p.d->ncaptured;
  p.d->recs[p.control].captured = false;
  *(volatile unsigned*)p.d->hflag(p.control) = 0;
}
inline void release(const Prepared& p) {
  std::lock_guard<std::mutex> __g(rt().__m);
  release_locked(p);
}

// The twin is launched: remember how to launch more workers for it (resume).
inline void commit(const Prepared& p, std::function<cudaError_t(const Launch&, unsigned, cudaStream_t)>&& f) {
  std::lock_guard<std::mutex> __g(rt().__m);
  ControlRec& __r = p.d->recs[p.control];
  if (!__r.captured) __r.gen = (__r.gen + 1) & 0x7fffffffu; // the generation the control block will be at when free
  __r.launch = p.launch;
  __r.policy = p.policy;
  if (p.policy) ++p.policy->launches;
  if (p.policy && p.in_turn) order_after_locked(p.policy->order[p.d->dev], p.stream, p.fills);
  __r.resume_workers = p.resume_workers;
  __r.relaunch = std::move(f);
  __r.registered = true;
}

} // namespace detail

} // namespace ptb

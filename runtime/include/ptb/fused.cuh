// ptb/fused.cuh: launching a fused kernel (fuse-kernels; docs/user/fuse-kernels.md). A fused block holds
// slots of several kernels; each kernel keeps its own launch control block (task counter, SM gating,
// yield), so when one kernel's tasks run out its slots leave and the others go on. A decision launcher
// (fuse-kernels --decisions-from) picks per problem size between the fused kernel, the kernels one after the
// other and the kernels in two streams: FusedDecision, nearest_decision, SideStream.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <mutex>
#include <tuple>
#include <utility>

#include "detail/config.cuh"
#include "detail/device_setup.cuh"
#include "detail/device_state.cuh"
#include "detail/dispatch.cuh"
#include "detail/last_error.cuh"
#include "detail/prepare.cuh"
#include "detail/runtime.cuh"
#include "fallback.cuh"
#include "fused_slots.cuh"
#include "launch_config.cuh"
#include "launch_mode.cuh"
#include "launch_params.cuh"

namespace ptb {

// One kernel of a fused launch.
struct FusedPart {
  LaunchConfig config; // the kernel's original grid, block, dynamic shared memory and stream
  dim3 block;          // the block shape the fused kernel's slots were generated for
  unsigned slots;      // slots of this kernel in each fused block
};

namespace detail {

inline unsigned align16(size_t n) { return static_cast<unsigned>((n + 15) / 16 * 16); }

// Blocks of `fused` that fit on one SM with `threads` threads and `dyn` bytes of dynamic shared memory
// (cached; 0: cannot run). Raises the kernel's dynamic shared memory limit when it needs more than 48 KiB.
inline int fused_occupancy_locked(DeviceState& d, const void* fused, unsigned threads, size_t dyn) {
  const OccKey __k{fused, threads, dyn};
  auto it = d.occ.find(__k);
  if (it != d.occ.end()) return it->second;
  if (dyn > 48 * 1024) {
    cudaFuncAttributes fa;
    if (cudaFuncGetAttributes(&fa, fused) != cudaSuccess) return 0;
    if (fa.sharedSizeBytes + dyn > d.smem_optin) return 0;
    if (static_cast<size_t>(fa.maxDynamicSharedSizeBytes) < dyn &&
        cudaFuncSetAttribute(fused, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(dyn)) != cudaSuccess)
      return 0;
  }
  int occ = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, fused, static_cast<int>(threads), dyn) != cudaSuccess)
    return 0;
  if (occ > 0) d.occ.emplace(__k, occ);
  return occ;
}

// The fused kernel's argument pointers: the parts' kernel arguments, one Launch per part, the layout.
template <size_t _Np, size_t _Na> struct FusedArgv {
  void* p[_Na + _Np + 1];
  FusedArgv(void* const* args, Launch* launches, FusedShared* layout) {
    for (size_t __j = 0; __j < _Na; ++__j) p[__j] = args[__j];
    for (size_t __j = 0; __j < _Np; ++__j) p[_Na + __j] = &launches[__j];
    p[_Na + _Np] = layout;
  }
};

// Launches more workers (resume) for a fused launch: the fused kernel again, every part's control block
// marked as resume; the parts whose launch is over (or not running on that SM's terms) leave at once.
template <size_t _Np, class... _Args> struct FusedRelauncher {
  const void* fused;
  unsigned threads;
  size_t dyn;
  FusedShared layout;
  Launch launches[_Np];
  std::tuple<_Args...> args;
  unsigned part;
  template <size_t... _Ip>
  cudaError_t go(const Launch& __L, unsigned workers, cudaStream_t s, std::index_sequence<_Ip...>) {
    Launch ls[_Np];
    for (size_t __j = 0; __j < _Np; ++__j) {
      ls[__j] = launches[__j];
      ls[__j].flags |= kResume;
    }
    ls[part] = __L;
    void* a[] = {static_cast<void*>(&std::get<_Ip>(args))..., nullptr};
    FusedArgv<_Np, sizeof...(_Args)> argv(a, ls, &layout);
    return cudaLaunchKernel(fused, dim3(workers), dim3(threads), argv.p, dyn, s);
  }
  cudaError_t operator()(const Launch& __L, unsigned workers, cudaStream_t s) {
    return go(__L, workers, s, std::index_sequence_for<_Args...>{});
  }
};

} // namespace detail

// Launches the fused kernel `fused`, whose parameters are: the parts' kernel arguments in order (`args`,
// each of exactly the kernel parameter's type), one `Launch` per part, then a `FusedShared`. The fused
// kernel runs in the `automatic` launch mode as in `ptb` (the program asked for the fusion; there is no
// original fused kernel to dispatch to: docs/design/dispatch-by-need.md). Returns false
// when the fused kernel cannot run this launch (launch mode `original`, a part's block differs from the
// one generated for, the parts' streams differ, a part has no task, the fused block does not fit the
// SM): nothing was launched, and the caller runs the original kernels instead. Launch errors of the fused
// kernel also give false (after clearing them): the originals then report their own errors, if any.
// Where a policy covers the launch (or PTB_MODE=ptb), each false but the `original` mode's is a fallback
// (ptb/fallback.cuh): counted, reported once per fused kernel and reason, fatal under PTB_STRICT=1.
template <size_t _Np, class... _Args>
bool launch_fused(const void* fused, const FusedPart (&parts)[_Np], _Args... args) {
  static_assert(_Np >= 1 && _Np <= kMaxFusedSlots, "at most 15 slots");
  if (launch_mode() == LaunchMode::original) return false;
  const cudaStream_t stream = parts[0].config.stream;
  const detail::LastErrorGuard guard;
  // A fused launch that cannot run sends the caller to the original kernels, unconfined: where a policy
  // covers the launch (or PTB_MODE=ptb), that is a fallback, counted and reported (ptb/fallback.cuh).
  const auto fall = [&](Fallback why, cudaError_t error) {
    guard.drop_ours();
    if (!detail::runs_original(parts[0].config.policy, stream))
      detail::note_fallback(why, fused, detail::covering_policy(parts[0].config), error);
    return false;
  };
  unsigned threads = 0, nslots = 0;
  FusedShared layout{};
  size_t dyn = 0;
  for (size_t __i = 0; __i < _Np; ++__i) {
    const FusedPart& p = parts[__i];
    const dim3 b = p.config.block;
    if (p.config.stream != stream || b.x != p.block.x || b.y != p.block.y || b.z != p.block.z || p.slots == 0)
      return fall(Fallback::fusion_mismatch, cudaSuccess);
    const unsigned long long nt = detail::task_count(p.config.grid);
    if (nt == 0) return fall(Fallback::invalid_launch, cudaSuccess);
    if (nt >= detail::kMaxTasks) return fall(Fallback::too_many_tasks, cudaSuccess);
    if (nslots + p.slots > kMaxFusedSlots) return fall(Fallback::fusion_mismatch, cudaSuccess);
    for (unsigned __k = 0; __k < p.slots; ++__k) {
      layout.offset[nslots++] = static_cast<unsigned>(dyn);
      dyn += detail::align16(p.config.shmem);
    }
    threads += p.slots * b.x * b.y * b.z;
  }
  int dev = 0;
  cudaError_t error = cudaGetDevice(&dev);
  if (error != cudaSuccess) return fall(Fallback::context_error, error);
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  error = cudaStreamIsCapturing(stream, &cs);
  if (error != cudaSuccess) return fall(Fallback::context_error, error);
  const bool captured = cs != cudaStreamCaptureStatusNone;
  const detail::RelaxedCaptureMode relaxed(captured); // set-up calls in a capture (prepare.cuh)
  const bool no_set_up = captured && !relaxed.on();
  detail::Runtime& __r = detail::rt();
  detail::Prepared prep[_Np];
  unsigned blocks = 0;
  int occ = 0;
  Fallback why = Fallback::invalid_launch;
  const bool prepared = [&] {
    std::lock_guard<std::mutex> __g(__r.__m);
    const auto fail = [&](Fallback f) {
      why = f;
      return false;
    };
    if (no_set_up && !(__r.devs[dev] && __r.devs[dev]->ok)) return fail(Fallback::device_setup);
    detail::DeviceState* d = detail::device_locked(dev);
    if (!d) return fail(Fallback::device_setup);
    for (size_t __i = 0; __i < _Np; ++__i)
      if (!detail::fits_device(*d, parts[__i].config.grid, parts[__i].block)) return fail(Fallback::invalid_launch);
    // the fused block (all the parts' slots) beyond one block's threads or shared memory: it cannot be placed
    if (threads > static_cast<unsigned>(d->max_threads) || dyn > d->smem_optin) return fail(Fallback::no_occupancy);
    occ = detail::fused_occupancy_locked(*d, fused, threads, dyn);
    if (occ <= 0) return fail(Fallback::no_occupancy);
    detail::PolicyState* pol = detail::policy_for_locked(parts[0].config, dev);
    if (!detail::ready_policy_locked(*d, *pol, no_set_up)) return fail(Fallback::policy_upload);
    // No more fused blocks than the part with the most tasks per slot can use.
    unsigned long long need = 0;
    for (size_t __i = 0; __i < _Np; ++__i) {
      const unsigned long long per =
          (detail::task_count(parts[__i].config.grid) + parts[__i].slots - 1) / parts[__i].slots;
      need = per > need ? per : need;
    }
    const unsigned long long full = static_cast<unsigned long long>(occ) * d->sms;
    blocks = detail::worker_count(*d, *pol, full, need);
    for (size_t __i = 0; __i < _Np; ++__i) {
      unsigned s = 0;
      if (!detail::acquire_control_locked(*d, captured, s, !no_set_up)) {
        for (size_t __j = 0; __j < __i; ++__j) detail::release_locked(prep[__j]);
        return fail(Fallback::no_control_block);
      }
      prep[__i].d = d;
      prep[__i].control = s;
      prep[__i].workers = blocks * parts[__i].slots;
      prep[__i].resume_workers = static_cast<unsigned>(full);
      prep[__i].policy = pol;
      detail::fill_launch_locked(*d, *pol, s, captured, parts[__i].config.grid, prep[__i].workers,
                                 static_cast<unsigned>(occ) * parts[__i].slots, prep[__i].launch);
    }
    // one launch: one turn, its end recorded once; it fills the policy's room with `need` blocks' worth of work
    detail::take_turn_locked(*d, *pol, captured, stream, occ, need, prep[0]);
    return true;
  }();
  if (!prepared) return fall(why, cudaSuccess);
  void* a[] = {static_cast<void*>(&args)..., nullptr};
  Launch launches[_Np];
  for (size_t __j = 0; __j < _Np; ++__j) launches[__j] = prep[__j].launch;
  detail::FusedArgv<_Np, sizeof...(_Args)> argv(a, launches, &layout);
  if (cudaLaunchKernel(fused, dim3(blocks), dim3(threads), argv.p, dyn, stream) != cudaSuccess) {
    (void)cudaGetLastError();
    for (size_t __i = 0; __i < _Np; ++__i) detail::release(prep[__i]);
    return fall(Fallback::no_occupancy, cudaSuccess); // its resources: the launch found no room for its block
  }
  detail::FusedRelauncher<_Np, _Args...> rl{fused, threads, dyn, layout, {}, std::tuple<_Args...>(args...), 0};
  for (size_t __j = 0; __j < _Np; ++__j) rl.launches[__j] = launches[__j];
  for (size_t __i = 0; __i < _Np; ++__i) {
    rl.part = static_cast<unsigned>(__i);
    detail::commit(prep[__i], detail::FusedRelauncher<_Np, _Args...>(rl));
  }
  return true;
}

// ---- Decisions (fuse-kernels --decisions-from; docs/user/fuse-kernels.md, "Decisions") ----

// What a decision launcher runs for one problem size: the kernels one after the other in the caller's
// stream, the kernels in two streams (SideStream), or a fused candidate.
enum class FusedChoice : int { sequential = 0, streams = 1, fused = 2 };

// One measured problem size: each kernel's task count there (grid.x * grid.y * grid.z of its launch) and
// what ran fastest. With `fused`, `candidate` indexes the output's candidate table (else -1); `label` is
// the candidate's ratio ("2:2/2"), "sequential" or "streams".
template <size_t _Np> struct FusedDecision {
  unsigned long long tasks[_Np];
  FusedChoice choice;
  int candidate;
  const char* label;
};

// A launch's task count: grid.x * grid.y * grid.z (what a decision's `tasks` hold).
inline unsigned long long grid_tasks(dim3 grid) {
  return static_cast<unsigned long long>(grid.x) * grid.y * static_cast<unsigned long long>(grid.z);
}

// The decision measured nearest to a launch with `tasks` tasks per kernel: the least sum over the kernels of
// |ln(tasks / measured tasks)| (sizes compare by ratio: 2x larger is as far as 2x smaller), the first one of
// equal distance. A task count of 0 counts as 1.
template <size_t _Np, size_t _Mp>
inline const FusedDecision<_Np>& nearest_decision(const FusedDecision<_Np> (&table)[_Mp],
                                                  const unsigned long long (&tasks)[_Np]) {
  static_assert(_Mp >= 1, "a decision table has at least one entry");
  size_t best = 0;
  double best_d = 0;
  for (size_t __i = 0; __i < _Mp; ++__i) {
    double d = 0;
    for (size_t __k = 0; __k < _Np; ++__k) {
      const double a = tasks[__k] ? static_cast<double>(tasks[__k]) : 1.0;
      const double b = table[__i].tasks[__k] ? static_cast<double>(table[__i].tasks[__k]) : 1.0;
      d += std::fabs(std::log(a / b));
    }
    if (__i == 0 || d < best_d) {
      best = __i;
      best_d = d;
    }
  }
  return table[best];
}

namespace detail {
// One side stream and its two events per device, made on first use and kept for the process's life.
struct SideStreamSlot {
  bool tried = false, ok = false;
  cudaStream_t side = nullptr;
  cudaEvent_t fork = nullptr, join = nullptr;
};
constexpr int kMaxSideStreamDevices = 64;
inline std::mutex& side_stream_mutex() {
  static std::mutex __m;
  return __m;
}
inline SideStreamSlot& side_stream_slot(int dev) {
  static SideStreamSlot slots[kMaxSideStreamDevices];
  return slots[dev];
}
} // namespace detail

// Runs work beside `stream` on a side stream, ordered both ways: made, it records an event in `stream`
// and makes the side stream wait for it (what `stream` had before comes first); ended, it records an event
// in the side stream and makes `stream` wait for it (what follows in `stream` comes after the side's work).
// Launch the first part in `stream` and the second in side() while it lives. One non-blocking side stream
// and two timing-free events per device, created once and never destroyed; a mutex held for the object's
// life keeps one fork/join at a time (host threads that use it at once take turns; their kernels still
// overlap on the GPU). Under stream capture of `stream`, or when the stream or events cannot be made,
// nothing forks: side() is `stream` and the parts run one after the other (a shared side stream cannot be
// part of a graph that may be replayed while the program uses it).
class SideStream {
public:
  explicit SideStream(cudaStream_t stream) : stream_(stream), lock_(detail::side_stream_mutex()) {
    cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream, &cs) != cudaSuccess) {
      (void)cudaGetLastError();
      return;
    }
    int dev = 0;
    if (cs != cudaStreamCaptureStatusNone || cudaGetDevice(&dev) != cudaSuccess || dev < 0 ||
        dev >= detail::kMaxSideStreamDevices)
      return;
    detail::SideStreamSlot& s = detail::side_stream_slot(dev);
    if (!s.tried) {
      s.tried = true;
      s.ok = cudaStreamCreateWithFlags(&s.side, cudaStreamNonBlocking) == cudaSuccess &&
             cudaEventCreateWithFlags(&s.fork, cudaEventDisableTiming) == cudaSuccess &&
             cudaEventCreateWithFlags(&s.join, cudaEventDisableTiming) == cudaSuccess;
      if (!s.ok) (void)cudaGetLastError();
    }
    if (!s.ok) return;
    if (cudaEventRecord(s.fork, stream) != cudaSuccess || cudaStreamWaitEvent(s.side, s.fork, 0) != cudaSuccess) {
      (void)cudaGetLastError();
      return;
    }
    slot_ = &s;
  }
  ~SideStream() {
    if (!slot_) return;
    if (cudaEventRecord(slot_->join, slot_->side) != cudaSuccess ||
        cudaStreamWaitEvent(stream_, slot_->join, 0) != cudaSuccess) {
      // The caller's stream could not be made to wait: wait here, so that nothing after it overtakes.
      (void)cudaGetLastError();
      (void)cudaStreamSynchronize(slot_->side);
    }
  }
  SideStream(const SideStream&) = delete;
  SideStream& operator=(const SideStream&) = delete;
  // Where the second part goes: the side stream, or `stream` itself when nothing forked.
  cudaStream_t side() const { return slot_ ? slot_->side : stream_; }
  bool forked() const { return slot_ != nullptr; }

private:
  cudaStream_t stream_;
  std::lock_guard<std::mutex> lock_;
  detail::SideStreamSlot* slot_ = nullptr;
};

} // namespace ptb

// ptb/fused.cuh: launching a fused kernel (fuse-kernels; docs/fuse-kernels.md). A fused block holds
// slots of several kernels; each kernel keeps its own launch control block (task counter, SM gating,
// yield), so when one kernel's tasks run out its slots leave and the others go on.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <mutex>
#include <tuple>
#include <utility>

#include "detail/config.cuh"
#include "detail/device_setup.cuh"
#include "detail/device_state.cuh"
#include "detail/prepare.cuh"
#include "detail/runtime.cuh"
#include "fused_slots.cuh"
#include "launch_config.cuh"
#include "launch_mode.cuh"
#include "twin_params.cuh"

namespace ptb {

// One kernel of a fused launch.
struct FusedPart {
  LaunchConfig config;  // the kernel's original grid, block, dynamic shared memory and stream
  dim3 block;           // the block shape the fused kernel's slots were generated for
  unsigned slots;       // slots of this kernel in each fused block
};

namespace detail {

inline unsigned align16(size_t n) { return static_cast<unsigned>((n + 15) / 16 * 16); }

// Blocks of `fused` that fit on one SM with `threads` threads and `dyn` bytes of dynamic shared memory
// (cached; 0: cannot run). Raises the kernel's dynamic shared memory limit when it needs more than 48 KiB.
inline int fused_occupancy_locked(DeviceState& d, const void* fused, unsigned threads, size_t dyn) {
  const OccKey k{fused, threads, dyn};
  auto it = d.occ.find(k);
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
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, fused, static_cast<int>(threads), dyn) != cudaSuccess) return 0;
  if (occ > 0) d.occ.emplace(k, occ);
  return occ;
}

// The fused kernel's argument pointers: the parts' kernel arguments, one Launch per part, the layout.
template <size_t N, size_t A>
struct FusedArgv {
  void* p[A + N + 1];
  FusedArgv(void* const* args, Launch* launches, FusedShared* layout) {
    for (size_t j = 0; j < A; ++j) p[j] = args[j];
    for (size_t j = 0; j < N; ++j) p[A + j] = &launches[j];
    p[A + N] = layout;
  }
};

// Launches more workers (resume) for a fused launch: the fused kernel again, every part's control block
// marked as resume; the parts whose launch is over (or not running on that SM's terms) leave at once.
template <size_t N, class... Args>
struct FusedRelauncher {
  const void* fused;
  unsigned threads;
  size_t dyn;
  FusedShared layout;
  Launch launches[N];
  std::tuple<Args...> args;
  unsigned part;
  template <size_t... I>
  cudaError_t go(const Launch& L, unsigned workers, cudaStream_t s, std::index_sequence<I...>) {
    Launch ls[N];
    for (size_t j = 0; j < N; ++j) {
      ls[j] = launches[j];
      ls[j].flags |= kResume;
    }
    ls[part] = L;
    void* a[] = {static_cast<void*>(&std::get<I>(args))..., nullptr};
    FusedArgv<N, sizeof...(Args)> argv(a, ls, &layout);
    return cudaLaunchKernel(fused, dim3(workers), dim3(threads), argv.p, dyn, s);
  }
  cudaError_t operator()(const Launch& L, unsigned workers, cudaStream_t s) {
    return go(L, workers, s, std::index_sequence_for<Args...>{});
  }
};

}  // namespace detail

// Launches the fused kernel `fused`, whose parameters are: the parts' kernel arguments in order (`args`,
// each of exactly the kernel parameter's type), one `Launch` per part, then a `FusedShared`. The fused
// kernel runs in the `automatic` launch mode as in `ptb` (the program asked for the fusion; there is no
// original fused kernel to dispatch to: docs/runtime.md, "Dispatch by need"). Returns false
// when the fused kernel cannot run this launch (launch mode `original`, a part's block differs from the
// one generated for, the parts' streams differ, a part has no task, the fused block does not fit the
// SM): nothing was launched, and the caller runs the original kernels instead. Launch errors of the fused
// kernel also give false (after clearing them): the originals then report their own errors, if any.
template <size_t N, class... Args>
bool launch_fused(const void* fused, const FusedPart (&parts)[N], Args... args) {
  static_assert(N >= 1 && N <= kMaxFusedSlots, "at most 15 slots");
  if (launch_mode() == LaunchMode::original) return false;
  const cudaStream_t stream = parts[0].config.stream;
  unsigned threads = 0, nslots = 0;
  FusedShared layout{};
  size_t dyn = 0;
  for (size_t i = 0; i < N; ++i) {
    const FusedPart& p = parts[i];
    const dim3 b = p.config.block;
    if (p.config.stream != stream || b.x != p.block.x || b.y != p.block.y || b.z != p.block.z || p.slots == 0)
      return false;
    const unsigned long long nt = detail::task_count(p.config.grid);
    if (nt == 0 || nt >= detail::kMaxTasks) return false;
    if (nslots + p.slots > kMaxFusedSlots) return false;
    for (unsigned k = 0; k < p.slots; ++k) {
      layout.offset[nslots++] = static_cast<unsigned>(dyn);
      dyn += detail::align16(p.config.shmem);
    }
    threads += p.slots * b.x * b.y * b.z;
  }
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return false;
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &cs) != cudaSuccess) return false;
  const bool captured = cs != cudaStreamCaptureStatusNone;
  detail::Runtime& r = detail::rt();
  detail::Prepared prep[N];
  unsigned blocks = 0;
  int occ = 0;
  {
    std::lock_guard<std::mutex> g(r.m);
    if (captured && !(r.devs[dev] && r.devs[dev]->ok)) return false;
    detail::DeviceState* d = detail::device_locked(dev);
    if (!d) return false;
    if (threads > static_cast<unsigned>(d->max_threads) || dyn > d->smem_optin) return false;
    for (size_t i = 0; i < N; ++i)
      if (!detail::fits_device(*d, parts[i].config.grid, parts[i].block)) return false;
    occ = detail::fused_occupancy_locked(*d, fused, threads, dyn);
    if (occ <= 0) return false;
    detail::PolicyState* pol = detail::policy_for_locked(parts[0].config);
    if (!detail::ready_policy_locked(*d, *pol, captured)) return false;
    // No more fused blocks than the part with the most tasks per slot can use.
    unsigned long long need = 0;
    for (size_t i = 0; i < N; ++i) {
      const unsigned long long per = (detail::task_count(parts[i].config.grid) + parts[i].slots - 1) / parts[i].slots;
      need = per > need ? per : need;
    }
    const unsigned long long full = static_cast<unsigned long long>(occ) * d->sms;
    blocks = detail::worker_count(*d, *pol, full, need);
    for (size_t i = 0; i < N; ++i) {
      unsigned s = 0;
      if (!detail::acquire_control_locked(*d, captured, s)) {
        for (size_t j = 0; j < i; ++j) detail::release_locked(prep[j]);
        return false;
      }
      prep[i].d = d;
      prep[i].control = s;
      prep[i].workers = blocks * parts[i].slots;
      prep[i].resume_workers = static_cast<unsigned>(full);
      prep[i].policy = pol;
      detail::fill_launch_locked(*d, *pol, s, captured, parts[i].config.grid, prep[i].workers, prep[i].launch);
    }
  }
  void* a[] = {static_cast<void*>(&args)..., nullptr};
  Launch launches[N];
  for (size_t j = 0; j < N; ++j) launches[j] = prep[j].launch;
  detail::FusedArgv<N, sizeof...(Args)> argv(a, launches, &layout);
  if (cudaLaunchKernel(fused, dim3(blocks), dim3(threads), argv.p, dyn, stream) != cudaSuccess) {
    (void)cudaGetLastError();
    for (size_t i = 0; i < N; ++i) detail::release(prep[i]);
    return false;
  }
  detail::FusedRelauncher<N, Args...> rl{fused, threads, dyn, layout, {}, std::tuple<Args...>(args...), 0};
  for (size_t j = 0; j < N; ++j) rl.launches[j] = launches[j];
  for (size_t i = 0; i < N; ++i) {
    rl.part = static_cast<unsigned>(i);
    detail::commit(prep[i], detail::FusedRelauncher<N, Args...>(rl));
  }
  return true;
}

}  // namespace ptb

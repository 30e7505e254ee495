// ptb/launch.cuh: ptb::launch and ptb::launch_kernel_args (a twin's workers, or the original kernel), and
// ptb::preload.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <tuple>
#include <utility>

#include "detail/dispatch.cuh"
#include "detail/prepare.cuh"
#include "launch_config.cuh"
#include "policy.cuh"
#include "twin_params.cuh"

namespace ptb {

namespace detail {

template <class... Params>
struct TwinOf {
  using type = void (*)(Params..., Launch);
};

}  // namespace detail

namespace detail {

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

// Load both kernels now (CUDA's lazy loading makes the first launch of a kernel wait for the kernels
// running at that time; a kernel meant to start beside a long-running one must be loaded before).
template <class... Params>
cudaError_t preload(void (*original)(Params...), typename detail::TwinOf<Params...>::type twin) {
  cudaFuncAttributes a;
  cudaError_t e = cudaFuncGetAttributes(&a, reinterpret_cast<const void*>(original));
  if (e == cudaSuccess) e = cudaFuncGetAttributes(&a, reinterpret_cast<const void*>(twin));
  return e;
}

}  // namespace ptb

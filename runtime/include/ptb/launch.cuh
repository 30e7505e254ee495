// ptb/launch.cuh: ptb::launch and ptb::launch_kernel_args (a twin's workers, or the original kernel), and
// ptb::preload.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <tuple>
#include <utility>

#include "detail/dispatch.cuh"
#include "detail/host_stamps.cuh"
#include "detail/prepare.cuh"
#include "fallback.cuh"
#include "launch_config.cuh"
#include "policy.cuh"
#include "launch_params.cuh"

namespace ptb {

namespace detail {

template <class... Params> struct TwinOf {
  using type = void (*)(Params..., Launch);
};

} // namespace detail

namespace detail {

template <class... Params> struct Relauncher {
  typename TwinOf<Params...>::type twin;
  std::tuple<Params...> args;
  dim3 block;
  size_t shmem;
  template <size_t... _Ip>
  cudaError_t go(const Launch& __L, unsigned workers, cudaStream_t s, std::index_sequence<_Ip...>) {
    Launch __l = __L;
    void* argv[] = {static_cast<void*>(&std::get<_Ip>(args))..., static_cast<void*>(&__l)};
    return cudaLaunchKernel(reinterpret_cast<const void*>(twin), dim3(workers), block, argv, shmem, s);
  }
  cudaError_t operator()(const Launch& __L, unsigned workers, cudaStream_t s) {
    return go(__L, workers, s, std::index_sequence_for<Params...>{});
  }
};

template <class... Params, size_t... _Ip>
cudaError_t launch_tuple(const LaunchConfig& c, const void* original, typename TwinOf<Params...>::type twin,
                         std::tuple<Params...>& a, std::index_sequence<_Ip...>) {
  Prepared p;
  Fallback why = Fallback::invalid_launch;
  cudaError_t error = cudaSuccess;
  PolicyState* policy = nullptr;
  if (!prepare(c, original, reinterpret_cast<const void*>(twin), p, why, error, policy)) {
    note_fallback(why, original, policy, error); // counted; reported once per kernel and reason
    void* argv[] = {static_cast<void*>(&std::get<_Ip>(a))..., nullptr};
    return cudaLaunchKernel(original, c.grid, c.block, argv, c.shmem, c.stream);
  }
  void* argv[] = {static_cast<void*>(&std::get<_Ip>(a))..., static_cast<void*>(&p.launch)};
  const cudaError_t e =
      cudaLaunchKernel(reinterpret_cast<const void*>(twin), dim3(p.workers), c.block, argv, c.shmem, c.stream);
  host_stamp("launched");
  if (e != cudaSuccess) {
    release(p);
    return e;
  }
  commit(p, Relauncher<Params...>{twin, a, c.block, c.shmem});
  host_stamp("committed");
  return cudaSuccess;
}

template <class... Params, size_t... _Ip>
cudaError_t launch_argv(const void* original, typename TwinOf<Params...>::type twin, const LaunchConfig& c, void** argv,
                        std::index_sequence<_Ip...>) {
  std::tuple<Params...> a(*static_cast<Params*>(argv[_Ip])...);
  return launch_tuple(c, original, twin, a, std::index_sequence<_Ip...>{});
}

// The original kernel's parameters, from its twin's type void (*)(Params..., Launch): Params... as a tuple.
template <class Twin> struct TwinArgs;
template <class... _Pp> struct TwinArgs<void (*)(_Pp...)> {
  template <size_t... _Ip>
  static std::tuple<std::tuple_element_t<_Ip, std::tuple<_Pp...>>...> drop_launch(std::index_sequence<_Ip...>);
  using tuple = decltype(drop_launch(std::make_index_sequence<sizeof...(_Pp) - 1>{}));
  using indices = std::make_index_sequence<sizeof...(_Pp) - 1>;
};

// Twins apart (docs/reference/generated-code.md): what the twins part defines for a template kernel, and the
// program's compile calls with the original's address.
template <class... Params> struct TwinLaunchOf {
  using type = void (*)(const LaunchConfig&, const void*, Params...);
};
using TwinLaunchArgs = cudaError_t (*)(const void*, dim3, dim3, void**, size_t, cudaStream_t);

// A kernel's arguments, copied from cudaLaunchKernel's argv into the tuple of its parameter types.
template <class Tuple, size_t... _Ip> Tuple tuple_from_argv(void** argv, std::index_sequence<_Ip...>) {
  (void)argv; // a kernel without parameters
  return Tuple(*static_cast<std::tuple_element_t<_Ip, Tuple>*>(argv[_Ip])...);
}

} // namespace detail

namespace detail {
template <class... Params, size_t... _Ip>
cudaError_t launch_original(const LaunchConfig& c, void (*original)(Params...), std::tuple<Params...>& a,
                            std::index_sequence<_Ip...>) {
  void* argv[] = {static_cast<void*>(&std::get<_Ip>(a))..., nullptr};
  return cudaLaunchKernel(reinterpret_cast<const void*>(original), c.grid, c.block, argv, c.shmem, c.stream);
}
} // namespace detail

// Launch the twin's workers in config.stream, or the original kernel with config's grid: in `original`
// mode, and in `automatic` mode when no policy can confine or yield the launch (see LaunchMode). Errors
// are reported as a plain launch reports them: through cudaGetLastError() / cudaPeekAtLastError().
// (`twin` is spelled through TwinOf so that Params are deduced from `original` alone: nvcc cannot deduce
// a parameter pack that is not last in a function type. Its type is exactly void (*)(Params..., Launch).)
template <class... Params, class... Args>
void launch(const LaunchConfig& config, void (*original)(Params...), typename detail::TwinOf<Params...>::type twin,
            Args&&... args) {
  std::tuple<Params...> a(std::forward<Args>(args)...);
  const detail::Dispatch __how =
      detail::dispatch(config.policy, config.stream, reinterpret_cast<const void*>(original), config.grid);
  detail::TimedScope __timed(__how, config.stream);
  if (__how.original)
    __timed.finish(detail::launch_original(config, original, a, std::index_sequence_for<Params...>{}) == cudaSuccess);
  else
    __timed.finish(detail::launch_tuple(config, reinterpret_cast<const void*>(original), twin, a,
                                        std::index_sequence_for<Params...>{}) == cudaSuccess);
}

// The cudaLaunchKernel form; argv points at the original kernel's arguments. Dispatched as launch() is
// (it has no launch policy: the stream's or the process's decides in automatic mode); returns what
// cudaLaunchKernel returns.
template <class... Params>
cudaError_t launch_kernel_args(void (*original)(Params...), typename detail::TwinOf<Params...>::type twin, dim3 grid,
                               dim3 block, void** argv, size_t shmem, cudaStream_t stream) {
  const detail::Dispatch __how = detail::dispatch(Policy(), stream, reinterpret_cast<const void*>(original), grid);
  detail::TimedScope __timed(__how, stream);
  const cudaError_t __e =
      __how.original ? cudaLaunchKernel(reinterpret_cast<const void*>(original), grid, block, argv, shmem, stream)
                     : detail::launch_argv<Params...>(reinterpret_cast<const void*>(original), twin,
                                                      LaunchConfig(grid, block, shmem, stream), argv,
                                                      std::index_sequence_for<Params...>{});
  __timed.finish(__e == cudaSuccess);
  return __e;
}

// Twins apart, for a template kernel (docs/reference/generated-code.md, "Twins apart"): the program's compile has
// the original kernel and, in place of its twin, `twin_launch`, a function the twins part defines (it
// launches the twin, in the twins' module). Dispatched as launch() is; the twins part never names the
// original (which would register it in the twins' module too): its address is passed.
template <class... Params, class... Args>
void launch_apart(const LaunchConfig& config, void (*original)(Params...),
                  typename detail::TwinLaunchOf<Params...>::type twin_launch, Args&&... args) {
  const detail::Dispatch __how =
      detail::dispatch(config.policy, config.stream, reinterpret_cast<const void*>(original), config.grid);
  detail::TimedScope __timed(__how, config.stream);
  if (__how.original) {
    std::tuple<Params...> a(std::forward<Args>(args)...);
    __timed.finish(detail::launch_original(config, original, a, std::index_sequence_for<Params...>{}) == cudaSuccess);
  } else {
    twin_launch(config, reinterpret_cast<const void*>(original), std::forward<Args>(args)...);
    __timed.finish(cudaPeekAtLastError() == cudaSuccess); // (the twins part reports as a plain launch would)
  }
}

// launch_apart's cudaLaunchKernel form (launch_kernel_args with a twin in the twins part).
template <class... Params>
cudaError_t launch_kernel_args_apart(void (*original)(Params...), detail::TwinLaunchArgs twin_launch, dim3 grid,
                                     dim3 block, void** argv, size_t shmem, cudaStream_t stream) {
  const detail::Dispatch __how = detail::dispatch(Policy(), stream, reinterpret_cast<const void*>(original), grid);
  detail::TimedScope __timed(__how, stream);
  const cudaError_t __e =
      __how.original ? cudaLaunchKernel(reinterpret_cast<const void*>(original), grid, block, argv, shmem, stream)
                     : twin_launch(reinterpret_cast<const void*>(original), grid, block, argv, shmem, stream);
  __timed.finish(__e == cudaSuccess);
  return __e;
}

// The twins part's side of launch_apart: the twin's workers (or, where the runtime cannot run them, the
// original, by its address), as launch() runs them once it has chosen the twin.
template <class Twin, class... Args>
void launch_twin(const LaunchConfig& config, const void* original, Twin twin, Args&&... args) {
  typename detail::TwinArgs<Twin>::tuple a(std::forward<Args>(args)...);
  (void)detail::launch_tuple(config, original, twin, a, typename detail::TwinArgs<Twin>::indices{});
}

// The twins part's side of launch_kernel_args_apart.
template <class Twin>
cudaError_t launch_kernel_args_twin(const void* original, Twin twin, dim3 grid, dim3 block, void** argv, size_t shmem,
                                    cudaStream_t stream) {
  using Args = detail::TwinArgs<Twin>;
  auto a = detail::tuple_from_argv<typename Args::tuple>(argv, typename Args::indices{});
  return detail::launch_tuple(LaunchConfig(grid, block, shmem, stream), original, twin, a, typename Args::indices{});
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

} // namespace ptb

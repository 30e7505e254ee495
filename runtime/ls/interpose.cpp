// runtime/ls/interpose.cpp: the driver entry points libptb-ls interposes when it is preloaded (LD_PRELOAD)
// or linked, so that the program's launches are marked without CUPTI (docs/design/ls-marks.md).
//
// Programs and libraries reach the driver through dlsym on libcuda.so.1 and then through cuGetProcAddress
// (the CUDA runtime, static or shared, cuBLAS, cuDNN, Triton, ctypes). This file defines dlsym: a lookup
// of one of the entry points below gets our wrapper of what libc's dlsym found, and cuGetProcAddress's
// wrapper does the same for what the driver hands out. A launch wrapper counts the launch before it calls
// the driver (the controller sees LS busy while the call runs) and enqueues the device's completion write
// after it (ptb_ls.cpp). Context and stream destruction are reported as CUPTI's resource callbacks were.
//
// dlsym(RTLD_NEXT, ...) looks up relative to its caller, so that path must reach libc's dlsym with the
// caller's return address on the stack: dlsym is a few instructions of assembly that jump there (x86-64;
// elsewhere nothing is interposed and the library is used through CUDA_INJECTION64_PATH).
#include "ls_glue.h"

#include <cuda.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>

using DlsymFn = void* (*)(void*, const char*);

extern "C" {
// The real dlsym, found on the first call (the assembly calls ptb_ls_load_next_dlsym while it is null).
__attribute__((visibility("hidden"))) std::atomic<DlsymFn> ptb_ls_next_dlsym{nullptr};
__attribute__((visibility("hidden"))) void* ptb_ls_load_next_dlsym();
__attribute__((visibility("hidden"))) void* ptb_ls_dlsym(void* handle, const char* name);
}

namespace ptb::ls {
namespace {

enum Entry : unsigned {
  kLaunchKernel,
  kLaunchKernelEx,
  kLaunchCooperativeKernel,
  kGraphLaunch,
  kGetProcAddress1, // cuGetProcAddress of CUDA 11.3-11.8 (four parameters)
  kGetProcAddress2, // cuGetProcAddress_v2 (five)
  kCtxDestroy,
  kPrimaryCtxReset,
  kPrimaryCtxRelease,
  kStreamDestroy,
  kEntries
};
// Distinct driver functions one entry can stand for (its legacy and per-thread forms, its versions).
constexpr unsigned kVariants = 4;

// A driver function we wrap. ptsz (the launch's null stream is the per-thread one) is written before fn is
// published, under g_claim.
struct Real {
  std::atomic<void*> fn{nullptr};
  bool ptsz = false;
};
Real g_real[kEntries][kVariants];
std::mutex g_claim;
std::atomic<bool> g_interposed{false};

DlsymFn next_dlsym() {
  DlsymFn f = ptb_ls_next_dlsym.load(std::memory_order_acquire);
  return f ? f : reinterpret_cast<DlsymFn>(ptb_ls_load_next_dlsym());
}

template <Entry E, unsigned V, typename Fn> Fn real_fn() {
  return reinterpret_cast<Fn>(g_real[E][V].fn.load(std::memory_order_acquire));
}

// A launch into `stream`: counted before the driver's call, its completion enqueued after it.
template <Entry E, unsigned V, typename Fn, typename... Args> CUresult marked(CUstream stream, Args... args) {
  const Real& real = g_real[E][V];
  const auto fn = reinterpret_cast<Fn>(real.fn.load(std::memory_order_acquire));
  PendingMark mark = mark_enter(stream, real.ptsz);
  const CUresult r = fn(args...);
  mark_exit(mark, r == CUDA_SUCCESS);
  return r;
}

template <unsigned V>
CUresult CUDAAPI launch_kernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned shared, CUstream s, void** params, void** extra) {
  return marked<kLaunchKernel, V, decltype(&::cuLaunchKernel)>(s, f, gx, gy, gz, bx, by, bz, shared, s, params, extra);
}
template <unsigned V>
CUresult CUDAAPI launch_kernel_ex(const CUlaunchConfig* config, CUfunction f, void** params, void** extra) {
  using Fn = decltype(&::cuLaunchKernelEx);
  if (!config) return real_fn<kLaunchKernelEx, V, Fn>()(config, f, params, extra);
  return marked<kLaunchKernelEx, V, Fn>(config->hStream, config, f, params, extra);
}
template <unsigned V>
CUresult CUDAAPI launch_cooperative(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                    unsigned bz, unsigned shared, CUstream s, void** params) {
  return marked<kLaunchCooperativeKernel, V, decltype(&::cuLaunchCooperativeKernel)>(s, f, gx, gy, gz, bx, by, bz,
                                                                                     shared, s, params);
}
template <unsigned V> CUresult CUDAAPI graph_launch(CUgraphExec graph, CUstream s) {
  return marked<kGraphLaunch, V, decltype(&::cuGraphLaunch)>(s, graph, s);
}
// A destructor: the library is told first (context_destroying and the like), then the driver's call is made.
template <Entry E, unsigned V, typename Fn, typename Arg, void (*Tell)(Arg)> CUresult CUDAAPI told(Arg arg) {
  Tell(arg);
  return real_fn<E, V, Fn>()(arg);
}

using GetProcAddress1 = CUresult(CUDAAPI*)(const char*, void**, int, cuuint64_t);
using GetProcAddress2 = CUresult(CUDAAPI*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);

void* interpose_proc(const char* symbol, void* fn, int version, cuuint64_t flags, GetProcAddress2 query2,
                     GetProcAddress1 query1);

template <unsigned V>
CUresult CUDAAPI get_proc_address2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                                   CUdriverProcAddressQueryResult* status) {
  const auto real = real_fn<kGetProcAddress2, V, GetProcAddress2>();
  const CUresult r = real(symbol, pfn, version, flags, status);
  if (r == CUDA_SUCCESS && symbol && pfn && *pfn) *pfn = interpose_proc(symbol, *pfn, version, flags, real, nullptr);
  return r;
}
template <unsigned V>
CUresult CUDAAPI get_proc_address1(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  const auto real = real_fn<kGetProcAddress1, V, GetProcAddress1>();
  const CUresult r = real(symbol, pfn, version, flags);
  if (r == CUDA_SUCCESS && symbol && pfn && *pfn) *pfn = interpose_proc(symbol, *pfn, version, flags, nullptr, real);
  return r;
}

template <unsigned V> void* wrapper(Entry e) {
  switch (e) {
  case kLaunchKernel: return reinterpret_cast<void*>(&launch_kernel<V>);
  case kLaunchKernelEx: return reinterpret_cast<void*>(&launch_kernel_ex<V>);
  case kLaunchCooperativeKernel: return reinterpret_cast<void*>(&launch_cooperative<V>);
  case kGraphLaunch: return reinterpret_cast<void*>(&graph_launch<V>);
  case kGetProcAddress1: return reinterpret_cast<void*>(&get_proc_address1<V>);
  case kGetProcAddress2: return reinterpret_cast<void*>(&get_proc_address2<V>);
  case kCtxDestroy:
    return reinterpret_cast<void*>(&told<kCtxDestroy, V, decltype(&::cuCtxDestroy), CUcontext, &context_destroying>);
  case kPrimaryCtxReset:
    return reinterpret_cast<void*>(
        &told<kPrimaryCtxReset, V, decltype(&::cuDevicePrimaryCtxReset), CUdevice, &device_resetting>);
  case kPrimaryCtxRelease:
    return reinterpret_cast<void*>(
        &told<kPrimaryCtxRelease, V, decltype(&::cuDevicePrimaryCtxRelease), CUdevice, &device_resetting>);
  case kStreamDestroy:
    return reinterpret_cast<void*>(
        &told<kStreamDestroy, V, decltype(&::cuStreamDestroy), CUstream, &stream_destroying>);
  case kEntries: break;
  }
  return nullptr;
}
void* wrapper(Entry e, unsigned v) {
  static_assert(kVariants == 4, "one case per variant");
  switch (v) {
  case 0: return wrapper<0>(e);
  case 1: return wrapper<1>(e);
  case 2: return wrapper<2>(e);
  default: return wrapper<3>(e);
  }
}

bool enabled() {
  static const bool on = [] {
    const char* v = std::getenv("PTB_LS_INTERPOSE");
    return !(v && std::strcmp(v, "0") == 0);
  }();
  return on;
}

// Our wrapper of the driver's `fn` for entry `e`; fn itself when it is one of ours already, or when the
// entry has no variant left (said once).
void* wrap(Entry e, void* fn, bool ptsz) {
  for (unsigned v = 0; v < kVariants; ++v)
    if (fn == wrapper(e, v)) return fn;
  for (unsigned v = 0; v < kVariants; ++v) {
    void* known = g_real[e][v].fn.load(std::memory_order_acquire);
    if (known == fn) return wrapper(e, v);
    if (!known) break;
  }
  std::lock_guard<std::mutex> lock(g_claim);
  for (unsigned v = 0; v < kVariants; ++v) {
    Real& real = g_real[e][v];
    void* known = real.fn.load(std::memory_order_relaxed);
    if (known == fn) return wrapper(e, v);
    if (known) continue;
    real.ptsz = ptsz;
    real.fn.store(fn, std::memory_order_release);
    if (!g_interposed.exchange(true, std::memory_order_acq_rel) && env_on("PTB_LS_VERBOSE"))
      say("the driver's entry points are interposed: launches are marked without CUPTI");
    return wrapper(e, v);
  }
  static std::atomic<bool> said{false};
  if (!said.exchange(true))
    say("more driver functions for one entry point than expected: some launches are not marked");
  return fn;
}

struct Name {
  const char* name;
  Entry entry;
  bool ptsz;
};
// The names dlsym is asked for.
constexpr Name kSymbols[] = {
    {"cuLaunchKernel", kLaunchKernel, false},
    {"cuLaunchKernel_ptsz", kLaunchKernel, true},
    {"cuLaunchKernelEx", kLaunchKernelEx, false},
    {"cuLaunchKernelEx_ptsz", kLaunchKernelEx, true},
    {"cuLaunchCooperativeKernel", kLaunchCooperativeKernel, false},
    {"cuLaunchCooperativeKernel_ptsz", kLaunchCooperativeKernel, true},
    {"cuGraphLaunch", kGraphLaunch, false},
    {"cuGraphLaunch_ptsz", kGraphLaunch, true},
    {"cuGetProcAddress", kGetProcAddress1, false},
    {"cuGetProcAddress_v2", kGetProcAddress2, false},
    {"cuCtxDestroy", kCtxDestroy, false},
    {"cuCtxDestroy_v2", kCtxDestroy, false},
    {"cuDevicePrimaryCtxReset", kPrimaryCtxReset, false},
    {"cuDevicePrimaryCtxReset_v2", kPrimaryCtxReset, false},
    {"cuDevicePrimaryCtxRelease", kPrimaryCtxRelease, false},
    {"cuDevicePrimaryCtxRelease_v2", kPrimaryCtxRelease, false},
    {"cuStreamDestroy", kStreamDestroy, false},
    {"cuStreamDestroy_v2", kStreamDestroy, false},
};
// The base names cuGetProcAddress is asked for (it picks the version and the stream form itself).
constexpr Name kProcs[] = {
    {"cuLaunchKernel", kLaunchKernel, false},
    {"cuLaunchKernelEx", kLaunchKernelEx, false},
    {"cuLaunchCooperativeKernel", kLaunchCooperativeKernel, false},
    {"cuGraphLaunch", kGraphLaunch, false},
    {"cuCtxDestroy", kCtxDestroy, false},
    {"cuDevicePrimaryCtxReset", kPrimaryCtxReset, false},
    {"cuDevicePrimaryCtxRelease", kPrimaryCtxRelease, false},
    {"cuStreamDestroy", kStreamDestroy, false},
};
constexpr unsigned kStreamEntries = kGraphLaunch + 1; // the entries that take a stream come first

bool is_known(Entry e, void* fn) {
  for (const Real& real : g_real[e])
    if (real.fn.load(std::memory_order_acquire) == fn) return true;
  return false;
}

void* interpose_proc(const char* symbol, void* fn, int version, cuuint64_t flags, GetProcAddress2 query2,
                     GetProcAddress1 query1) {
  if (symbol[0] != 'c' || symbol[1] != 'u') return fn;
  if (std::strcmp(symbol, "cuGetProcAddress") == 0) {
    if (is_known(kGetProcAddress1, fn)) return wrap(kGetProcAddress1, fn, false);
    if (is_known(kGetProcAddress2, fn)) return wrap(kGetProcAddress2, fn, false);
    return wrap(version >= 12000 ? kGetProcAddress2 : kGetProcAddress1, fn, false);
  }
  for (const Name& n : kProcs) {
    if (std::strcmp(symbol, n.name) != 0) continue;
    bool ptsz = false;
    if (n.entry < kStreamEntries) {
      if (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) {
        ptsz = true;
      } else if (!(flags & CU_GET_PROC_ADDRESS_LEGACY_STREAM)) {
        // The default form: per-thread when it is the function the per-thread search finds.
        void* per_thread = nullptr;
        const CUresult r =
            query2 ? query2(symbol, &per_thread, version, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, nullptr)
                   : query1(symbol, &per_thread, version, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
        ptsz = r == CUDA_SUCCESS && per_thread == fn;
      }
    }
    return wrap(n.entry, fn, ptsz);
  }
  return fn;
}

} // namespace

bool interposed() { return g_interposed.load(std::memory_order_acquire); }

} // namespace ptb::ls

extern "C" void* ptb_ls_load_next_dlsym() {
  void* f = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
  if (!f) f = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
  if (!f) std::abort(); // no libc dlsym to forward to: nothing can be looked up
  ptb_ls_next_dlsym.store(reinterpret_cast<DlsymFn>(f), std::memory_order_release);
  return f;
}

extern "C" void* ptb_ls_dlsym(void* handle, const char* name) {
  void* fn = ptb::ls::next_dlsym()(handle, name);
  if (!fn || !name || name[0] != 'c' || name[1] != 'u' || !ptb::ls::enabled()) return fn;
  for (const ptb::ls::Name& n : ptb::ls::kSymbols)
    if (std::strcmp(name, n.name) == 0) return ptb::ls::wrap(n.entry, fn, n.ptsz);
  return fn;
}

#if defined(__x86_64__) && defined(__linux__)
// dlsym(handle, name): RTLD_NEXT ((void*)-1) goes straight to libc's dlsym, every other handle to
// ptb_ls_dlsym. Both are jumps, so libc sees the caller's return address.
asm(R"(
  .text
  .globl dlsym
  .type dlsym, @function
  .p2align 4
dlsym:
  endbr64
  cmpq $-1, %rdi
  jne ptb_ls_dlsym
  movq ptb_ls_next_dlsym(%rip), %rax
  testq %rax, %rax
  jz 1f
  jmp *%rax
1:
  pushq %rdi
  pushq %rsi
  subq $8, %rsp
  call ptb_ls_load_next_dlsym
  addq $8, %rsp
  popq %rsi
  popq %rdi
  jmp *%rax
  .size dlsym, .-dlsym
)");
#endif

// runtime/ls/ptb_ls.cpp: libptb-ls.so, the library an LS program runs with (preloaded with LD_PRELOAD,
// injected with CUDA_INJECTION64_PATH, or linked for the C API of ptb_ls.h) so that ptb-qosd sees the LS
// work it has in flight (docs/reference/ptb-ls.md). The glue between the driver and ls_tracker.h, which
// holds the bookkeeping: per launch made outside a stream capture, the host counts it in its stream's slot
// and enqueues, behind it in the same stream, the device's write of its number. Launches reach it through
// the interposed entry points (interpose.cpp) or, when injected only, CUPTI's callbacks (here).
#include "ptb_ls.h"

#include "ls_glue.h"
#include "ls_tracker.h"

#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#define PTB_LS_EXPORT extern "C" __attribute__((visibility("default")))

namespace ptb::ls {

bool env_on(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

// One line on stderr, "ptb-ls: ..." (PTB_LS_QUIET=1 silences them).
void say(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void say(const char* fmt, ...) {
  static const bool quiet = env_on("PTB_LS_QUIET");
  if (quiet) return;
  char line[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(line, sizeof(line), fmt, args);
  va_end(args);
  std::fprintf(stderr, "ptb-ls: %s\n", line);
}

const char* cu_name(CUresult r) {
  const char* name = nullptr;
  return cuGetErrorName(r, &name) == CUDA_SUCCESS && name ? name : "unknown CUDA error";
}

// Our own driver calls, made inside a launch's callback or the C API, must not count as the program's.
thread_local bool t_inside = false;
struct Inside {
  Inside() : outer(t_inside) { t_inside = true; }
  ~Inside() { t_inside = outer; }
  bool outer;
};

// While another thread captures a stream in global mode, calls such as cuMemHostRegister are refused and
// would invalidate that capture: ours run in relaxed mode, and the thread's mode is put back after.
struct RelaxedCapture {
  RelaxedCapture() { ok = cuThreadExchangeStreamCaptureMode(&mode) == CUDA_SUCCESS; }
  ~RelaxedCapture() {
    if (ok) cuThreadExchangeStreamCaptureMode(&mode);
  }
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
  bool ok = false;
};

// kUnregistered: the segment is mapped and a client slot claimed, but the device cannot write it (not yet
// registered, or the context that registered it was destroyed: cudaDeviceReset, cuCtxDestroy).
enum State : int { kUnknown, kMissing, kUnregistered, kReady, kOff };

struct Device {
  std::atomic<int> state{kUnknown};
  std::atomic<int> why{PTB_LS_NO_CONTROLLER}; // what the C API says while not ready
  std::atomic<bool> stopped{false};           // a device write could not be enqueued: marking stopped
  std::mutex init;
  ptb::ls::RetryClock retry;
  shm::Mapping map;
  std::unique_ptr<ClientTracker> tracker; // set before state becomes kUnregistered
  std::string path;
  std::atomic<CUdeviceptr> base{0};      // the segment's address on the device (set before kReady)
  std::atomic<CUcontext> owner{nullptr}; // the context that registered it
  std::string key;
  bool said_missing = false, said_full = false;

  CUdeviceptr device_address(const shm::Word& word) const {
    return base.load(std::memory_order_relaxed) +
           static_cast<CUdeviceptr>(reinterpret_cast<const char*>(&word) - reinterpret_cast<const char*>(map.get()));
  }
};

constexpr int kMaxDevices = 64;
// Never destroyed: the segment stays mapped until the process ends, whatever runs last.
Device* devices() {
  static Device* all = new Device[kMaxDevices];
  return all;
}

// The device of the thread's current context.
Device* current_device(CUdevice& dev) {
  if (cuCtxGetDevice(&dev) != CUDA_SUCCESS || dev < 0 || dev >= kMaxDevices) return nullptr;
  return &devices()[dev];
}

// Maps the device's segment and claims an LS client slot in it (d.init held): kUnregistered when done.
void attach(Device& d, CUdevice dev) {
  if (d.key.empty()) {
    CUuuid uuid{};
    const CUresult r = cuDeviceGetUuid(&uuid, dev);
    if (r != CUDA_SUCCESS) {
      say("cannot read the UUID of device %d (%s): LS work is not marked", static_cast<int>(dev), cu_name(r));
      d.state.store(kOff, std::memory_order_release);
      return;
    }
    unsigned char bytes[16];
    std::memcpy(bytes, uuid.bytes, sizeof(bytes));
    d.key = shm::key_of_uuid(bytes);
  }
  const std::string dir = shm::segment_dir();
  const std::string path = shm::segment_path(dir, d.key);
  shm::Mapping map;
  const shm::Status status = shm::attach(path, map);
  if (status == shm::Status::missing) {
    if (!d.said_missing)
      say("no controller for %s (PTB_QOSD_DIR=%s): LS work is not marked", d.key.c_str(), dir.c_str());
    d.said_missing = true;
    d.why.store(PTB_LS_NO_CONTROLLER, std::memory_order_relaxed);
    d.state.store(kMissing, std::memory_order_release);
    return;
  }
  if (status != shm::Status::ok) {
    say("the segment %s is %s: it is not used, LS work is not marked", path.c_str(), shm::describe(status));
    d.why.store(PTB_LS_NO_CONTROLLER, std::memory_order_relaxed);
    d.state.store(kOff, std::memory_order_release);
    return;
  }
  const unsigned slot = shm::claim(map->ls, static_cast<std::uint64_t>(getpid()));
  if (slot == shm::kLsClients) {
    if (!d.said_full)
      say("every LS client slot of %s is taken (%u): LS work is not marked until one is free", path.c_str(),
          shm::kLsClients);
    d.said_full = true;
    d.why.store(PTB_LS_NO_SLOT, std::memory_order_relaxed);
    d.state.store(kMissing, std::memory_order_release);
    return;
  }
  d.map = std::move(map);
  d.path = path;
  d.tracker = std::make_unique<ClientTracker>(d.map->ls[slot]);
  d.state.store(kUnregistered, std::memory_order_release);
  if (env_on("PTB_LS_VERBOSE")) say("LS work is marked in %s (LS client %u)", path.c_str(), slot);
}

// Registers the mapped segment with CUDA in the current context, so that the device can write it
// (d.init held): kReady when done. A registration that the context's destruction left behind is kept.
void register_segment(Device& d) {
  CUcontext ctx = nullptr;
  CUdeviceptr base = 0;
  CUresult r = cuCtxGetCurrent(&ctx);
  if (r == CUDA_SUCCESS) {
    RelaxedCapture relaxed;
    r = cuMemHostRegister(d.map.get(), shm::kSegmentBytes, CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_PORTABLE);
    if (r == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED) r = CUDA_SUCCESS;
    if (r == CUDA_SUCCESS) r = cuMemHostGetDevicePointer(&base, d.map.get(), 0);
  }
  if (r != CUDA_SUCCESS) {
    say("cannot map %s for the device (%s; the segment's folder must be on tmpfs, like /dev/shm: CUDA cannot "
        "pin other file-backed pages): LS work is not marked",
        d.path.c_str(), cu_name(r));
    d.why.store(PTB_LS_NO_CONTROLLER, std::memory_order_relaxed);
    d.state.store(kOff, std::memory_order_release); // the slot stays claimed, idle
    return;
  }
  d.base.store(base, std::memory_order_relaxed);
  d.owner.store(ctx, std::memory_order_relaxed);
  d.state.store(kReady, std::memory_order_release);
}

// The device's tracker, or null while the device cannot write the segment (a missing segment is looked
// for at most once a second).
ClientTracker* tracker_of(Device& d, CUdevice dev) {
  int state = d.state.load(std::memory_order_acquire);
  if (state == kReady) return d.tracker.get();
  if (state == kOff || (state != kUnregistered && !d.retry.due(shm::now_ns()))) return nullptr;
  std::unique_lock<std::mutex> lock(d.init, std::try_to_lock);
  if (!lock.owns_lock()) return nullptr;
  state = d.state.load(std::memory_order_acquire);
  if (state == kUnknown || state == kMissing) attach(d, dev);
  if (d.state.load(std::memory_order_acquire) == kUnregistered) register_segment(d);
  return d.state.load(std::memory_order_acquire) == kReady ? d.tracker.get() : nullptr;
}

// A context is being destroyed: the device that registered the segment in it registers it again, in the
// next context that launches (its address there may differ).
void context_destroying(CUcontext ctx) {
  if (!ctx) return;
  for (int i = 0; i < kMaxDevices; ++i) {
    Device& d = devices()[i];
    if (d.owner.load(std::memory_order_relaxed) != ctx) continue;
    std::lock_guard<std::mutex> lock(d.init);
    if (d.state.load(std::memory_order_acquire) == kReady && d.owner.load(std::memory_order_relaxed) == ctx) {
      d.owner.store(nullptr, std::memory_order_relaxed);
      d.state.store(kUnregistered, std::memory_order_release);
    }
  }
}

// The primary context of `dev` is being reset or released: like context_destroying, for whichever context
// registered the segment on that device (a release that leaves the context alive costs one registration).
void device_resetting(CUdevice dev) {
  if (dev < 0 || dev >= kMaxDevices) return;
  Device& d = devices()[dev];
  std::lock_guard<std::mutex> lock(d.init);
  if (d.state.load(std::memory_order_acquire) == kReady) {
    d.owner.store(nullptr, std::memory_order_relaxed);
    d.state.store(kUnregistered, std::memory_order_release);
  }
}

// A stream is being destroyed: its slot serves another stream once the device has written its last number.
void stream_destroying(CUstream stream) {
  if (!stream || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD) return;
  for (int i = 0; i < kMaxDevices; ++i) {
    Device& d = devices()[i];
    const int state = d.state.load(std::memory_order_acquire);
    if (state == kUnregistered || state == kReady)
      d.tracker->retire(static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(stream)));
  }
}

std::uint64_t thread_id() { return static_cast<std::uint64_t>(syscall(SYS_gettid)); }

// The stream a launch named, as a handle our own (non-ptsz) calls can use, and its key.
struct Target {
  CUstream stream;
  std::uint64_t key;
  bool legacy;
};
Target resolve(CUstream stream, bool ptsz) {
  if (stream == nullptr) stream = ptsz ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY;
  if (stream == CU_STREAM_LEGACY) return {stream, ptb::ls::legacy_key(), true};
  if (stream == CU_STREAM_PER_THREAD) return {stream, ptb::ls::per_thread_key(thread_id()), false};
  return {stream, static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(stream)), false};
}

// Whether work enqueued in the stream now would run now (false while it is captured into a graph, or when
// that cannot be told). The legacy stream is never captured, and a launch into it succeeds only when no
// capture it would join is under way, so it is not asked (asking it during another stream's capture errs).
bool runs_now(const Target& t) {
  if (t.legacy) return true;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  return cuStreamIsCapturing(t.stream, &status) == CUDA_SUCCESS && status == CU_STREAM_CAPTURE_STATUS_NONE;
}

void CUDA_CB count_completion(void* word) { ClientTracker::count_completion(*static_cast<shm::Word*>(word)); }

PendingMark mark_enter(CUstream launched, bool ptsz) {
  PendingMark m;
  const Target t = resolve(launched, ptsz);
  CUdevice dev = 0;
  Device* d = current_device(dev);
  if (!d || d->stopped.load(std::memory_order_relaxed)) return m;
  if (!runs_now(t)) return m; // captured: the graph's launch counts when it runs
  ClientTracker* tracker = tracker_of(*d, dev);
  if (!tracker) return m;
  m.slot = tracker->slot_of(t.key);
  tracker->lock(m.slot).lock();
  m.n = tracker->submit(m.slot);
  m.device = d;
  m.tracker = tracker;
  m.stream = t.stream;
  return m;
}

void mark_exit(PendingMark& m, bool launched) {
  if (!m.tracker) return;
  ClientTracker* tracker = m.tracker;
  Device* d = m.device;
  m.tracker = nullptr;
  CUresult r = CUDA_SUCCESS;
  if (launched) {
    if (ClientTracker::shared(m.slot))
      r = cuLaunchHostFunc(m.stream, count_completion, &tracker->completed(m.slot));
    else
      r = cuStreamWriteValue64(m.stream, d->device_address(tracker->completed(m.slot)), m.n,
                               CU_STREAM_WRITE_VALUE_DEFAULT);
  }
  if (!launched || r != CUDA_SUCCESS) tracker->undo(m.slot, m.n);
  tracker->lock(m.slot).unlock();
  if (r != CUDA_SUCCESS && !d->stopped.exchange(true))
    say("cannot enqueue the completion mark of a launch on %s (%s): LS work is no longer marked on it", d->key.c_str(),
        cu_name(r));
}

} // namespace ptb::ls

using namespace ptb::ls; // NOLINT(google-build-using-namespace): this file is the namespace's glue

namespace {

// A launch that returned CUDA_SUCCESS (CUPTI reports it at the API's exit).
void mark_launch(CUstream launched, bool ptsz) {
  PendingMark m = mark_enter(launched, ptsz);
  mark_exit(m, true);
}

// The stream of a launch API's parameters; false for a callback that is not a launch we mark.
bool launch_stream(CUpti_CallbackId cbid, const void* params, CUstream& stream, bool& ptsz) {
  ptsz = false;
  switch (cbid) {
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    stream = static_cast<const cuLaunchKernel_params*>(params)->hStream;
    return true;
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
    stream = static_cast<const cuLaunchKernel_ptsz_params*>(params)->hStream;
    ptsz = true;
    return true;
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx: {
    const CUlaunchConfig* config = static_cast<const cuLaunchKernelEx_params*>(params)->config;
    if (!config) return false;
    stream = config->hStream;
    return true;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
    const CUlaunchConfig* config = static_cast<const cuLaunchKernelEx_ptsz_params*>(params)->config;
    if (!config) return false;
    stream = config->hStream;
    ptsz = true;
    return true;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    stream = static_cast<const cuLaunchCooperativeKernel_params*>(params)->hStream;
    return true;
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
    stream = static_cast<const cuLaunchCooperativeKernel_ptsz_params*>(params)->hStream;
    ptsz = true;
    return true;
  case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch:
    stream = static_cast<const cuGraphLaunch_params*>(params)->hStream;
    return true;
  case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz:
    stream = static_cast<const cuGraphLaunch_ptsz_params*>(params)->hStream;
    ptsz = true;
    return true;
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync:
    stream = static_cast<const cuLaunchGridAsync_params*>(params)->hStream;
    return true;
  case CUPTI_DRIVER_TRACE_CBID_cuLaunch:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid: // the legacy stream
    stream = nullptr;
    return true;
  default: return false;
  }
}

// The runtime's launch calls. A runtime launch makes a driver launch call, whose callback marks it; the
// runtime's own callback marks it only when the driver reported none during the call (a runtime that
// reaches the driver by another way), so that it is marked exactly once either way.
bool runtime_launch_stream(CUpti_CallbackId cbid, const void* params, CUstream& stream, bool& ptsz) {
  ptsz = false;
  switch (cbid) {
  case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
    stream = static_cast<const cudaLaunchKernel_v7000_params*>(params)->stream;
    return true;
  case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
    stream = static_cast<const cudaLaunchKernel_ptsz_v7000_params*>(params)->stream;
    ptsz = true;
    return true;
  case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060: {
    const cudaLaunchConfig_t* config = static_cast<const cudaLaunchKernelExC_v11060_params*>(params)->config;
    if (!config) return false;
    stream = config->stream;
    return true;
  }
  case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060: {
    const cudaLaunchConfig_t* config = static_cast<const cudaLaunchKernelExC_ptsz_v11060_params*>(params)->config;
    if (!config) return false;
    stream = config->stream;
    ptsz = true;
    return true;
  }
  case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
    stream = static_cast<const cudaLaunchCooperativeKernel_v9000_params*>(params)->stream;
    return true;
  case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000:
    stream = static_cast<const cudaLaunchCooperativeKernel_ptsz_v9000_params*>(params)->stream;
    ptsz = true;
    return true;
  case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000:
    stream = static_cast<const cudaGraphLaunch_v10000_params*>(params)->stream;
    return true;
  case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000:
    stream = static_cast<const cudaGraphLaunch_ptsz_v10000_params*>(params)->stream;
    ptsz = true;
    return true;
  default: return false;
  }
}
constexpr CUpti_CallbackId kRuntimeLaunchCallbacks[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000,
};
thread_local int t_runtime_depth = 0;   // runtime launch calls the thread is in
thread_local bool t_driver_saw = false; // a driver launch callback came during the outermost one

void runtime_callback(CUpti_CallbackId cbid, const CUpti_CallbackData* cb) {
  CUstream stream = nullptr;
  bool ptsz = false;
  if (!cb->functionParams || !runtime_launch_stream(cbid, cb->functionParams, stream, ptsz)) return;
  if (cb->callbackSite == CUPTI_API_ENTER) {
    if (t_runtime_depth++ == 0) t_driver_saw = false;
    return;
  }
  if (cb->callbackSite != CUPTI_API_EXIT || t_runtime_depth == 0 || --t_runtime_depth > 0) return;
  if (t_driver_saw || !cb->functionReturnValue ||
      *static_cast<const cudaError_t*>(cb->functionReturnValue) != cudaSuccess)
    return;
  static std::atomic<bool> said{false};
  if (env_on("PTB_LS_VERBOSE") && !said.exchange(true))
    say("a runtime launch (%s) reached no driver launch callback: marked at the runtime's", cb->functionName);
  Inside inside;
  mark_launch(stream, ptsz);
}

constexpr CUpti_CallbackId kLaunchCallbacks[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
};
// The deprecated launch calls: marked when CUPTI still reports them.
constexpr CUpti_CallbackId kOldLaunchCallbacks[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync,
    CUPTI_DRIVER_TRACE_CBID_cuLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid,
};

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (!data) return;
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    const auto* res = static_cast<const CUpti_ResourceData*>(data);
    if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) context_destroying(res->context);
    if (cbid == CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING) stream_destroying(res->resourceHandle.stream);
    return;
  }
  if (t_inside) return;
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) return runtime_callback(cbid, cb);
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API || !cb->functionParams) return;
  CUstream stream = nullptr;
  bool ptsz = false;
  if (!launch_stream(cbid, cb->functionParams, stream, ptsz)) return;
  t_driver_saw = true;
  if (cb->callbackSite != CUPTI_API_EXIT || !cb->functionReturnValue) return;
  if (*static_cast<const CUresult*>(cb->functionReturnValue) != CUDA_SUCCESS) return;
  Inside inside;
  mark_launch(stream, ptsz);
}

// CUPTI, loaded only when the library is injected: preloaded or linked, the program needs no CUPTI at all
// (a PyTorch container from pip has none where the dynamic linker looks).
struct CuptiApi {
  decltype(&cuptiSubscribe) subscribe = nullptr;
  decltype(&cuptiEnableCallback) enable = nullptr;
  decltype(&cuptiUnsubscribe) unsubscribe = nullptr;
  decltype(&cuptiGetResultString) result_string = nullptr;
};
CuptiApi g_cupti;

template <typename Fn> bool find(void* handle, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(handle, name));
  return fn != nullptr;
}
bool find_all(void* handle, CuptiApi& api) {
  return find(handle, "cuptiSubscribe", api.subscribe) && find(handle, "cuptiEnableCallback", api.enable) &&
         find(handle, "cuptiUnsubscribe", api.unsubscribe) && find(handle, "cuptiGetResultString", api.result_string);
}
// A CUPTI the program already has, else PTB_LS_CUPTI, the toolkit's this library was built with, or the
// dynamic linker's libcupti.so. Empty: found; else what was tried.
std::string load_cupti(CuptiApi& api) {
  if (find_all(RTLD_DEFAULT, api)) return "";
  std::string tried;
  const char* env = std::getenv("PTB_LS_CUPTI");
#ifdef PTB_LS_CUPTI_LIBRARY
  const char* built = PTB_LS_CUPTI_LIBRARY;
#else
  const char* built = nullptr;
#endif
  for (const char* path : {env, built, "libcupti.so"}) {
    if (!path || !*path) continue;
    tried += (tried.empty() ? "" : ", ") + std::string(path);
    void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle && find_all(handle, api)) return "";
  }
  return tried;
}

const char* cupti_name(CUptiResult r) {
  const char* name = nullptr;
  return g_cupti.result_string(r, &name) == CUPTI_SUCCESS && name ? name : "unknown CUPTI error";
}

} // namespace

// The driver calls it once, from cuInit, when CUDA_INJECTION64_PATH names this library. A failure leaves
// the program running unmarked; 1 is returned either way (CUPTI's injection samples return 1).
PTB_LS_EXPORT int InitializeInjection(void) {
  static std::atomic<bool> done{false};
  if (done.exchange(true)) return 1;
  if (interposed()) { // preloaded as well: the entry points already mark, CUPTI would mark twice
    if (env_on("PTB_LS_VERBOSE")) say("preloaded and injected: launches are marked by the interposed entry points");
    return 1;
  }
  const std::string tried = load_cupti(g_cupti);
  if (!tried.empty()) {
    say("cannot load CUPTI (tried %s; PTB_LS_CUPTI names it): LS work is not marked; preload the library instead "
        "(LD_PRELOAD), which needs no CUPTI",
        tried.c_str());
    return 1;
  }
  CUpti_SubscriberHandle subscriber = nullptr;
  const CUptiResult r = g_cupti.subscribe(&subscriber, on_callback, nullptr);
  if (r != CUPTI_SUCCESS) {
    say("cannot subscribe to CUPTI (%s; another CUPTI client such as a profiler holds it?): LS work is not marked",
        cupti_name(r));
    return 1;
  }
  for (const CUpti_CallbackId cbid : kLaunchCallbacks) {
    const CUptiResult e = g_cupti.enable(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
    if (e != CUPTI_SUCCESS) {
      say("cannot enable the CUPTI callback %u (%s): LS work is not marked", static_cast<unsigned>(cbid),
          cupti_name(e));
      g_cupti.unsubscribe(subscriber);
      return 1;
    }
  }
  for (const CUpti_CallbackId cbid : kOldLaunchCallbacks)
    (void)g_cupti.enable(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
  for (const CUpti_CallbackId cbid : kRuntimeLaunchCallbacks)
    (void)g_cupti.enable(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, cbid);
  // Without the context callback a write could go through the registration of a destroyed context (after
  // cudaDeviceReset): nothing is marked then. The stream callback only lets slots be reused.
  const CUptiResult e =
      g_cupti.enable(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
  if (e != CUPTI_SUCCESS) {
    say("cannot enable the CUPTI context callback (%s): LS work is not marked", cupti_name(e));
    g_cupti.unsubscribe(subscriber);
    return 1;
  }
  (void)g_cupti.enable(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING);
  return 1;
}

PTB_LS_EXPORT int ptb_ls_begin(void) {
  Inside inside;
  CUdevice dev = 0;
  Device* d = current_device(dev);
  if (!d) return PTB_LS_NO_CONTEXT;
  ClientTracker* tracker = tracker_of(*d, dev);
  if (!tracker) return d->why.load(std::memory_order_relaxed);
  tracker->begin_request(shm::now_ns());
  return PTB_LS_OK;
}

PTB_LS_EXPORT int ptb_ls_end(void* ptb_ls_stream) {
  Inside inside;
  CUdevice dev = 0;
  Device* d = current_device(dev);
  if (!d) return PTB_LS_NO_CONTEXT;
  ClientTracker* tracker = tracker_of(*d, dev);
  if (!tracker) return d->why.load(std::memory_order_relaxed);
  const Target t = resolve(static_cast<CUstream>(ptb_ls_stream), false);
  if (!runs_now(t)) return PTB_LS_CAPTURING;
  std::lock_guard<std::mutex> lock(tracker->end_lock());
  const std::uint64_t k = tracker->next_end();
  if (k == 0) return PTB_LS_NOT_OPEN;
  const CUresult r =
      cuStreamWriteValue64(t.stream, d->device_address(tracker->requests_done()), k, CU_STREAM_WRITE_VALUE_DEFAULT);
  if (r != CUDA_SUCCESS) {
    tracker->end_failed(k);
    return PTB_LS_CUDA_ERROR;
  }
  return PTB_LS_OK;
}

// ptb/detail/early_setup.cuh: a device's runtime state set up before the program's first twin launch, on a thread
// of the runtime, while the program makes its buffers and copies its inputs (opt-in: PTB_EARLY_SETUP=1).
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
//
// Why: a process's first twin launch pays the device's set-up. On the H200 (2026-11-29, after fe38513) that is
// 0.7-1.2 ms, mostly the twins' module, the pool of control blocks and the policy's caps
// (docs/results/yieldable-speed.md). A process whose environment says its launches will run as twins
// (PTB_QOSD, PTB_MODE=ptb, a restricting PTB_SMS or PTB_BLOCKS_PER_SM) can pay it beside the program's own work.
//
// How, and what it never does (docs/design/early-setup.md):
// - The thread starts when the program is loaded. It calls nothing of CUDA until the program has loaded CUDA's
//   driver library itself (its first CUDA call does): it looks every 200 us with dlopen(RTLD_NOLOAD), which
//   loads nothing. A program that forks before it uses CUDA keeps children that can use CUDA. A fork waits
//   until the thread is out of that call (pthread_atfork), so that a child never inherits the loader's lock
//   held by a thread it does not have.
// - Then, through that library's own entry points, it asks whether a device's primary context is active (it
//   makes none) every 200 us. On the first device whose context is active it sets the device up as a launch
//   would (device_locked, under the runtime's lock) and ends. Other devices are set up by their first launch.
// - It gives up 30 s after the program was loaded; the first launch then sets up, as without it.
// - A set-up that fails is undone, so that the launch path tries again.
// - Just before its first CUDA call it registers an exit handler that stops it and waits for it. Registered
//   after CUDA's own (the program's CUDA calls came first), it runs before CUDA's teardown.
#pragma once
#if !defined(_WIN32)
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "../launch_mode.cuh"
#include "../smset.cuh"
#include "context.cuh"
#include "device_setup.cuh"
#include "policy_state.cuh"
#include "runtime.cuh"

namespace ptb {

namespace detail {

// Whether this process sets its device up early: PTB_EARLY_SETUP=1, and launches that will run as twins.
inline bool early_setup_wanted() {
  const char* env = std::getenv("PTB_EARLY_SETUP");
  if (!env || std::strcmp(env, "1") != 0) return false;
  const int __m = mode_word().load(std::memory_order_relaxed);
  if (__m == kModeOriginal) return false;
  if (__m == kModePtb || !qosd_setting().empty()) return true;
  SmSet sms;
  unsigned per_sm = 0;
  process_policy_from_env(sms, per_sm);
  return restricts(sms, per_sm);
}

class EarlySetup {
public:
  EarlySetup() : thread_([this] { run(); }) {
    pthread_atfork([] { loader().lock(); }, [] { loader().unlock(); }, [] { loader().unlock(); });
  }
  EarlySetup(const EarlySetup&) = delete;
  EarlySetup& operator=(const EarlySetup&) = delete;
  ~EarlySetup() { stop(); }
  static EarlySetup& early_setup();
  void stop() {
    stop_.store(true);
    std::lock_guard<std::mutex> __g(join_);
    if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
  }

private:
  // The driver's calls it needs, spelt here (CUdevice an int, CUresult an int: 0 is success) so that the runtime
  // does not include <cuda.h>.
  using GetCount = int (*)(int*);
  using Get = int (*)(int*, int);
  using GetState = int (*)(int, unsigned*, int*);

  // Held around the thread's dlopen and by a fork (never destroyed: a fork may come after static destruction).
  static std::mutex& loader() {
    static std::mutex* __l = new std::mutex();
    return *__l;
  }
  static void* cuda_library_if_loaded() {
    std::lock_guard<std::mutex> __g(loader());
    return dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_LAZY);
  }

  bool waiting(std::chrono::steady_clock::time_point deadline) const {
    if (stop_.load() || std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    return !stop_.load();
  }

  // The ordinal of the first device whose primary context is active; -1 when none came before the deadline.
  int wait_for_context(std::chrono::steady_clock::time_point deadline) const {
    void* lib = nullptr;
    while (!(lib = cuda_library_if_loaded()))
      if (!waiting(deadline)) return -1;
    GetCount count = nullptr;
    Get get = nullptr;
    GetState state = nullptr;
    {
      std::lock_guard<std::mutex> __g(loader());
      count = reinterpret_cast<GetCount>(dlsym(lib, "cuDeviceGetCount"));
      get = reinterpret_cast<Get>(dlsym(lib, "cuDeviceGet"));
      state = reinterpret_cast<GetState>(dlsym(lib, "cuDevicePrimaryCtxGetState"));
    }
    int found = -1;
    while (count && get && state && found < 0) {
      int __n = 0;
      if (count(&__n) == 0) // fails until the program's cuInit is done
        for (int __i = 0; __i < __n && __i < static_cast<int>(kMaxDevices) && found < 0; ++__i) {
          int handle = 0, active = 0;
          unsigned flags = 0;
          if (get(&handle, __i) == 0 && state(handle, &flags, &active) == 0 && active) found = __i;
        }
      if (found < 0 && !waiting(deadline)) break;
    }
    {
      std::lock_guard<std::mutex> __g(loader());
      dlclose(lib); // the reference dlopen took; the program's own keeps the library loaded
    }
    return found;
  }

  void run() {
    const int dev = wait_for_context(std::chrono::steady_clock::now() + std::chrono::seconds(30));
    if (dev < 0) return;
    std::atexit([] { early_setup().stop(); });
    if (stop_.load() || cudaSetDevice(dev) != cudaSuccess) return;
    const unsigned long long context = current_context_id();
    Runtime& __r = rt();
    std::lock_guard<std::mutex> __g(__r.__m);
    if (__r.devs[dev]) return;                                   // a launch set it up first
    if (!device_locked(dev, context)) retire_device_locked(dev); // the launch path tries again
  }

  std::atomic<bool> stop_{false};
  std::mutex join_;
  std::thread thread_;
};

inline EarlySetup& EarlySetup::early_setup() {
  static EarlySetup __e;
  return __e;
}

// Started when the program is loaded (the thread waits for the program's own CUDA calls: above).
inline const bool early_setup_started = early_setup_wanted() && (EarlySetup::early_setup(), true);

} // namespace detail

} // namespace ptb
#endif // !_WIN32

// runtime/ls/ls_glue.h: what the two ways into libptb-ls share (inside the library only). CUPTI's callbacks
// (ptb_ls.cpp) and the interposed driver entry points (interpose.cpp) both mark a launch with these calls
// and report the same context and stream events.
#pragma once

#include <cuda.h>

#include <cstdint>

namespace ptb::ls {

class ClientTracker;
struct Device;

// A launch counted in its stream's slot before it is made (the slot's lock is held until mark_exit).
// tracker is null when the launch is not marked: no segment, a captured stream, marking stopped.
struct PendingMark {
  Device* device = nullptr;
  ClientTracker* tracker = nullptr;
  unsigned slot = 0;
  std::uint64_t n = 0;
  CUstream stream = nullptr;
};
// Counts the launch about to be made in `launched` (ptsz: the caller's null stream is the per-thread one).
PendingMark mark_enter(CUstream launched, bool ptsz);
// The launch was made (`launched`: it returned CUDA_SUCCESS): enqueues the device's write of its number
// behind it, or takes the count back.
void mark_exit(PendingMark& mark, bool launched);

void context_destroying(CUcontext ctx);
void device_resetting(CUdevice dev);
void stream_destroying(CUstream stream);

bool env_on(const char* name);
void say(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// interpose.cpp: whether the program's driver entry points reach this library (it was preloaded and the
// program looked one up), so that CUPTI is not needed.
bool interposed();

} // namespace ptb::ls

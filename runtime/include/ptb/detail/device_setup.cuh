// ptb/detail/device_setup.cuh: a device's runtime state, set up on first use.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include <cstring>

#include "caps.cuh"
#include "config.cuh"
#include "context.cuh"
#include "device_state.cuh"
#include "discovery.cuh"
#include "host_stamps.cuh"
#include "launch_order.cuh"
#include "policy_state.cuh"
#include "pool.cuh"
#include "runtime.cuh"

namespace ptb {

namespace detail {

// A device's state belongs to the context it was set up in. cudaDeviceReset destroys that context and,
// with it, the state's device memory, streams and events and every policy's caps on the device. A launch
// that finds another context current (`context`: its id, context.cuh; 0: not known, not checked)
// retires the state: it leaves the runtime's table (the monitor no longer reads it) and is never freed
// (its host words stay readable: pool.cuh); the policies forget their caps and launch order on the
// device; the device is set up anew in the new context.
inline void retire_device_locked(int dev) {
  Runtime& __r = rt();
  DeviceState* d = __r.devs[dev];
  if (!d) return;
  d->ok = false;
  __r.devs[dev] = nullptr;
  for (PolicyState* p : __r.policies) {
    p->caps[dev] = nullptr;
    std::memset(p->last[dev], 0, sizeof p->last[dev]);
    p->order[dev] = LaunchOrder{};
  }
}

inline DeviceState* device_locked(int dev, unsigned long long context = 0) {
  Runtime& __r = rt();
  if (dev < 0 || dev >= static_cast<int>(kMaxDevices)) return nullptr;
  if (DeviceState* old = __r.devs[dev]) {
    if (!(context != 0 && old->context != 0 && context != old->context)) return old->ok ? old : nullptr;
    retire_device_locked(dev);
  }
  DeviceState* d = new DeviceState();
  __r.devs[dev] = d;
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
  host_stamp("attributes");
  ok = ok && cudaStreamCreateWithFlags(&d->ctl, cudaStreamNonBlocking) == cudaSuccess;
  host_stamp("stream");
  // Load the runtime's own kernel now, not in the middle of a running PTB kernel (lazy loading waits).
  cudaFuncAttributes fa;
  ok = ok && discovery_kernel().load() && cudaFuncGetAttributes(&fa, discovery_kernel().load()) == cudaSuccess;
  host_stamp("module");
  ok = ok && grow_pool_locked(*d); // (its first page also holds d->staging: pool.cuh)
  host_stamp("pool");
  PolicyState* pp = process_policy_state_locked();
  ok = ok && upload_caps_locked(*d, *pp);
  host_stamp("caps");
  d->context = current_context_id();
  d->ok = ok;
  return ok ? d : nullptr;
}

} // namespace detail

} // namespace ptb

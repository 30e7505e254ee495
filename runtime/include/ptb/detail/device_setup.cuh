// ptb/detail/device_setup.cuh: a device's runtime state, set up on first use.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include "caps.cuh"
#include "config.cuh"
#include "device_state.cuh"
#include "discovery.cuh"
#include "policy_state.cuh"
#include "pool.cuh"
#include "runtime.cuh"

namespace ptb {

namespace detail {

inline DeviceState* device_locked(int dev) {
  Runtime& r = rt();
  if (dev < 0 || dev >= static_cast<int>(kMaxDevices)) return nullptr;
  if (r.devs[dev]) return r.devs[dev]->ok ? r.devs[dev] : nullptr;
  DeviceState* d = new DeviceState();
  r.devs[dev] = d;
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
  ok = ok && cudaStreamCreateWithFlags(&d->ctl, cudaStreamNonBlocking) == cudaSuccess;
  ok = ok && cudaHostAlloc(&d->staging, kCapsBytes, cudaHostAllocDefault) == cudaSuccess;
  // Load the runtime's own kernel now, not in the middle of a running PTB kernel (lazy loading waits).
  cudaFuncAttributes fa;
  ok = ok && discovery_kernel().load() && cudaFuncGetAttributes(&fa, discovery_kernel().load()) == cudaSuccess;
  ok = ok && grow_pool_locked(*d);
  PolicyState* pp = process_policy_state_locked();
  ok = ok && upload_caps_locked(*d, *pp);
  d->ok = ok;
  return ok ? d : nullptr;
}


}  // namespace detail

}  // namespace ptb

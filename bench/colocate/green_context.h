// bench/colocate/green_context.h: a green context of part of device 0's SMs, through the driver API alone (no
// runtime, no ptb): what bench/colocate's --green-sms and --green-gate (green_gate.h) and bench/programs'
// green_preload.cpp make and enter. Header only.
#pragma once
#include <cuda.h>

#include <cstdio>

namespace colo {

// A green context of at least `want` SMs of device 0 (not made current); false after a message, prefixed with
// `who`, when the driver refuses. `got`: its SM count; `total`: the device's.
inline bool make_green_context(const char* who, unsigned want, CUcontext* ctx, unsigned* got, unsigned* total) {
  auto ok = [who](CUresult r, const char* what) {
    if (r == CUDA_SUCCESS) return true;
    const char* s = nullptr;
    cuGetErrorString(r, &s);
    std::fprintf(stderr, "%s: green context: %s failed: %s\n", who, what, s ? s : "?");
    return false;
  };
  CUdevice dev;
  CUdevResource all{}, part{}, rest{};
  unsigned groups = 1;
  CUdevResourceDesc desc;
  CUgreenCtx green;
  if (!ok(cuInit(0), "cuInit") || !ok(cuDeviceGet(&dev, 0), "cuDeviceGet") ||
      !ok(cuDeviceGetDevResource(dev, &all, CU_DEV_RESOURCE_TYPE_SM), "cuDeviceGetDevResource") ||
      !ok(cuDevSmResourceSplitByCount(&part, &groups, &all, &rest, 0, want), "cuDevSmResourceSplitByCount"))
    return false;
  if (groups != 1) {
    std::fprintf(stderr, "%s: green context: no group of %u SMs in the device's %u\n", who, want, all.sm.smCount);
    return false;
  }
  if (!ok(cuDevResourceGenerateDesc(&desc, &part, 1), "cuDevResourceGenerateDesc") ||
      !ok(cuGreenCtxCreate(&green, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM), "cuGreenCtxCreate") ||
      !ok(cuCtxFromGreenCtx(ctx, green), "cuCtxFromGreenCtx"))
    return false;
  *got = part.sm.smCount;
  *total = all.sm.smCount;
  return true;
}

// make_green_context, then the context made current to the calling thread (before any runtime call, the CUDA
// runtime's calls and launches on this thread then run in it); false after a message, prefixed with `who`.
inline bool enter_green_context(const char* who, unsigned want, unsigned* got, unsigned* total) {
  CUcontext ctx;
  if (!make_green_context(who, want, &ctx, got, total)) return false;
  if (cuCtxSetCurrent(ctx) != CUDA_SUCCESS) {
    std::fprintf(stderr, "%s: green context: cuCtxSetCurrent failed\n", who);
    return false;
  }
  return true;
}

}  // namespace colo

// test/unit/LsFakeDriver.h: the fake driver and CUPTI that libptb-ls's glue runs against in the unit tests
// (LsGlueTest.cpp, LsInterposeTest.cpp): registered memory, stream captures, and each stream's enqueued
// memory writes and host functions, which run_stream() carries out as the device would. Included by one
// file per test program (it defines the driver's functions).
#pragma once

#include "ls_tracker.h"

#include <cuda.h>
#include <cupti.h>

#include <deque>
#include <map>
#include <vector>

namespace {

namespace shm = ptb::qos::shm;

// The fake device's address of host memory registered with it: far from the host's, so that a write to a
// host address (a missing translation) would be caught.
constexpr std::uint64_t kDeviceOffset = 0x100000000000ull;

struct Op {
  bool host_fn;
  std::uint64_t addr, value;
  CUhostFn fn;
  void *data;
};
struct Fake {
  CUpti_CallbackFunc callback = nullptr;
  bool subscribe_fails = false;
  std::vector<std::pair<CUpti_CallbackDomain, CUpti_CallbackId>> enabled;
  bool have_context = true;
  void *registered = nullptr;
  unsigned register_flags = 0;
  int registrations = 0;
  CUresult write_result = CUDA_SUCCESS;
  std::map<CUstream, bool> capturing;
  std::map<CUstream, std::deque<Op>> queued;
  int capture_mode_exchanges = 0;
} fake;

// Runs what the stream has queued, in order (the device reaching it).
void run_stream(CUstream s) {
  for (const Op &op : fake.queued[s]) {
    if (op.host_fn) {
      op.fn(op.data);
    } else {
      auto *word = reinterpret_cast<shm::Word *>(op.addr - kDeviceOffset);
      word->store(op.value);
    }
  }
  fake.queued[s].clear();
}

} // namespace

// ---- The fake driver and CUPTI (the names cuda.h's macros give them) ----
extern "C" {
CUresult CUDAAPI cuCtxGetDevice(CUdevice *dev) {
  if (!fake.have_context) return CUDA_ERROR_INVALID_CONTEXT;
  *dev = 0;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxGetCurrent(CUcontext *ctx) {
  *ctx = reinterpret_cast<CUcontext>(0x5000);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetUuid(CUuuid *uuid, CUdevice) {
  for (int i = 0; i < 16; ++i) uuid->bytes[i] = static_cast<char>(0x10 + i);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGetErrorName(CUresult, const char **name) {
  *name = "CUDA_ERROR_FAKE";
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode) {
  ++fake.capture_mode_exchanges;
  *mode = CU_STREAM_CAPTURE_MODE_GLOBAL; // what the thread had, handed back the second time
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemHostRegister(void *p, size_t bytes, unsigned flags) {
  if (bytes != shm::kSegmentBytes || reinterpret_cast<std::uintptr_t>(p) % shm::kPage != 0)
    return CUDA_ERROR_INVALID_VALUE;
  fake.registered = p;
  fake.register_flags = flags;
  ++fake.registrations;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemHostGetDevicePointer(CUdeviceptr *d, void *p, unsigned flags) {
  if (p != fake.registered || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  *d = reinterpret_cast<std::uintptr_t>(p) + kDeviceOffset;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemHostUnregister(void *) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *status) {
  if (s == CU_STREAM_LEGACY) return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT; // never to be asked
  *status = fake.capturing[s] ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuStreamWriteValue64(CUstream s, CUdeviceptr addr, cuuint64_t value, unsigned flags) {
  if (fake.write_result != CUDA_SUCCESS) return fake.write_result;
  if (flags != CU_STREAM_WRITE_VALUE_DEFAULT || addr % 8 != 0) return CUDA_ERROR_INVALID_VALUE;
  fake.queued[s].push_back({false, addr, value, nullptr, nullptr});
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuLaunchHostFunc(CUstream s, CUhostFn fn, void *data) {
  if (fake.write_result != CUDA_SUCCESS) return fake.write_result;
  fake.queued[s].push_back({true, 0, 0, fn, data});
  return CUDA_SUCCESS;
}
CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc fn, void *) {
  if (fake.subscribe_fails) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  fake.callback = fn;
  *sub = reinterpret_cast<CUpti_SubscriberHandle>(0x1);
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t on, CUpti_SubscriberHandle, CUpti_CallbackDomain domain,
                                         CUpti_CallbackId cbid) {
  if (on) fake.enabled.push_back({domain, cbid});
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle) {
  fake.callback = nullptr;
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult, const char **s) {
  *s = "CUPTI_ERROR_FAKE";
  return CUPTI_SUCCESS;
}
int InitializeInjection(void);
}

// ptb/trace.cuh: optional per-task trace (SM, start/end from %globaltimer), exported as Chrome/Perfetto
// trace JSON. Host only. The PNG picture of a trace is opt-in: include <ptb/trace_png.cuh>.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "detail/config.cuh"
#include "detail/device_setup.cuh"
#include "detail/device_state.cuh"
#include "detail/runtime.cuh"
#include "detail/trace_record.cuh"
#include "fallback.cuh"

namespace ptb {

struct TraceEvent {
  unsigned long long task;     // linear id of the original block
  unsigned long long start_ns; // %globaltimer when the worker started it
  unsigned long long end_ns;   // when the worker's thread 0 finished it
  unsigned sm;                 // %smid
  unsigned worker;             // the worker's blockIdx.x
  unsigned launch;             // trace tag of the launch (1, 2, ... in launch order while tracing)
};

// Launches made from now on (current device) record one event per task, up to max_events in all.
inline cudaError_t trace_start(size_t max_events = 1u << 20) {
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  std::lock_guard<std::mutex> __g(detail::rt().__m);
  detail::DeviceState* d = detail::device_locked(dev);
  if (!d) return cudaErrorInitializationError;
  if (!d->trace.recs && d->saved_trace.recs && d->saved_trace.cap >= max_events) d->trace = d->saved_trace;
  if (!d->trace.recs || d->trace.cap < max_events) {
    detail::TraceRec* __r = nullptr;
    unsigned long long* c = nullptr;
    if ((e = cudaMalloc(&__r, max_events * sizeof(detail::TraceRec))) != cudaSuccess) return e;
    if ((e = cudaMalloc(&c, sizeof(unsigned long long))) != cudaSuccess) return e;
    d->trace.recs = __r; // an older, smaller buffer is left allocated: running launches may write to it
    d->trace.count = c;
    d->trace.cap = max_events;
  }
  if ((e = cudaMemsetAsync(d->trace.count, 0, sizeof(unsigned long long), d->ctl)) != cudaSuccess) return e;
  return cudaStreamSynchronize(d->ctl);
}
// Launches made from now on record nothing (the buffer stays for trace_collect).
inline void trace_stop() {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return;
  std::lock_guard<std::mutex> __g(detail::rt().__m);
  detail::DeviceState* d = detail::device_locked(dev);
  if (d) d->saved_trace = d->trace, d->trace = detail::TraceBuf{nullptr, nullptr, 0, 0};
}
// Returns the events recorded so far (current device) and clears them. Synchronize with the traced
// launches first (their streams or events): this does not wait for the device, so that it can be called
// while unrelated kernels run.
inline std::vector<TraceEvent> trace_collect() {
  std::vector<TraceEvent> out;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return out;
  std::lock_guard<std::mutex> __g(detail::rt().__m);
  detail::DeviceState* d = detail::device_locked(dev);
  if (!d) return out;
  const detail::TraceBuf tb = d->trace.recs ? d->trace : d->saved_trace;
  if (!tb.recs) return out;
  unsigned long long n = 0;
  if (cudaMemcpyAsync(&n, tb.count, sizeof n, cudaMemcpyDeviceToHost, d->ctl) != cudaSuccess ||
      cudaStreamSynchronize(d->ctl) != cudaSuccess)
    return out;
  n = std::min<unsigned long long>(n, tb.cap);
  std::vector<detail::TraceRec> __r(n);
  if (n && (cudaMemcpyAsync(__r.data(), tb.recs, n * sizeof(detail::TraceRec), cudaMemcpyDeviceToHost, d->ctl) !=
                cudaSuccess ||
            cudaStreamSynchronize(d->ctl) != cudaSuccess))
    return out;
  if (cudaMemsetAsync(tb.count, 0, sizeof(unsigned long long), d->ctl) != cudaSuccess ||
      cudaStreamSynchronize(d->ctl) != cudaSuccess)
    return out;
  out.reserve(n);
  for (const auto& x : __r) out.push_back(TraceEvent{x.task, x.start, x.end, x.sm, x.worker, x.tag});
  std::sort(out.begin(), out.end(), [](const TraceEvent& a, const TraceEvent& b) { return a.start_ns < b.start_ns; });
  return out;
}

// Chrome / Perfetto trace JSON: one track per SM, one slice per task (times in us from the first start);
// under "otherData", the process's fallbacks so far by reason (ptb/fallback.cuh: launches under a policy
// that ran their original kernel, which no trace slice shows).
inline bool trace_write_json(const std::string& path, const std::vector<TraceEvent>& ev) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  unsigned long long t0 = ~0ull;
  for (const auto& e : ev) t0 = std::min(t0, e.start_ns);
  std::fprintf(f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
  bool first = true;
  std::vector<bool> named(detail::kMaxSm, false);
  for (const auto& e : ev) {
    if (!named[e.sm % detail::kMaxSm]) {
      named[e.sm % detail::kMaxSm] = true;
      std::fprintf(f, "%s{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":0,\"tid\":%u,\"args\":{\"name\":\"SM %u\"}}",
                   first ? "" : ",\n", e.sm, e.sm);
      first = false;
    }
  }
  for (const auto& e : ev) {
    std::fprintf(f,
                 "%s{\"ph\":\"X\",\"name\":\"launch %u\",\"pid\":0,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,"
                 "\"args\":{\"task\":%llu,\"worker\":%u}}",
                 first ? "" : ",\n", e.launch, e.sm, (e.start_ns - t0) / 1000.0,
                 (e.end_ns > e.start_ns ? e.end_ns - e.start_ns : 0) / 1000.0, e.task, e.worker);
    first = false;
  }
  std::fprintf(f, "\n],\"otherData\":{\"ptb_fallbacks\":{");
  for (unsigned __i = 0; __i < kFallbackReasons; ++__i)
    std::fprintf(f, "%s\"%s\":%llu", __i ? "," : "", fallback_name(static_cast<Fallback>(__i)),
                 fallback_count(static_cast<Fallback>(__i)));
  std::fprintf(f, "}}}\n");
  return std::fclose(f) == 0;
}

} // namespace ptb

// ptb/detail/monitor.cuh: the monitor thread: new workers (resume) for launches that ask the host for them.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include <chrono>
#include <mutex>
#include <thread>

#include "../twin_params.cuh"
#include "device_state.cuh"
#include "policy_state.cuh"
#include "runtime.cuh"

namespace ptb {

namespace detail {

inline bool live_locked(const DeviceState& d, unsigned i) {
  const ControlRec& r = d.recs[i];
  if (!r.registered) return false;
  return r.captured || *(volatile unsigned*)d.hflag(i) == kBusy;
}

// Launch new workers for control block i (they join if the launch still runs, else leave at once).
inline void resume_locked(DeviceState& d, unsigned i) {
  ControlRec& r = d.recs[i];
  Launch L = r.launch;
  L.flags |= kResume;
  cudaStream_t s = d.resume[d.resume_rr++ % kResumeStreams];
  int cur = -1;
  cudaGetDevice(&cur);
  if (cur != d.dev) cudaSetDevice(d.dev);
  const cudaError_t e = r.relaunch(L, r.resume_workers, s);
  (void)e;  // a failed resume leaves the anchor waiting; it asks again (strand signal) within 200 us
  if (cur != d.dev && cur >= 0) cudaSetDevice(cur);
}

inline void monitor_loop() {
  Runtime& r = rt();
  while (!r.stop.load()) {
    std::this_thread::sleep_for(std::chrono::microseconds(100));
    std::lock_guard<std::mutex> g(r.m);
    for (unsigned dv = 0; dv < kMaxDevices; ++dv) {
      DeviceState* d = r.devs[dv];
      if (!d || !d->ok) continue;
      for (unsigned i = 0; i < d->pool_size(); ++i) {
        ControlRec& rec = d->recs[i];
        if (!rec.registered) continue;
        const unsigned s = *(volatile unsigned*)(d->pages[i / kPoolPageSize].hstrand + i % kPoolPageSize);
        if (s == rec.seen_strand) continue;
        rec.seen_strand = s;
        if (!live_locked(*d, i) || !rec.policy || rec.policy->sms.empty()) continue;
        const auto now = std::chrono::steady_clock::now();
        if (now - rec.last_resume < std::chrono::microseconds(500)) continue;  // one batch at a time
        rec.last_resume = now;
        resume_locked(*d, i);
      }
    }
  }
}

inline void start_monitor_locked() {
  Runtime& r = rt();
  if (r.monitor_started) return;
  r.monitor_started = true;
  r.monitor = std::thread(monitor_loop);
}

}  // namespace detail

}  // namespace ptb

// ptb/detail/monitor.cuh: the monitor thread: new workers (resume) for launches that ask the host for them.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include <chrono>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "../launch_params.cuh"
#include "device_state.cuh"
#include "on_device.cuh"
#include "policy_state.cuh"
#include "runtime.cuh"
#include "thin_request.cuh"

namespace ptb {

namespace detail {

inline bool live_locked(const DeviceState& d, unsigned __i) {
  const ControlRec& __r = d.recs[__i];
  if (!__r.registered) return false;
  return __r.captured || *(volatile unsigned*)d.hflag(__i) == kBusy;
}

// New workers for a launch that asked for them, launched after the runtime's lock is released: a launch
// call can stall in the driver for a millisecond (seen by hand on the H100; no raw result kept), and every launch of
// the program would wait for the lock that long. Workers that come after their launch ended, or after its
// control block went to another launch, find another generation and leave (join()).
struct Resume {
  int dev = 0;
  cudaStream_t stream = nullptr;
  Launch launch;
  unsigned workers = 0;
  std::function<cudaError_t(const Launch&, unsigned, cudaStream_t)> relaunch;
};

// A resume stream with nothing in it (a resume stream still holds workers that joined a launch until that
// launch ends; resume workers queued behind them would wait for it), not already chosen this round
// (`taken`, a bit per stream); a new one while there are fewer than kResumeStreams; else the next in turn;
// nullptr if none could be made (not the control stream: Policy::set waits for it under the lock, and
// workers that joined a launch would hold it until that launch ends).
inline cudaStream_t idle_resume_stream_locked(DeviceState& d, unsigned& taken) {
  for (unsigned __i = 0; __i < d.nresume; ++__i)
    if (!(taken >> __i & 1u) && cudaStreamQuery(d.resume[__i]) == cudaSuccess) {
      taken |= 1u << __i;
      return d.resume[__i];
    }
  if (d.nresume < kResumeStreams) {
    bool made = false;
    if (const OnDevice on{d.dev})
      made = cudaStreamCreateWithFlags(&d.resume[d.nresume], cudaStreamNonBlocking) == cudaSuccess;
    if (made) {
      taken |= 1u << d.nresume;
      return d.resume[d.nresume++];
    }
  }
  return d.nresume ? d.resume[d.resume_rr++ % d.nresume] : nullptr;
}

// The batch of new workers for control block i's launch, to be launched once the lock is released.
inline Resume resume_batch_locked(DeviceState& d, unsigned __i, unsigned& taken) {
  const ControlRec& __r = d.recs[__i];
  Resume __j;
  __j.dev = d.dev;
  __j.launch = __r.launch;
  __j.launch.flags |= kResume;
  __j.workers = __r.resume_workers;
  __j.relaunch = __r.relaunch;
  __j.stream = idle_resume_stream_locked(d, taken);
  return __j;
}

// Launches them in order, each on its device; the calling thread's current device is kept. A batch
// without a stream is not sent (its launch asks again: strand signal).
inline void launch_resumes(const std::vector<Resume>& due) {
  for (const Resume& __j : due) {
    if (!__j.stream) continue;
    const OnDevice on{__j.dev};
    if (!on) continue;
    const cudaError_t e = __j.relaunch(__j.launch, __j.workers, __j.stream);
    (void)e; // a failed resume leaves the anchor waiting; it asks again (strand signal) within 200 us
  }
}

inline void monitor_loop() {
  Runtime& __r = rt();
  std::vector<Resume> due;
  while (!__r.stop.load()) {
    std::this_thread::sleep_for(std::chrono::microseconds(100));
    due.clear();
    {
      std::lock_guard<std::mutex> __g(__r.__m);
      for (unsigned dv = 0; dv < kMaxDevices; ++dv) {
        DeviceState* d = __r.devs[dv];
        if (!d || !d->ok) continue;
        unsigned taken = 0;
        for (unsigned __i = 0; __i < d->pool_size(); ++__i) {
          ControlRec& rec = d->recs[__i];
          if (!rec.registered) continue;
          const unsigned s = *(volatile unsigned*)(d->pages[__i / kPoolPageSize].hstrand + __i % kPoolPageSize);
          if (s == rec.seen_strand) continue;
          if (!live_locked(*d, __i) || !rec.policy || rec.policy->sms.empty()) {
            rec.seen_strand = s;
            continue;
          }
          // Two kinds of request in one word (thin_request.cuh): the anchor of a launch left alone and a
          // thin launch. Each kind gets at most a batch per 500 us, on its own: batches for a thin launch
          // never delay its anchor's. A request within its limit stays unseen till the limit is up; one
          // batch answers both. (A carry out of the low half reads as one thin request: one batch more.)
          const auto now = std::chrono::steady_clock::now();
          const auto limit = std::chrono::microseconds(500);
          const bool anchor = anchor_requests(s) != anchor_requests(rec.seen_strand) && now - rec.last_strand >= limit;
          const bool thin = thin_requests(s) != thin_requests(rec.seen_strand) && now - rec.last_batch >= limit;
          if (!anchor && !thin) continue;
          rec.seen_strand = s;
          rec.last_batch = now;
          if (anchor) rec.last_strand = now;
          due.push_back(resume_batch_locked(*d, __i, taken));
        }
      }
    }
    launch_resumes(due);
  }
}

inline void start_monitor_locked() {
  Runtime& __r = rt();
  if (__r.monitor_started) return;
  __r.monitor_started = true;
  __r.monitor = std::thread(monitor_loop);
}

} // namespace detail

} // namespace ptb

// ptb/detail/monitor.cuh: the monitor thread: new workers (resume) for launches that ask the host for them.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include <chrono>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "../twin_params.cuh"
#include "device_state.cuh"
#include "on_device.cuh"
#include "policy_state.cuh"
#include "runtime.cuh"
#include "thin_request.cuh"

namespace ptb {

namespace detail {

inline bool live_locked(const DeviceState& d, unsigned i) {
  const ControlRec& r = d.recs[i];
  if (!r.registered) return false;
  return r.captured || *(volatile unsigned*)d.hflag(i) == kBusy;
}

// New workers for a launch that asked for them, launched after the runtime's lock is released: a launch
// call can stall in the driver for a millisecond (seen on the H100, docs/runtime.md), and every launch of
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
  for (unsigned i = 0; i < d.nresume; ++i)
    if (!(taken >> i & 1u) && cudaStreamQuery(d.resume[i]) == cudaSuccess) {
      taken |= 1u << i;
      return d.resume[i];
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
inline Resume resume_batch_locked(DeviceState& d, unsigned i, unsigned& taken) {
  const ControlRec& r = d.recs[i];
  Resume j;
  j.dev = d.dev;
  j.launch = r.launch;
  j.launch.flags |= kResume;
  j.workers = r.resume_workers;
  j.relaunch = r.relaunch;
  j.stream = idle_resume_stream_locked(d, taken);
  return j;
}

// Launches them in order, each on its device; the calling thread's current device is kept. A batch
// without a stream is not sent (its launch asks again: strand signal).
inline void launch_resumes(const std::vector<Resume>& due) {
  for (const Resume& j : due) {
    if (!j.stream) continue;
    const OnDevice on{j.dev};
    if (!on) continue;
    const cudaError_t e = j.relaunch(j.launch, j.workers, j.stream);
    (void)e;  // a failed resume leaves the anchor waiting; it asks again (strand signal) within 200 us
  }
}

inline void monitor_loop() {
  Runtime& r = rt();
  std::vector<Resume> due;
  while (!r.stop.load()) {
    std::this_thread::sleep_for(std::chrono::microseconds(100));
    due.clear();
    {
      std::lock_guard<std::mutex> g(r.m);
      for (unsigned dv = 0; dv < kMaxDevices; ++dv) {
        DeviceState* d = r.devs[dv];
        if (!d || !d->ok) continue;
        unsigned taken = 0;
        for (unsigned i = 0; i < d->pool_size(); ++i) {
          ControlRec& rec = d->recs[i];
          if (!rec.registered) continue;
          const unsigned s = *(volatile unsigned*)(d->pages[i / kPoolPageSize].hstrand + i % kPoolPageSize);
          if (s == rec.seen_strand) continue;
          if (!live_locked(*d, i) || !rec.policy || rec.policy->sms.empty()) {
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
          due.push_back(resume_batch_locked(*d, i, taken));
        }
      }
    }
    launch_resumes(due);
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

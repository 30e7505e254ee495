// ptb/detail/monitor.cuh: the monitor thread: new workers (resume) for launches that ask the host for them.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include <chrono>
#include <mutex>
#include <thread>

#include "../twin_params.cuh"
#include "device_state.cuh"
#include "green_partitions.cuh"
#include "policy_state.cuh"
#include "runtime.cuh"

namespace ptb {

namespace detail {

inline bool live_locked(const DeviceState& d, unsigned i) {
  const ControlRec& r = d.recs[i];
  if (!r.registered) return false;
  return r.captured || *(volatile unsigned*)d.hflag(i) == kBusy;
}

// Resume batches for control block i into every green partition that lies inside its policy's SMs: their
// blocks wait in the hardware for room on those SMs (a batch of an ordinary stream lands wherever there is
// room, outside the set when the set is full, and leaves). One batch per partition and launch at a time.
inline void resume_green_locked(DeviceState& d, unsigned i) {
  if (!d.green) return;
  ControlRec& r = d.recs[i];
  const unsigned char* caps = r.policy->last[d.dev];  // per %smid, as last written to the device
  const unsigned per_sm = r.resume_workers / static_cast<unsigned>(d.sms > 0 ? d.sms : 1);  // occupancy
  for (GreenPartition& p : d.green->parts) {
    if (!p.known || p.smids.empty()) continue;
    bool inside = true;
    for (unsigned s : p.smids) inside = inside && caps[s % kMaxSm] > 0;
    if (!inside) continue;
    if (p.last_rec == i && p.last_gen == r.gen && cudaEventQuery(p.last) == cudaErrorNotReady) continue;  // waits there
    Launch L = r.launch;
    L.flags |= kResume;
    if (r.relaunch(L, per_sm * static_cast<unsigned>(p.smids.size()), p.stream) != cudaSuccess) continue;
    cudaEventRecord(p.last, p.stream);
    p.last_rec = i;
    p.last_gen = r.gen;
    ++d.green->batches;
  }
}

// Launch new workers for control block i (they join if the launch still runs, else leave at once): a batch
// in one of the runtime's streams, and batches that wait inside the set (green partitions).
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
  if (r.policy) resume_green_locked(d, i);
  if (cur != d.dev && cur >= 0) cudaSetDevice(cur);
}

// The monitor's first look at a device: cut it into green partitions (once) and read the SMs of those whose
// discovery has finished.
inline void green_locked(DeviceState& d) {
  if (!d.green) {
    d.green = new GreenPartitions();
    int cur = -1;
    cudaGetDevice(&cur);
    if (cur != d.dev) cudaSetDevice(d.dev);
    create_green_partitions(d.dev, static_cast<unsigned>(d.sms), *d.green);
    if (cur != d.dev && cur >= 0) cudaSetDevice(cur);
  }
  poll_green(*d.green);
}

inline void monitor_loop() {
  Runtime& r = rt();
  while (!r.stop.load()) {
    std::this_thread::sleep_for(std::chrono::microseconds(100));
    std::lock_guard<std::mutex> g(r.m);
    for (unsigned dv = 0; dv < kMaxDevices; ++dv) {
      DeviceState* d = r.devs[dv];
      if (!d || !d->ok) continue;
      green_locked(*d);
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

// bench/colocate/be_manager.h: the `manager` configurations: ptb::qos::ManagerDriver
// (runtime/include/ptb/qos/manager_driver.cuh: Tacker's fuse-or-reorder manager on the GPU) driving the
// pair's two BE jobs (BePair) beside the LS service, as the LS client's request hooks. What is the
// benchmark's: the jobs' sequence numbers, the CUDA error check, the summary line.
#pragma once
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <ptb/ptb.cuh>
#include <ptb/qos/manager_driver.cuh>

#include "be_programs.h"
#include "ls_client.h"
#include "util.h"

namespace colo {

// The pair's two jobs as the driver launches them: each job's next launch is its next sequence number.
class PairJobs : public ptb::qos::BeJobs {
 public:
  PairJobs(BePair& pair, unsigned* seq) : pair_(pair), seq_(seq) {}
  // New sequence numbers for both jobs' next launches (each run's first).
  void renew() {
    for (unsigned j = 0; j < 2; ++j) next_[j] = ++*seq_;
  }
  double next_tasks(unsigned job) override { return double(pair_.job_tasks(job, next_[job])); }
  void launch_next(unsigned job, cudaStream_t s) override {
    pair_.launch_job(job, s, next_[job]);
    next_[job] = ++*seq_;
    CK(cudaGetLastError());
  }
  bool launch_next_fused(cudaStream_t s) override {
    const bool as_planned = pair_.launch_fused(s, next_[0], next_[1]);
    next_[0] = ++*seq_;
    next_[1] = ++*seq_;
    CK(cudaGetLastError());
    return as_planned;
  }

 private:
  BePair& pair_;
  unsigned* seq_;
  unsigned next_[2] = {0, 0};  // each job's next launch (its sequence number)
};

class BeManager : public RequestHooks {
 public:
  using Stats = ptb::qos::ManagerDriver::Stats;
  // target_us: the LS p99 target; ls_us: an LS request's expected time (its solo p99 at this load).
  // reorder: launches that fit an LS request's headroom run while it is in flight (Tacker's order); false
  // (the `manager-hold` configuration): BE holds while LS is in flight and yields at every request.
  // between_per_sm: BE's workers per SM while it is not yielded (0: no cap; a `-bK` configuration).
  // fuse = false (`manager-hold-unfused`): the jobs' launches one by one, never the fused kernel.
  BeManager(BePair& pair, cudaStream_t s, ptb::Policy be, unsigned* seq, double target_us, double ls_us, bool reorder,
            unsigned between_per_sm = 0, bool fuse = true)
      : pair_(pair), jobs_(pair, seq), driver_(jobs_, s, be, config(target_us, ls_us, reorder, between_per_sm, fuse)) {}

  // Learning goes on across start/stop: the models of one run serve the next.
  void start() {
    jobs_.renew();
    driver_.start();
  }
  // The launch in flight ends (on every SM) before this returns.
  void stop() { driver_.stop(); }

  void begin() override { driver_.begin(); }
  cudaError_t end(cudaStream_t s) override { return driver_.end(s); }

  Stats stats() const { return driver_.stats(); }
  std::string summary() const {
    const Stats s = stats();
    const ptb::qos::FuseOrReorderManager& mgr = driver_.manager();
    const char *j0 = pair_.job_name(0), *j1 = pair_.job_name(1);
    char b[480];
    std::snprintf(b, sizeof b,
                  "manager: %llu launches (%s %llu, %s %llu, fused %llu [%s], fused that ran the originals %llu), "
                  "holds %llu, yields %llu (late %llu); models: %s loo %.3f, %s loo %.3f, fused %s (loo %.3f, %zu samples)",
                  s.launches(), j0, s.singles[0], j1, s.singles[1], s.fused, pair_.fused_label().c_str(),
                  s.fused_fallbacks, s.holds, s.yields, s.late_yields, j0, mgr.job_model(0).confidence().loo_error, j1,
                  mgr.job_model(1).confidence().loo_error, mgr.fused_trusted() ? "trusted" : "not trusted",
                  mgr.fused_model().loo_error(), mgr.fused_model().samples());
    return b;
  }

 private:
  static ptb::qos::ManagerDriverConfig config(double target_us, double ls_us, bool reorder, unsigned between_per_sm,
                                              bool fuse) {
    ptb::qos::ManagerDriverConfig c;
    c.target_us = target_us;
    c.ls_us = ls_us;
    c.reorder = reorder;
    c.between_per_sm = between_per_sm;
    c.manager.fuse = fuse;
    c.on_error = [](const char* what, cudaError_t e) {  // as CK: a measurement after an error means nothing
      std::fprintf(stderr, "colocate: FATAL manager: %s -> %s\n", what, cudaGetErrorString(e));
      std::exit(3);
    };
    return c;
  }

  BePair& pair_;
  PairJobs jobs_;
  ptb::qos::ManagerDriver driver_;  // after jobs_: it stops before jobs_ goes
};

}  // namespace colo

// bench/colocate/be_programs.h: the best-effort (BE) programs, as the benchmark sees them. Their kernels
// live in be_programs.cu, written as plain CUDA; bench/colocate/transform.sh makes them PTB with
// `ptb-transform --strict` (each `<<<>>>` becomes a ptb::launch of the original or its twin, chosen by
// the runtime: a BE stream with a ptb::Policy runs twins, ptb::LaunchMode::original runs the originals).
//
// A BE program is a chain of launches in one stream (a few ms each on an H100; "long" tens of ms, "short"
// tens of us). Every task (block)
// of every launch, when it ends, stamps its slot with the launch's sequence number and adds one to a
// device counter; every 256th count is copied to host-mapped memory, which is BE's progress as the host
// reads it while BE runs (no CUDA call needed). The output of each launch depends on its sequence number,
// so the check after a measurement (check()) sees a task that did not run in the last launch.
// Host only (no kernels here).
#pragma once
#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

namespace colo {

class BeProgram {
 public:
  virtual ~BeProgram() = default;
  virtual const char* name() const = 0;         // "compute", "memory", "wmma", "long", "short", ...
  virtual const char* describe() const = 0;     // one line: what one launch computes
  virtual unsigned tasks_per_launch() const = 0;
  virtual double work_per_task() const = 0;     // in work_unit()
  virtual const char* work_unit() const = 0;    // "flop" or "byte"
  // Blocks of its kernel resident per SM at full occupancy (of the original kernel; its twin's workers use
  // the same block and shared memory): G-Space's largest cap.
  virtual unsigned blocks_per_sm() const = 0;
  // Poison the outputs and the stamps, zero the task counter (BE must not be running).
  virtual void prepare() = 0;
  // One launch of the chain, sequence number `seq` (1, 2, ...), into `s` (asynchronous).
  virtual void launch(cudaStream_t s, unsigned seq) = 0;
  // After the stream has drained: `launches` launches were made since prepare(), the last one `last_seq`.
  // Every task of the last launch stamped and its output right (a sample of outputs against a CPU
  // reference, exact), and the counter equals launches * tasks. "" when all is right, else what is wrong.
  virtual std::string check(unsigned launches, unsigned last_seq) = 0;
  // Tasks finished since prepare(), as far as the host can see (a multiple of 256, read from mapped memory).
  virtual double progress() const {
    return static_cast<double>(*static_cast<volatile unsigned long long*>(seen_host_));
  }

 protected:
  unsigned long long* seen_host_ = nullptr;  // host-mapped; the device writes every 256th count
};

// The BE of the Tacker manager ("pair", and "pair-memory" with the triad in compute's place): two jobs,
// 0 = wmma and 1 = compute (or memory), each a chain of launches of
// varied sizes (launch `seq` of a job runs the first job_tasks(job, seq) tasks of its kernel: 1/32 to all
// of the grid, a fixed pseudo-random function of seq, so every configuration runs the same work). As a
// BeProgram (the feeder of the other configurations) one launch is job 0's launch `seq` and then job 1's
// in the same stream: the two kernels one after the other. The manager (be_manager.h) launches the jobs
// itself, one launch at a time, or both jobs' next launches as one fused kernel (fuse-kernels' output,
// be_pair.cu). Progress counts each job's tasks weighted by its time per task alone (choose_fused()
// measures it), in wmma tasks: a mix of the two jobs counts by the GPU time it would take alone.
class BePair : public BeProgram {
 public:
  virtual const char* job_name(unsigned job) const = 0;
  virtual unsigned job_tasks(unsigned job, unsigned seq) const = 0;
  virtual void launch_job(unsigned job, cudaStream_t s, unsigned seq) = 0;
  // Job 0's launch seq0 and job 1's launch seq1 as one fused kernel (the candidate choose_fused() kept);
  // false when the fused launcher ran the two original kernels one after the other instead.
  virtual bool launch_fused(cudaStream_t s, unsigned seq0, unsigned seq1) = 0;
  virtual std::string fused_label() const = 0;
  // After warm-up, BE not running: times each job's whole launch and every fused candidate on the same
  // work (medians of 3, original kernels and the fused kernel on every SM) and keeps the fastest
  // candidate; `seq` gives sequence numbers. One line per candidate to `log`. `ratio` (e.g. "1:1"; "" for
  // the fastest): keep that candidate instead (false when the pair has none of that label).
  virtual bool choose_fused(cudaStream_t s, unsigned* seq, std::string* log, const std::string& ratio = "") = 0;
};

// All BE programs ("compute", "memory", "wmma", "long", "short", "pair", "pair-memory"), their memory
// allocated and inputs written.
std::vector<std::unique_ptr<BeProgram>> make_be_programs();

// be_wmma's arguments but the sequence number: the part both pairs' fused kernels share.
struct FusedWmmaArgs {
  const void* a;  // half*
  const void* b;  // half*
  float* c;
  int m, n, k;
  unsigned* stamp;
  unsigned long long *done, *seen;
};

// be_pair.cu (fuse-kernels' candidates for be_wmma + be_compute): how many, their labels, and one launch
// of candidate i over the first n_w wmma tasks and the first n_c compute tasks, in `s`.
struct FusedPairArgs {
  FusedWmmaArgs w;
  float* out;
  unsigned* stamp_c;
  int iters;
  unsigned long long *done_c, *seen_c;
};
int fused_pair_candidates();
const char* fused_pair_label(int i);
bool launch_fused_pair(int i, cudaStream_t s, const FusedPairArgs& a, unsigned seq_w, unsigned n_w, unsigned seq_c,
                       unsigned n_c);

// be_pair_memory.cu (fuse-kernels' candidates for be_wmma + be_triad, the `pair-memory` BE): the same for
// the WMMA GEMM beside the streaming triad, the pair the unit probe says overlaps (docs/results/unit-probe.md:
// Tensor with LDST 0.95, Tensor with FP32 0.01).
struct FusedMemoryPairArgs {
  FusedWmmaArgs w;
  void* ta;        // float4*: the triad's a = b + s*c
  const void* tb;  // const float4*
  const void* tc;  // const float4*
  unsigned chunk4;
  unsigned* stamp_t;
  unsigned long long *done_t, *seen_t;
};
int fused_memory_pair_candidates();
const char* fused_memory_pair_label(int i);
bool launch_fused_memory_pair(int i, cudaStream_t s, const FusedMemoryPairArgs& a, unsigned seq_w, unsigned n_w,
                              unsigned seq_t, unsigned n_t);

}  // namespace colo

// bench/colocate/be_programs.h: the best-effort (BE) programs, as the benchmark sees them. Their kernels
// live in be_programs.cu, written as plain CUDA; bench/colocate/transform.sh makes them PTB with
// `ptb-transform --strict` (each `<<<>>>` becomes a ptb::launch of the original or its twin, chosen by
// the runtime: a BE stream with a ptb::Policy runs twins, ptb::LaunchMode::original runs the originals).
//
// A BE program is a chain of long launches (a few ms each on an H100) in one stream. Every task (block)
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
  virtual const char* name() const = 0;         // "compute", "memory", "wmma"
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
  double progress() const { return static_cast<double>(*static_cast<volatile unsigned long long*>(seen_host_)); }

 protected:
  unsigned long long* seen_host_ = nullptr;  // host-mapped; the device writes every 256th count
};

// All BE programs ("compute", "memory", "wmma"), their memory allocated and inputs written.
std::vector<std::unique_ptr<BeProgram>> make_be_programs();

}  // namespace colo

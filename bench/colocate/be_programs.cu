// bench/colocate/be_programs.cu: the best-effort (BE) programs of the co-location benchmark, plain CUDA,
// on the host side; their kernels are in be_kernels.cuh. bench/colocate/transform.sh runs `ptb-transform
// --strict` on this file (it takes the included be_kernels.cuh with it): every kernel gets a PTB twin and
// every launch becomes a ptb::launch, so a ptb::Policy on the BE stream can confine BE's workers and take
// SMs back while a launch runs. The LS client (ls_client.cu) and the driver (colocate.cu) are not
// transformed; the fused pair (be_pair.cu) is fuse-kernels' output.
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "be_kernels.cuh"
#include "be_programs.h"
#include "util.h"

namespace colo {
namespace {

// ---- what the three programs share on the host -------------------------------------------------------
class BeBase : public BeProgram {
 public:
  explicit BeBase(unsigned tasks) : tasks_(tasks) {
    CK(cudaHostAlloc(&seen_host_, sizeof(unsigned long long), cudaHostAllocMapped));
    CK(cudaHostGetDevicePointer(&seen_dev_, seen_host_, 0));
    CK(cudaMalloc(&done_, sizeof(unsigned long long)));
    CK(cudaMalloc(&stamp_, sizeof(unsigned) * tasks));
  }
  unsigned tasks_per_launch() const override { return tasks_; }
  unsigned blocks_per_sm() const override { return blocks_per_sm_; }
  void prepare() override {
    CK(cudaDeviceSynchronize());
    CK(cudaMemset(stamp_, 0xff, sizeof(unsigned) * tasks_));  // no launch has sequence number 0xffffffff
    CK(cudaMemset(done_, 0, sizeof(unsigned long long)));
    *static_cast<volatile unsigned long long*>(seen_host_) = 0;
    poison();
    launched_ = 0;
    last_n_ = 0;
    CK(cudaDeviceSynchronize());
  }
  void launch(cudaStream_t s, unsigned seq) override { launch_first(s, seq, tasks_); }
  // A launch of the first n tasks (1 <= n <= tasks_per_launch()) with sequence number `seq`: the pair's jobs
  // (BePair) launch parts of the grid. The check covers what was launched since prepare().
  void launch_first(cudaStream_t s, unsigned seq, unsigned n) {
    note_launch(seq, n);
    launch_n(s, seq, n);
  }
  void note_launch(unsigned seq, unsigned n) {
    launched_ += n;
    last_n_ = n;
    last_seq_ = seq;
  }
  std::string check(unsigned launches, unsigned last_seq) override {
    CK(cudaDeviceSynchronize());
    if (launches == 0 || launched_ == 0) return "no launch was made";
    if (last_seq != last_seq_)
      return "the last launch had seq " + std::to_string(last_seq_) + ", the caller says " + std::to_string(last_seq);
    unsigned long long counted = 0;
    CK(cudaMemcpy(&counted, done_, sizeof counted, cudaMemcpyDeviceToHost));
    if (counted != launched_)
      return "tasks counted " + std::to_string(counted) + ", launched " + std::to_string(launched_);
    std::vector<unsigned> st(tasks_);
    CK(cudaMemcpy(st.data(), stamp_, sizeof(unsigned) * tasks_, cudaMemcpyDeviceToHost));
    for (unsigned t = 0; t < last_n_; ++t)
      if (st[t] != last_seq)
        return "task " + std::to_string(t) + " of the last launch (seq " + std::to_string(last_seq) + ") stamped " +
               std::to_string(st[t]);
    return check_outputs(last_seq, last_n_);
  }
  unsigned last_seq() const { return last_seq_; }
  unsigned long long launched() const { return launched_; }
  unsigned long long* done_dev() const { return done_; }
  unsigned long long* seen_dev() const { return seen_dev_; }
  unsigned* stamp_dev() const { return stamp_; }

 protected:
  virtual void poison() = 0;
  virtual void launch_n(cudaStream_t s, unsigned seq, unsigned n) = 0;
  // The outputs of the first n tasks, written by the launch with sequence number `last_seq`.
  virtual std::string check_outputs(unsigned last_seq, unsigned n) = 0;
  template <class Kernel>
  void occupancy(Kernel k, int threads) {
    int n = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k, threads, 0));
    blocks_per_sm_ = unsigned(n);
  }
  unsigned tasks_;
  unsigned blocks_per_sm_ = 1;
  unsigned long long* seen_dev_ = nullptr;
  unsigned long long* done_ = nullptr;
  unsigned* stamp_ = nullptr;
  unsigned long long launched_ = 0;  // tasks launched since prepare()
  unsigned last_n_ = 0, last_seq_ = 0;
};

std::string mismatch(const char* what, size_t i, double got, double want) {
  char b[160];
  std::snprintf(b, sizeof b, "%s[%zu] = %.9g, reference %.9g", what, i, got, want);
  return b;
}

// The FMA chains at three lengths of launch (the same kernel): "compute" (65536 tasks of 1024 steps, a few
// ms a launch), "long" (65536 tasks of 16384 steps: tens of ms a launch, as simulation and training steps
// have; only a yield inside the launch can serve LS there) and "short" (1024 tasks of 1024 steps, about one
// wave: a chain of launches of tens of microseconds). The check recomputes one thread of every
// `check_every`-th task on the CPU.
class ComputeBe : public BeBase {
 public:
  static constexpr unsigned kThreads = 256;
  static constexpr int kIters = 1024;  // "compute"'s (the pair's fused kernel uses it)
  explicit ComputeBe(const char* name = "compute", unsigned tasks = 65536, int iters = kIters,
                     unsigned check_every = 8)
      : BeBase(tasks), name_(name), iters_(iters), check_every_(check_every) {
    CK(cudaMalloc(&out_, sizeof(float) * tasks * kThreads));
    occupancy(be_compute, kThreads);
    char d[160];
    std::snprintf(d, sizeof d, "%u blocks x 256 threads, 4 fmaf chains of %d steps per thread (%.1f GFLOP a launch)",
                  tasks, iters, 2.0 * kThreads * 4 * iters * tasks / 1e9);
    describe_ = d;
  }
  const char* name() const override { return name_; }
  const char* describe() const override { return describe_.c_str(); }
  double work_per_task() const override { return 2.0 * kThreads * 4 * iters_; }
  const char* work_unit() const override { return "flop"; }
  float* out() const { return out_; }

 private:
  void launch_n(cudaStream_t s, unsigned seq, unsigned n) override {
    be_compute<<<n, kThreads, 0, s>>>(out_, stamp_, seq, iters_, done_, seen_dev_);
  }
  void poison() override { CK(cudaMemset(out_, 0xff, sizeof(float) * tasks_ * kThreads)); }
  std::string check_outputs(unsigned seq, unsigned n) override {
    std::vector<float> h(size_t(tasks_) * kThreads);
    CK(cudaMemcpy(h.data(), out_, h.size() * sizeof(float), cudaMemcpyDeviceToHost));
    // one thread in every check_every-th task (which ones moves with seq), each a whole chain on the CPU
    for (unsigned t = seq % check_every_; t < n; t += check_every_) {
      const unsigned tid = t * kThreads + (t * 37u + seq) % kThreads;
      const float want = compute_chain(tid, seq, iters_);
      if (std::memcmp(&h[tid], &want, sizeof want) != 0) return mismatch("compute out", tid, h[tid], want);
    }
    return "";
  }
  float* out_ = nullptr;
  const char* name_;
  int iters_;
  unsigned check_every_;
  std::string describe_;
};

class MemoryBe : public BeBase {
 public:
  static constexpr size_t kN = size_t(1) << 27;  // floats per array: 512 MiB
  static constexpr unsigned kChunk = 4096, kThreads = 256;
  MemoryBe() : BeBase(unsigned(kN / kChunk)) {
    CK(cudaMalloc(&a_, kN * sizeof(float)));
    CK(cudaMalloc(&b_, kN * sizeof(float)));
    CK(cudaMalloc(&c_, kN * sizeof(float)));
    occupancy(be_triad, kThreads);
    be_triad_fill<<<unsigned((kN + 255) / 256), 256>>>(b_, c_, kN);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
  }
  const char* name() const override { return "memory"; }
  const char* describe() const override {
    return "triad a = b + s*c over 3 x 512 MiB, 32768 blocks x 256 threads of 4096 floats (1.5 GiB a launch)";
  }
  double work_per_task() const override { return 3.0 * sizeof(float) * kChunk; }
  const char* work_unit() const override { return "byte"; }
  float* a() const { return a_; }
  const float* b() const { return b_; }
  const float* c() const { return c_; }

 private:
  void launch_n(cudaStream_t s, unsigned seq, unsigned n) override {
    be_triad<<<n, kThreads, 0, s>>>(reinterpret_cast<float4*>(a_), reinterpret_cast<const float4*>(b_),
                                         reinterpret_cast<const float4*>(c_), kChunk / 4, stamp_, seq, done_,
                                         seen_dev_);
  }
  void poison() override { CK(cudaMemset(a_, 0xff, kN * sizeof(float))); }
  std::string check_outputs(unsigned seq, unsigned n) override {
    std::vector<float> h(kN);
    CK(cudaMemcpy(h.data(), a_, kN * sizeof(float), cudaMemcpyDeviceToHost));
    const float s = triad_scale(seq);
    for (size_t i = seq % 61; i < size_t(n) * kChunk; i += 61) {  // every 61st float, the first one moving with seq
      const float want = triad_b(i) + s * triad_c(i);
      if (h[i] != want) return mismatch("triad a", i, h[i], want);
    }
    return "";
  }
  float *a_ = nullptr, *b_ = nullptr, *c_ = nullptr;
};

class WmmaBe : public BeBase {
 public:
  static constexpr int kM = 4096, kN = 4096, kK = 1024;
  WmmaBe() : BeBase(unsigned((kM / 32) * (kN / 32))), a_(size_t(kM) * kK), b_(size_t(kK) * kN) {
    for (size_t i = 0; i < a_.size(); ++i) a_[i] = int8_t(int(((i * 2654435761u) >> 13) % 5) - 2);
    for (size_t i = 0; i < b_.size(); ++i) b_[i] = int8_t(int(((i * 40503u + 7) >> 5) % 5) - 2);
    std::vector<half> ha(a_.size()), hb(b_.size());
    for (size_t i = 0; i < a_.size(); ++i) ha[i] = __float2half(float(a_[i]));
    for (size_t i = 0; i < b_.size(); ++i) hb[i] = __float2half(float(b_[i]));
    CK(cudaMalloc(&A_, ha.size() * sizeof(half)));
    CK(cudaMalloc(&B_, hb.size() * sizeof(half)));
    CK(cudaMalloc(&C_, size_t(kM) * kN * sizeof(float)));
    CK(cudaMemcpy(A_, ha.data(), ha.size() * sizeof(half), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(B_, hb.data(), hb.size() * sizeof(half), cudaMemcpyHostToDevice));
    occupancy(be_wmma, 128);
  }
  const char* name() const override { return "wmma"; }
  const char* describe() const override {
    return "C = A B + seq, 4096 x 4096 x 1024, half in, float out, 16384 blocks of 4 warps (34.4 GFLOP a launch)";
  }
  double work_per_task() const override { return 2.0 * 32 * 32 * kK; }
  const char* work_unit() const override { return "flop"; }
  const half* a() const { return A_; }
  const half* b() const { return B_; }
  float* c() const { return C_; }

 private:
  void launch_n(cudaStream_t s, unsigned seq, unsigned n) override {
    be_wmma<<<n, 128, 0, s>>>(A_, B_, C_, kM, kN, kK, stamp_, seq, done_, seen_dev_);
  }
  void poison() override { CK(cudaMemset(C_, 0xff, size_t(kM) * kN * sizeof(float))); }
  std::string check_outputs(unsigned seq, unsigned n) override {
    std::vector<float> h(size_t(kM) * kN);
    CK(cudaMemcpy(h.data(), C_, h.size() * sizeof(float), cudaMemcpyDeviceToHost));
    // one element of every 16 x 16 warp tile, at a position that moves from tile to tile and with seq
    for (int tr = 0; tr < kM / 16; ++tr)
      for (int tc = 0; tc < kN / 16; ++tc) {
        if (unsigned((tr / 2) * (kN / 32) + tc / 2) >= n) continue;  // a 32 x 32 block's tile not launched last
        const unsigned p = unsigned(tr * 131 + tc * 17) + seq;
        const int i = tr * 16 + int(p % 16), j = tc * 16 + int((p / 16) % 16);
        long long sum = seq;
        for (int k = 0; k < kK; ++k) sum += int(a_[size_t(i) * kK + k]) * int(b_[size_t(k) * kN + j]);
        const float got = h[size_t(i) * kN + j];
        if (got != float(sum)) return mismatch("wmma C", size_t(i) * kN + j, got, double(sum));
      }
    return "";
  }
  std::vector<int8_t> a_, b_;  // the inputs, kept for the CPU reference
  half *A_ = nullptr, *B_ = nullptr;
  float* C_ = nullptr;
};

// Cd: the second job, ComputeBe ("pair") or MemoryBe ("pair-memory").
template <class Cd>
class PairBe : public BePair {
 public:
  static constexpr bool kMemory = std::is_same_v<Cd, MemoryBe>;
  const char* name() const override { return kMemory ? "pair-memory" : "pair"; }
  const char* describe() const override {
    return kMemory ? "wmma and memory (the triad) as two jobs of launches of 1/32 to all of their grids (sizes a "
                     "fixed function of each launch's sequence number), one after the other or fused"
                   : "wmma and compute as two jobs of launches of 1/32 to all of their grids (sizes a fixed function "
                     "of each launch's sequence number), one after the other or fused";
  }
  unsigned tasks_per_launch() const override { return WmmaBe::kM / 32 * (WmmaBe::kN / 32); }
  double work_per_task() const override { return w_.work_per_task(); }  // progress counts wmma tasks
  const char* work_unit() const override { return "flop"; }
  unsigned blocks_per_sm() const override { return c_.blocks_per_sm(); }
  void prepare() override {
    w_.prepare();
    c_.prepare();
  }
  double progress() const override { return w_.progress() + c_.progress() * c_cost_ / w_cost_; }
  void launch(cudaStream_t s, unsigned seq) override {
    launch_job(0, s, seq);
    launch_job(1, s, seq);
  }
  // Each job that launched is checked; a job may have made no launch in a short run (the manager runs
  // one job's launches alone while it learns).
  std::string check(unsigned launches, unsigned) override {
    if (launches == 0 || (w_.launched() == 0 && c_.launched() == 0)) return "no launch was made";
    std::string bad = w_.launched() ? w_.check(1, w_.last_seq()) : "";
    if (bad.empty() && c_.launched()) bad = c_.check(1, c_.last_seq());
    return bad;
  }

  const char* job_name(unsigned job) const override { return job == 0 ? "wmma" : c_.name(); }
  unsigned job_tasks(unsigned job, unsigned seq) const override {
    const unsigned full = job == 0 ? w_.tasks_per_launch() : c_.tasks_per_launch();
    const unsigned h = (seq * 2654435761u + job * 40503u) >> 13;
    return full >> (h % 6);  // 1, 1/2, ..., 1/32 of the grid, equally often
  }
  void launch_job(unsigned job, cudaStream_t s, unsigned seq) override {
    if (job == 0) w_.launch_first(s, seq, job_tasks(0, seq));
    else c_.launch_first(s, seq, job_tasks(1, seq));
  }
  bool launch_fused(cudaStream_t s, unsigned seq0, unsigned seq1) override {
    return launch_candidate(chosen_, s, seq0, job_tasks(0, seq0), seq1, job_tasks(1, seq1));
  }
  std::string fused_label() const override { return label(chosen_); }

  bool choose_fused(cudaStream_t s, unsigned* seq, std::string* log, const std::string& ratio) override {
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    auto timed = [&](const auto& go) {
      std::vector<double> ms;
      for (int r = 0; r < 4; ++r) {
        CK(cudaEventRecord(e0, s));
        go();
        CK(cudaGetLastError());
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        float x = 0;
        CK(cudaEventElapsedTime(&x, e0, e1));
        if (r > 0) ms.push_back(x);  // the first one warms up
      }
      std::sort(ms.begin(), ms.end());
      return ms[ms.size() / 2];
    };
    const unsigned nw = w_.tasks_per_launch(), nc = c_.tasks_per_launch();
    prepare();
    const double tw = timed([&] { w_.launch_first(s, ++*seq, nw); });
    const double tc = timed([&] { c_.launch_first(s, ++*seq, nc); });
    w_cost_ = tw / nw;
    c_cost_ = tc / nc;
    char line[200];
    std::snprintf(line, sizeof line, "whole launches alone: wmma %.3f ms, %s %.3f ms, in turn %.3f ms\n", tw, c_.name(), tc,
                  tw + tc);
    *log += line;
    double best = 0;
    for (int i = 0; i < candidates(); ++i) {
      bool fused = true;
      const double t = timed([&] {
        const unsigned a = ++*seq, b = ++*seq;
        fused = launch_candidate(i, s, a, nw, b, nc) && fused;
      });
      std::snprintf(line, sizeof line, "fused %s: %.3f ms (%.3fx of in turn)%s\n", label(i), t, t / (tw + tc),
                    fused ? "" : " (ran the originals)");
      *log += line;
      if (fused && (best == 0 || t < best)) best = t, chosen_ = i;
    }
    bool found = ratio.empty();
    for (int i = 0; i < candidates() && !found; ++i)
      if (ratio == label(i)) found = true, chosen_ = i;
    const std::string bad = check(1, 0);
    if (!bad.empty()) *log += "CHECK FAILED after the fused candidates: " + bad + "\n";
    *log += std::string("kept: ") + label(chosen_) + (ratio.empty() ? "" : " (as --pair-fused asks)") + "\n";
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    return found;
  }

 private:
  static int candidates() { return kMemory ? fused_memory_pair_candidates() : fused_pair_candidates(); }
  static const char* label(int i) { return kMemory ? fused_memory_pair_label(i) : fused_pair_label(i); }
  bool launch_candidate(int i, cudaStream_t s, unsigned seq0, unsigned n0, unsigned seq1, unsigned n1) {
    w_.note_launch(seq0, n0);
    c_.note_launch(seq1, n1);
    const FusedWmmaArgs w{w_.a(),         w_.b(),        w_.c(),       WmmaBe::kM, WmmaBe::kN, WmmaBe::kK,
                          w_.stamp_dev(), w_.done_dev(), w_.seen_dev()};
    if constexpr (kMemory) {
      const FusedMemoryPairArgs a{w,        c_.a(),         c_.b(),        c_.c(),       MemoryBe::kChunk / 4,
                                  c_.stamp_dev(), c_.done_dev(), c_.seen_dev()};
      return launch_fused_memory_pair(i, s, a, seq0, n0, seq1, n1);
    } else {
      const FusedPairArgs a{w, c_.out(), c_.stamp_dev(), ComputeBe::kIters, c_.done_dev(), c_.seen_dev()};
      return launch_fused_pair(i, s, a, seq0, n0, seq1, n1);
    }
  }
  WmmaBe w_;
  Cd c_;
  double w_cost_ = 1, c_cost_ = 1;  // ms per task alone (choose_fused)
  int chosen_ = 0;
};

}  // namespace

std::vector<std::unique_ptr<BeProgram>> make_be_programs() {
  std::vector<std::unique_ptr<BeProgram>> v;
  v.push_back(std::make_unique<ComputeBe>());
  v.push_back(std::make_unique<MemoryBe>());
  v.push_back(std::make_unique<WmmaBe>());
  v.push_back(std::make_unique<ComputeBe>("long", 65536, 16 * ComputeBe::kIters, 128));
  v.push_back(std::make_unique<ComputeBe>("short", 1024, ComputeBe::kIters, 1));
  v.push_back(std::make_unique<PairBe<ComputeBe>>());
  v.push_back(std::make_unique<PairBe<MemoryBe>>());
  return v;
}

}  // namespace colo

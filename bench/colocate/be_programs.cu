// bench/colocate/be_programs.cu: the best-effort (BE) programs of the co-location benchmark, plain CUDA.
// bench/colocate/transform.sh runs `ptb-transform --strict` on this file (and on nothing else of the
// benchmark): every kernel here gets a PTB twin and every launch becomes a ptb::launch, so a ptb::Policy
// on the BE stream can confine BE's workers and take SMs back while a launch runs. The LS client
// (ls_client.cu) and the driver (colocate.cu) are not transformed.
//
//   compute  FMA loops (4 independent chains per thread): compute-bound, little memory traffic
//   memory   a streaming triad a = b + s*c over three arrays of 512 MiB (>> the 50 MB L2): memory-bound
//   wmma     a Tensor-Core GEMM (nvcuda::wmma, half in, float out, a warp per 16x16 tile)
//
// Each kernel's blocks are its tasks; every task ends the same way (be_task_done): all its threads are
// past their work, thread 0 stamps the task's slot with the launch's sequence number and counts the task.
// The results are exact by construction (integers in floating point, or the same fmaf chain on the
// CPU), so check() compares bit for bit.
#include <cuda_fp16.h>
#include <mma.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "be_programs.h"
#include "util.h"

namespace colo {
namespace {

// ---- what every BE task does at its end --------------------------------------------------------------
__device__ __forceinline__ void be_task_done(unsigned* stamp, unsigned task, unsigned seq, unsigned long long* done,
                                             unsigned long long* seen) {
  stamp[task] = seq;
  const unsigned long long v = atomicAdd(done, 1ull) + 1;
  if ((v & 255) == 0) *static_cast<volatile unsigned long long*>(seen) = v;  // host-mapped: BE's progress
}

// ---- compute: FMA chains -----------------------------------------------------------------------------
// One thread's result; the same function runs on the CPU for the check (fmaf is correctly rounded on both).
__host__ __device__ inline float compute_chain(unsigned tid, unsigned seq, int iters) {
  float x0 = float((tid * 7u + seq) % 1024u) * 1e-3f, x1 = x0 + 0.25f, x2 = x0 + 0.5f, x3 = x0 + 0.75f;
  for (int k = 0; k < iters; ++k) {
    x0 = fmaf(x0, 0.9999f, 1e-4f);
    x1 = fmaf(x1, 0.99993f, 3e-5f);
    x2 = fmaf(x2, 0.99995f, 2e-5f);
    x3 = fmaf(x3, 0.99997f, 1e-5f);
  }
  return (x0 + x1) + (x2 + x3);
}

__global__ void be_compute(float* out, unsigned* stamp, unsigned seq, int iters, unsigned long long* done,
                           unsigned long long* seen) {
  const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
  out[tid] = compute_chain(tid, seq, iters);
  __syncthreads();
  if (threadIdx.x == 0) be_task_done(stamp, blockIdx.x, seq, done, seen);
}

// ---- memory: streaming triad -------------------------------------------------------------------------
__host__ __device__ inline float triad_b(size_t i) { return float(int(i % 129) - 64); }
__host__ __device__ inline float triad_c(size_t i) { return float(int((i * 5) % 127) - 63); }
__host__ __device__ inline float triad_scale(unsigned seq) { return float(1 + seq % 8); }

__global__ void be_triad_fill(float* b, float* c, size_t n) {
  const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    b[i] = triad_b(i);
    c[i] = triad_c(i);
  }
}

// Task t streams floats [t * chunk, (t + 1) * chunk), as float4.
__global__ void be_triad(float4* a, const float4* b, const float4* c, unsigned chunk4, unsigned* stamp, unsigned seq,
                         unsigned long long* done, unsigned long long* seen) {
  const float s = triad_scale(seq);
  const size_t base = size_t(blockIdx.x) * chunk4;
  for (unsigned i = threadIdx.x; i < chunk4; i += blockDim.x) {
    const float4 x = b[base + i], y = c[base + i];
    a[base + i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
  }
  __syncthreads();
  if (threadIdx.x == 0) be_task_done(stamp, blockIdx.x, seq, done, seen);
}

// ---- wmma: Tensor-Core GEMM --------------------------------------------------------------------------
// C = A B + seq, A M x K and B K x N row-major half, C float; a block of 4 warps computes a 32 x 32 tile
// (block t: tile row t / (N / 32), tile column t % (N / 32)). Entries of A and B are integers in [-2, 2]
// and K <= 2048: every partial sum is an integer below 2^24, exact in float whatever the order.
__global__ void be_wmma(const half* A, const half* B, float* C, int M, int N, int K, unsigned* stamp, unsigned seq,
                        unsigned long long* done, unsigned long long* seen) {
  using namespace nvcuda;
  const int warp = threadIdx.x / 32, tiles_n = N / 32;
  const int row = (blockIdx.x / tiles_n) * 32 + (warp / 2) * 16, col = (blockIdx.x % tiles_n) * 32 + (warp % 2) * 16;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, float(seq));
  for (int k = 0; k < K; k += 16) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> b;
    wmma::load_matrix_sync(a, A + size_t(row) * K + k, K);
    wmma::load_matrix_sync(b, B + size_t(k) * N + col, N);
    wmma::mma_sync(acc, a, b, acc);
  }
  wmma::store_matrix_sync(C + size_t(row) * N + col, acc, N, wmma::mem_row_major);
  (void)M;
  __syncthreads();
  if (threadIdx.x == 0) be_task_done(stamp, blockIdx.x, seq, done, seen);
}

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
    CK(cudaDeviceSynchronize());
  }
  std::string check(unsigned launches, unsigned last_seq) override {
    CK(cudaDeviceSynchronize());
    if (launches == 0) return "no launch was made";
    unsigned long long counted = 0;
    CK(cudaMemcpy(&counted, done_, sizeof counted, cudaMemcpyDeviceToHost));
    if (counted != (unsigned long long)launches * tasks_)
      return "tasks counted " + std::to_string(counted) + ", launched " + std::to_string((unsigned long long)launches * tasks_);
    std::vector<unsigned> st(tasks_);
    CK(cudaMemcpy(st.data(), stamp_, sizeof(unsigned) * tasks_, cudaMemcpyDeviceToHost));
    for (unsigned t = 0; t < tasks_; ++t)
      if (st[t] != last_seq)
        return "task " + std::to_string(t) + " of the last launch (seq " + std::to_string(last_seq) + ") stamped " +
               std::to_string(st[t]);
    return check_outputs(last_seq);
  }

 protected:
  virtual void poison() = 0;
  virtual std::string check_outputs(unsigned last_seq) = 0;
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
};

std::string mismatch(const char* what, size_t i, double got, double want) {
  char b[160];
  std::snprintf(b, sizeof b, "%s[%zu] = %.9g, reference %.9g", what, i, got, want);
  return b;
}

class ComputeBe : public BeBase {
 public:
  static constexpr unsigned kThreads = 256, kTasks = 65536;
  static constexpr int kIters = 1024;
  ComputeBe() : BeBase(kTasks) {
    CK(cudaMalloc(&out_, sizeof(float) * kTasks * kThreads));
    occupancy(be_compute, kThreads);
  }
  const char* name() const override { return "compute"; }
  const char* describe() const override {
    return "65536 blocks x 256 threads, 4 fmaf chains of 1024 steps per thread (34.4 GFLOP a launch)";
  }
  double work_per_task() const override { return 2.0 * kThreads * 4 * kIters; }
  const char* work_unit() const override { return "flop"; }
  void launch(cudaStream_t s, unsigned seq) override {
    be_compute<<<kTasks, kThreads, 0, s>>>(out_, stamp_, seq, kIters, done_, seen_dev_);
  }

 private:
  void poison() override { CK(cudaMemset(out_, 0xff, sizeof(float) * kTasks * kThreads)); }
  std::string check_outputs(unsigned seq) override {
    std::vector<float> h(size_t(kTasks) * kThreads);
    CK(cudaMemcpy(h.data(), out_, h.size() * sizeof(float), cudaMemcpyDeviceToHost));
    // one thread in every 8th task (which ones moves with seq), each a whole chain on the CPU
    for (unsigned t = seq % 8; t < kTasks; t += 8) {
      const unsigned tid = t * kThreads + (t * 37u + seq) % kThreads;
      const float want = compute_chain(tid, seq, kIters);
      if (std::memcmp(&h[tid], &want, sizeof want) != 0) return mismatch("compute out", tid, h[tid], want);
    }
    return "";
  }
  float* out_ = nullptr;
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
  void launch(cudaStream_t s, unsigned seq) override {
    be_triad<<<tasks_, kThreads, 0, s>>>(reinterpret_cast<float4*>(a_), reinterpret_cast<const float4*>(b_),
                                         reinterpret_cast<const float4*>(c_), kChunk / 4, stamp_, seq, done_,
                                         seen_dev_);
  }

 private:
  void poison() override { CK(cudaMemset(a_, 0xff, kN * sizeof(float))); }
  std::string check_outputs(unsigned seq) override {
    std::vector<float> h(kN);
    CK(cudaMemcpy(h.data(), a_, kN * sizeof(float), cudaMemcpyDeviceToHost));
    const float s = triad_scale(seq);
    for (size_t i = seq % 61; i < kN; i += 61) {  // every 61st float, the first one moving with seq
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
  void launch(cudaStream_t s, unsigned seq) override {
    be_wmma<<<tasks_, 128, 0, s>>>(A_, B_, C_, kM, kN, kK, stamp_, seq, done_, seen_dev_);
  }

 private:
  void poison() override { CK(cudaMemset(C_, 0xff, size_t(kM) * kN * sizeof(float))); }
  std::string check_outputs(unsigned seq) override {
    std::vector<float> h(size_t(kM) * kN);
    CK(cudaMemcpy(h.data(), C_, h.size() * sizeof(float), cudaMemcpyDeviceToHost));
    // one element of every 16 x 16 warp tile, at a position that moves from tile to tile and with seq
    for (int tr = 0; tr < kM / 16; ++tr)
      for (int tc = 0; tc < kN / 16; ++tc) {
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

}  // namespace

std::vector<std::unique_ptr<BeProgram>> make_be_programs() {
  std::vector<std::unique_ptr<BeProgram>> v;
  v.push_back(std::make_unique<ComputeBe>());
  v.push_back(std::make_unique<MemoryBe>());
  v.push_back(std::make_unique<WmmaBe>());
  return v;
}

}  // namespace colo

// The host side of an entropy encoder: template kernels with dynamic shared memory, a class template that
// launches them, two streams ordered by events, a multi-level scan whose block counts are computed on the
// host (about 40 launches a round), buffers allocated and freed per round; and cudaDeviceReset between
// rounds and once more just before the program ends (as programs that call cudaThreadExit do). A reset
// destroys the context and everything the runtime made in it: the runtime must not touch any of it
// afterwards (an encoder of this shape died in the runtime's monitor thread under every restricting
// policy), and must set itself up again for the launches after it, which must still run as twins.
// Integer results: exact checks against the CPU.
#include "common.cuh"

constexpr unsigned kScanThreads = 128;  // a block scans 2 x 128 elements

// Exclusive scan of a block's 2 x blockDim elements in dynamic shared memory (Hillis-Steele, doubled
// buffer); kStoreSum: the block's total goes to sums[block]; kPartial: the last block may be short.
template <bool kStoreSum, bool kPartial>
__global__ void block_scan(unsigned* out, const unsigned* in, unsigned* sums, unsigned n) {
  extern __shared__ unsigned buf[];  // 2 x (2 x blockDim) words
  const unsigned per = 2 * blockDim.x, base = blockIdx.x * per;
  unsigned* a = buf;
  unsigned* b = buf + per;
  for (unsigned k = threadIdx.x; k < per; k += blockDim.x) {
    const unsigned i = base + k;
    a[k] = (!kPartial || i < n) && k > 0 ? in[i - 1] : 0;
  }
  __syncthreads();
  for (unsigned d = 1; d < per; d *= 2) {
    for (unsigned k = threadIdx.x; k < per; k += blockDim.x) b[k] = k >= d ? a[k] + a[k - d] : a[k];
    __syncthreads();
    unsigned* t = a;
    a = b;
    b = t;
  }
  for (unsigned k = threadIdx.x; k < per; k += blockDim.x) {
    const unsigned i = base + k;
    if (!kPartial || i < n) out[i] = a[k];
  }
  if (kStoreSum && threadIdx.x == 0) {
    const unsigned last = base + per - 1;
    sums[blockIdx.x] = a[per - 1] + ((!kPartial || last < n) ? in[last] : 0);
  }
}

// Adds each block's offset (the scan of the block sums) to its elements.
__global__ void add_offsets(unsigned* data, const unsigned* offsets, unsigned n) {
  const unsigned per = 2 * blockDim.x;
  const unsigned base = blockIdx.x * per;
  for (unsigned k = threadIdx.x; k < per; k += blockDim.x)
    if (base + k < n) data[base + k] += offsets[blockIdx.x];
}

// A histogram of the low byte of each symbol, per block in dynamic shared memory, then into the total.
template <class Symbol>
__global__ void histogram(const Symbol* in, unsigned n, unsigned* total) {
  extern __shared__ unsigned bins[];
  for (unsigned k = threadIdx.x; k < 256; k += blockDim.x) bins[k] = 0;
  __syncthreads();
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    atomicAdd(&bins[static_cast<unsigned>(in[i]) & 255u], 1u);
  __syncthreads();
  for (unsigned k = threadIdx.x; k < 256; k += blockDim.x)
    if (bins[k]) atomicAdd(&total[k], bins[k]);
}

// The host's scan: levels of block sums until one block holds them, launched in `stream`; each level's
// buffers are the caller's.
template <class Word>
class Scanner {
 public:
  explicit Scanner(unsigned n) {
    for (unsigned m = n; m > 0;) {
      levels_.push_back(m);
      if (m <= 2 * kScanThreads) break;
      m = (m + 2 * kScanThreads - 1) / (2 * kScanThreads);
    }
    for (size_t l = 0; l < levels_.size(); ++l) {
      Word* p = nullptr;
      CUDA_CHECK(cudaMalloc(&p, sizeof(Word) * (levels_[l] + 2 * kScanThreads)));
      sums_.push_back(p);
      CUDA_CHECK(cudaMalloc(&p, sizeof(Word) * (levels_[l] + 2 * kScanThreads)));
      scans_.push_back(p);
    }
  }
  ~Scanner() {
    for (Word* p : sums_) cudaFree(p);
    for (Word* p : scans_) cudaFree(p);
  }
  // out = exclusive scan of in (n elements); returns the launches it made.
  unsigned run(Word* out, const Word* in, cudaStream_t stream) {
    return level(out, in, 0, stream);
  }

 private:
  unsigned level(Word* out, const Word* in, size_t l, cudaStream_t stream) {
    const unsigned n = levels_[l];
    const unsigned blocks = (n + 2 * kScanThreads - 1) / (2 * kScanThreads);
    const size_t shmem = 2 * 2 * kScanThreads * sizeof(Word);
    const bool partial = n % (2 * kScanThreads) != 0;
    if (blocks == 1) {
      if (partial)
        block_scan<false, true><<<1, kScanThreads, shmem, stream>>>(out, in, nullptr, n);
      else
        block_scan<false, false><<<1, kScanThreads, shmem, stream>>>(out, in, nullptr, n);
      return 1;
    }
    if (partial)
      block_scan<true, true><<<blocks, kScanThreads, shmem, stream>>>(out, in, sums_[l], n);
    else
      block_scan<true, false><<<blocks, kScanThreads, shmem, stream>>>(out, in, sums_[l], n);
    const unsigned below = level(scans_[l], sums_[l], l + 1, stream);
    add_offsets<<<blocks, kScanThreads, 0, stream>>>(out, scans_[l], n);
    return 2 + below;
  }
  std::vector<unsigned> levels_;
  std::vector<Word*> sums_, scans_;
};

// One round: `pieces` inputs of random sizes, each histogrammed in one stream and scanned in the other
// (the scan waits for the histogram's copy of the input). Returns the launches made.
static unsigned long long round_of(int round, int pieces) {
  unsigned long long launches = 0;
  cudaStream_t hs, ss;
  cudaEvent_t ready;
  CUDA_CHECK(cudaStreamCreateWithFlags(&hs, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithFlags(&ss, cudaStreamNonBlocking));
  CUDA_CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
  for (int piece = 0; piece < pieces; ++piece) {
    const unsigned n = static_cast<unsigned>(tg::rand_int(1, 600000));
    const std::vector<unsigned> in = tg::random_ints<unsigned>(n, 0, 40);
    unsigned *d_in = nullptr, *d_out = nullptr, *d_hist = nullptr;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(unsigned)));
    CUDA_CHECK(cudaMalloc(&d_out, n * sizeof(unsigned)));
    CUDA_CHECK(cudaMalloc(&d_hist, 256 * sizeof(unsigned)));
    CUDA_CHECK(cudaMemcpyAsync(d_in, in.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice, hs));
    CUDA_CHECK(cudaMemsetAsync(d_hist, 0, 256 * sizeof(unsigned), hs));
    CUDA_CHECK(cudaMemsetAsync(d_out, 0xFF, n * sizeof(unsigned), hs));
    CUDA_CHECK(cudaEventRecord(ready, hs));
    const unsigned hblocks = static_cast<unsigned>(tg::rand_int(1, 300));
    histogram<unsigned><<<hblocks, 256, 256 * sizeof(unsigned), hs>>>(d_in, n, d_hist);
    ++launches;
    CUDA_CHECK(cudaStreamWaitEvent(ss, ready, 0));
    {
      Scanner<unsigned> scan(n);
      launches += scan.run(d_out, d_in, ss);
      CUDA_CHECK(cudaStreamSynchronize(ss));  // the scanner's buffers are freed at the end of this scope
    }
    tg::sync_check("round");
    std::vector<unsigned> out(n), hist(256);
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hist.data(), d_hist, 256 * sizeof(unsigned), cudaMemcpyDeviceToHost));
    std::vector<unsigned> want_out(n), want_hist(256, 0);
    unsigned acc = 0;
    for (unsigned i = 0; i < n; ++i) {
      want_out[i] = acc;
      acc += in[i];
      ++want_hist[in[i] & 255u];
    }
    tg::check(out == want_out, "round %d piece %d: the scan of %u elements differs", round, piece, n);
    tg::check(hist == want_hist, "round %d piece %d: the histogram differs", round, piece);
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFree(d_hist));
  }
  CUDA_CHECK(cudaEventDestroy(ready));
  CUDA_CHECK(cudaStreamDestroy(hs));
  CUDA_CHECK(cudaStreamDestroy(ss));
  return launches;
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "device_reset_templates");
  if (tg::bench_mode()) {
    const unsigned n = 1u << 24;
    unsigned *in = nullptr, *out = nullptr;
    CUDA_CHECK(cudaMalloc(&in, n * sizeof(unsigned)));
    CUDA_CHECK(cudaMalloc(&out, n * sizeof(unsigned)));
    CUDA_CHECK(cudaMemset(in, 1, n * sizeof(unsigned)));
    return tg::bench("device_reset_templates", [&] {
      block_scan<false, false><<<n / (2 * kScanThreads), kScanThreads, 4 * kScanThreads * sizeof(unsigned)>>>(
          out, in, nullptr, n);
    });
  }
  unsigned long long launches = 0;
  for (int round = 0; round < 5; ++round) {
    launches += round_of(round, 3);
    if (round == 1 || round == 3) {
      // Everything made in the context is gone: the program's own buffers were freed already.
      CUDA_CHECK(cudaDeviceReset());
    }
  }
  tg::check_twins(launches, "rounds with resets between them");
  const int rc = tg::finish();
  CUDA_CHECK(cudaDeviceReset());  // the program's last call, as in programs that end with cudaThreadExit
  return rc;
}

// atomicAdd histogram: per-block sub-histograms in static __shared__ memory (shared atomics), merged into
// the global histogram with global atomicAdd; plus a direct global-atomic variant. Exact counts.
#include "common.cuh"

constexpr int kBins = 256;

__global__ void hist_shared(const unsigned char* data, int n, unsigned* hist) {
  __shared__ unsigned local[kBins];
  for (int b = threadIdx.x; b < kBins; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) atomicAdd(&local[data[i]], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < kBins; b += blockDim.x)
    if (local[b]) atomicAdd(&hist[b], local[b]);
}

__global__ void hist_global(const unsigned char* data, int n, unsigned long long* hist) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&hist[data[i] % 17], 1ull);
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "histogram_atomic");
  if (tg::bench_mode()) {
    int n = 1 << 28;
    tg::DevBuf<unsigned char> data(n);
    tg::DevBuf<unsigned> hist(kBins);
    CUDA_CHECK(cudaMemset(data, 0x5a, n));
    for (int i = 0; i < 64; ++i) CUDA_CHECK(cudaMemset(data.p + (size_t)i * (n / 64), i * 4, n / 128));
    return tg::bench("histogram_atomic", [&] { hist_shared<<<132 * 8, 512>>>(data, n, hist); });
  }
  for (int grid : {3, 500, 0}) {
    int n = (int)tg::rand_int(0, 5000000);
    // skewed data: half the bytes from a narrow range, so the atomics contend
    std::vector<unsigned char> h(n);
    for (auto& c : h) c = (unsigned char)(tg::rand_int(0, 1) ? tg::rand_int(0, 255) : tg::rand_int(100, 103));
    tg::DevBuf<unsigned char> data(n);
    data.upload(h);
    tg::DevBuf<unsigned> hist(kBins);
    tg::DevBuf<unsigned long long> hist17(17);
    hist.fill_bytes(0);
    hist17.fill_bytes(0);
    int g = grid ? grid : (n + 255) / 256 + 1;
    hist_shared<<<g, 256>>>(data, n, hist);
    hist_global<<<(n + 255) / 256 + 1, 256>>>(data, n, hist17);
    tg::sync_check("histograms");
    std::vector<unsigned> want(kBins, 0);
    std::vector<unsigned long long> want17(17, 0);
    for (unsigned char c : h) {
      ++want[c];
      ++want17[c % 17];
    }
    tg::compare_exact(hist.download(), want, "shared-memory histogram");
    tg::compare_exact(hist17.download(), want17, "global-atomic histogram");
  }
  return tg::finish();
}

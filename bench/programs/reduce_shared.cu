// (f) A shared-memory tree reduction with __syncthreads: 10 sums of a 2^26-element array of 32-bit
// integers (times 1, 2, ..., 10), each in three dependent passes of one kernel template (2^26 -> 2^17
// -> 2^8 -> 1: every 256-thread block loads 2 elements per thread and halves in shared memory).
//   reduce_shared [--log2n 26] [--sums 10]
// Integer sums wrap, so the check is exact: sum k is k times the CPU's sum (mod 2^32).
#include "bp.cuh"

#include <vector>

template <unsigned T>
__global__ void block_sum(const uint32_t* __restrict__ in, uint32_t* __restrict__ out, size_t n, uint32_t mul) {
  __shared__ uint32_t s[T];
  const size_t i = (size_t)blockIdx.x * (2 * T) + threadIdx.x;
  uint32_t v = 0;
  if (i < n) v = in[i] * mul;
  if (i + T < n) v += in[i + T] * mul;
  s[threadIdx.x] = v;
  __syncthreads();
  for (unsigned k = T / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}

int main(int argc, char** argv) {
  bp::program_name() = "reduce_shared";
  const int lg = (int)bp::arg(argc, argv, "--log2n", 26), sums = (int)bp::arg(argc, argv, "--sums", 10);
  const size_t n = (size_t)1 << lg;
  constexpr unsigned T = 256;
  std::vector<uint32_t> x(n);
  uint32_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    x[i] = bp::hash32((uint32_t)i ^ 0xa5a5a5a5u);
    total += x[i];
  }
  // pass sizes: n -> p1 -> p2 -> ... -> 1
  std::vector<size_t> sizes{n};
  while (sizes.back() > 1) sizes.push_back((sizes.back() + 2 * T - 1) / (2 * T));
  uint32_t *d_x, *d_p[2], *d_res;
  BP_CK(cudaMalloc(&d_x, n * 4));
  BP_CK(cudaMalloc(&d_p[0], sizes[1] * 4));
  BP_CK(cudaMalloc(&d_p[1], sizes[1] * 4));
  BP_CK(cudaMalloc(&d_res, sums * 4));
  BP_CK(cudaMemcpy(d_x, x.data(), n * 4, cudaMemcpyHostToDevice));
  BP_CK(cudaMemset(d_res, 0, sums * 4));
  bp::Timer t;
  BP_CK(cudaDeviceSynchronize());

  t.start();
  unsigned long long launches = 0;
  for (int k = 0; k < sums; ++k) {
    const uint32_t* in = d_x;
    for (size_t p = 1; p < sizes.size(); ++p) {
      uint32_t* out = p + 1 == sizes.size() ? d_res + k : d_p[p % 2];
      block_sum<T><<<(unsigned)sizes[p], T>>>(in, out, sizes[p - 1], p == 1 ? (uint32_t)(k + 1) : 1u);
      ++launches;
      in = out;
    }
  }
  const float ms = t.stop();

  std::vector<uint32_t> res(sums);
  BP_CK(cudaMemcpy(res.data(), d_res, sums * 4, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int k = 0; k < sums; ++k)
    if (res[k] != (uint32_t)(k + 1) * total && bad++ < 5) std::printf("  sum %d: %u, want %u\n", k, res[k], (uint32_t)(k + 1) * total);
  if (bad) bp::fail("%d of %d sums wrong", bad, sums);
  bp::result(ms, launches);
  return 0;
}

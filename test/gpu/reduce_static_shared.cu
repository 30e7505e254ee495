// Two-pass sum reduction with static __shared__ memory and __syncthreads: pass 1 writes one partial per
// block (grid-stride loop over the input), pass 2 is a single block that reduces the partials. 64-bit
// integer sums: exact.
#include "common.cuh"

constexpr int kBlock = 256;

__global__ void partial_sums(const int* in, long long* partial, int n) {
  __shared__ long long s[kBlock];
  long long acc = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) acc += in[i];
  s[threadIdx.x] = acc;
  __syncthreads();
  for (int w = kBlock / 2; w > 0; w >>= 1) {
    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
}

__global__ void final_sum(const long long* partial, int np, long long* result) {
  __shared__ long long s[kBlock];
  long long acc = 0;
  for (int i = threadIdx.x; i < np; i += blockDim.x) acc += partial[i];
  s[threadIdx.x] = acc;
  __syncthreads();
  for (int w = kBlock / 2; w > 0; w >>= 1) {
    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) *result = s[0];
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "reduce_static_shared");
  if (tg::bench_mode()) {
    int n = 1 << 27, nb = 132 * 8;
    tg::DevBuf<int> in(n);
    tg::DevBuf<long long> partial(nb), result(1);
    in.fill_bytes(1);
    return tg::bench("reduce_static_shared", [&] {
      partial_sums<<<nb, kBlock>>>(in, partial, n);
      final_sum<<<1, kBlock>>>(partial, nb, result);
    });
  }
  for (int nb : {1, 7, 132, 1000, 5000}) {
    int n = (int)tg::rand_int(0, 3000000);
    auto h = tg::random_ints<int>(n, -2000000000, 2000000000);
    tg::DevBuf<int> in(n);
    tg::DevBuf<long long> partial(nb), result(1);
    in.upload(h);
    partial.poison();
    result.poison();
    partial_sums<<<nb, kBlock>>>(in, partial, n);
    final_sum<<<1, kBlock>>>(partial, nb, result);
    tg::sync_check("reduce");
    std::vector<long long> wp(nb, 0);
    long long total = 0;
    for (int i = 0; i < n; ++i) {
      wp[(i / kBlock) % nb] += h[i];
      total += h[i];
    }
    tg::compare_exact(partial.download(), wp, "per-block partial sums");
    long long got = result.download()[0];
    tg::check(got == total, "grid %d: total %lld, want %lld", nb, got, total);
  }
  return tg::finish();
}

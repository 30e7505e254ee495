// A thread-dependent `return` BEFORE the barriers (docs/user/ptb-transform.md, "Parking"): `if (i >= n)
// return;` at the top of a shared-memory sum reduction whose barriers are in a device function (cloned
// for the twin), with n not a multiple of the block size, so the last block runs with only a prefix of
// its threads. A second kernel reduces predicates with __syncthreads_count/_and/_or after the return: the
// counts are over the threads that did not return (on sm_70+ the exited threads of the original). The
// transformed build parks the threads that return; exact integer results either way.
#include "common.cuh"

// The block's threads [0, active) hold values in s[]: their sum ends in s[0]. Every thread that did not
// return calls it; the ones that returned are not there (exited in the original, parked in the twin).
__device__ void tree_reduce(long long* s, int active) {
  int w = 1;
  while (w < (int)blockDim.x) w <<= 1;
  for (w >>= 1; w > 0; w >>= 1) {
    if ((int)threadIdx.x < w && (int)threadIdx.x + w < active) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
}

__global__ void block_sums(const int* in, long long* out, int n) {
  __shared__ long long s[1024];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  s[threadIdx.x] = in[i];
  __syncthreads();
  int base = blockIdx.x * blockDim.x;
  int active = n - base < (int)blockDim.x ? n - base : (int)blockDim.x;
  tree_reduce(s, active);
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}

// out[4 * block + k]: the count of positive values, whether all are above `floor`, whether any is zero,
// and how many threads reached the end (one more barrier after the reductions).
__global__ void predicate_stats(const int* in, int* out, int n, int floor) {
  __shared__ int arrived;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int v = in[i];
  int count = __syncthreads_count(v > 0);
  int all = __syncthreads_and(v > floor);
  int any = __syncthreads_or(v == 0);
  if (threadIdx.x == 0) arrived = 0;
  __syncthreads();
  atomicAdd(&arrived, 1);
  __syncthreads();
  if (threadIdx.x == 0) {
    out[4 * blockIdx.x] = count;
    out[4 * blockIdx.x + 1] = all != 0;
    out[4 * blockIdx.x + 2] = any != 0;
    out[4 * blockIdx.x + 3] = arrived;
  }
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "early_return_before_barrier_reduce");
  if (tg::bench_mode()) {
    int n = (1 << 27) - 77, bs = 256, nb = (n + bs - 1) / bs;
    tg::DevBuf<int> in(n);
    tg::DevBuf<long long> out(nb);
    in.fill_bytes(1);
    return tg::bench("early_return_before_barrier_reduce", [&] { block_sums<<<nb, bs>>>(in, out, n); });
  }
  for (int bs : {256, 96, 1024, 33, 64, 512}) {
    int n = (int)tg::rand_int(1, 2000000);
    if (n % bs == 0) ++n;  // a partial last block
    int nb = (n + bs - 1) / bs;
    auto h = tg::random_ints<int>(n, -2000000000, 2000000000);
    tg::DevBuf<int> in(n);
    tg::DevBuf<long long> sums(nb);
    in.upload(h);
    sums.poison();
    block_sums<<<nb, bs>>>(in, sums, n);
    tg::sync_check("block_sums");
    std::vector<long long> want(nb, 0);
    for (int i = 0; i < n; ++i) want[i / bs] += h[i];
    tg::compare_exact(sums.download(), want, "block sums");

    // Small values, so that "any zero" and "all above floor" differ between blocks.
    int k = (int)tg::rand_int(20, 400), floor = -k + (int)tg::rand_int(0, 10);
    auto hs = tg::random_ints<int>(n, -k, k);
    tg::DevBuf<int> pin(n), stats(4 * nb);
    pin.upload(hs);
    stats.poison();
    predicate_stats<<<nb, bs>>>(pin, stats, n, floor);
    tg::sync_check("predicate_stats");
    std::vector<int> ws(4 * nb, 0);
    for (int b = 0; b < nb; ++b) {
      int all = 1, any = 0, count = 0, arrived = 0;
      for (int i = b * bs; i < n && i < (b + 1) * bs; ++i) {
        count += hs[i] > 0;
        all &= hs[i] > floor;
        any |= hs[i] == 0;
        ++arrived;
      }
      ws[4 * b] = count;
      ws[4 * b + 1] = all;
      ws[4 * b + 2] = any;
      ws[4 * b + 3] = arrived;
    }
    tg::compare_exact(stats.download(), ws, "count/and/or per block");
  }
  return tg::finish();
}

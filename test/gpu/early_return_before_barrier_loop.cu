// A thread-dependent `return` inside a loop with barriers (docs/user/ptb-transform.md, "Parking"): thread t of
// the block runs len[t] rounds and returns at the start of the next one, after having passed a different
// number of barriers than its neighbours; each round meets at __syncthreads_count (the threads still
// there, recorded per round), a cooperative_groups block sync, and an inner loop with two barriers per
// step, exchanging values through shared memory with neighbours that are still running. In the original
// the threads that returned have exited; in the transformed build they park. Exact integer results.
#include <cooperative_groups.h>

#include "common.cuh"
namespace cg = cooperative_groups;

__global__ void rounds(const int* len, const int* val, int* out, int* running, int n, int max_rounds) {
  __shared__ int s[1024];
  cg::thread_block block = cg::this_thread_block();
  const int t = threadIdx.x, b = blockDim.x;
  const int i = blockIdx.x * b + t;
  const int mine = i < n ? len[i] : 0;  // threads past n return in round 0
  int acc = 0;
  for (int r = 0; r < max_rounds; ++r) {
    const int here = __syncthreads_count(1);
    if (t == 0) running[blockIdx.x * max_rounds + r] = here;
    if (r >= mine) {
      if (i < n) out[i] = acc;
      return;
    }
    s[t] = val[i] * (r + 1);
    block.sync();
    for (int k = 1; k <= 2; ++k) {
      const int nb = (t + k) % b, nbi = blockIdx.x * b + nb;
      const bool nb_here = nbi < n && r < len[nbi];
      acc += nb_here ? s[nb] : -1;
      __syncthreads();
      s[t] += 1;
      __syncthreads();
    }
  }
  if (i < n) out[i] = acc;
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "early_return_before_barrier_loop");
  if (tg::bench_mode()) {
    int n = (1 << 22) - 5, bs = 256, mr = 16, nb = (n + bs - 1) / bs;
    tg::DevBuf<int> len(n), val(n), out(n), running((size_t)nb * mr);
    len.fill_bytes(0x08);  // 0x08080808: every thread runs all rounds
    val.fill_bytes(0);
    return tg::bench("early_return_before_barrier_loop",
                     [&] { rounds<<<nb, bs>>>(len, val, out, running, n, mr); });
  }
  for (int bs : {128, 1024, 96, 33, 256}) {
    int n = (int)tg::rand_int(1, 300000);
    if (n % bs == 0) ++n;
    int mr = (int)tg::rand_int(1, 24), nb = (n + bs - 1) / bs;
    // Mostly short, some longer than max_rounds; a few blocks where every thread has one length.
    auto hl = tg::random_ints<int>(n, 0, mr + 2);
    for (int b = 0; b < nb; b += 7)
      for (int i = b * bs; i < n && i < (b + 1) * bs; ++i) hl[i] = b % (mr + 1);
    auto hv = tg::random_ints<int>(n, -1000, 1000);
    tg::DevBuf<int> len(n), val(n), out(n), running((size_t)nb * mr);
    len.upload(hl);
    val.upload(hv);
    out.poison();
    running.poison();
    rounds<<<nb, bs>>>(len, val, out, running, n, mr);
    tg::sync_check("rounds");
    auto L = [&](int b, int t) { int i = b * bs + t; return i < n ? hl[i] : 0; };
    std::vector<int> wo(n), wr((size_t)nb * mr, -1);
    for (int b = 0; b < nb; ++b) {
      for (int r = 0; r < mr; ++r) {
        if (r > L(b, 0)) break;  // thread 0 writes while it has not returned
        int here = 0;
        for (int t = 0; t < bs; ++t) here += L(b, t) >= r;
        wr[(size_t)b * mr + r] = here;
      }
      for (int t = 0; t < bs; ++t) {
        int i = b * bs + t;
        if (i >= n) continue;
        int acc = 0;
        for (int r = 0; r < mr && r < hl[i]; ++r)
          for (int k = 1; k <= 2; ++k) {
            int nb_t = (t + k) % bs, nbi = b * bs + nb_t;
            bool nb_here = nbi < n && r < hl[nbi];
            acc += nb_here ? hv[nbi] * (r + 1) + (k - 1) : -1;
          }
        wo[i] = acc;
      }
    }
    tg::compare_exact(out.download(), wo, "per-thread sums");
    tg::compare_exact(running.download(), wr, "threads still running per round");
  }
  return tg::finish();
}

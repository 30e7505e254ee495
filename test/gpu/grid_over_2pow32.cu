// A grid of 65537 x 256 x 256 = 4295032832 blocks, more than 2^32: task ids must be 64-bit. Almost every
// block returns at once (block-uniform return); blocks whose 64-bit linear id is 0x12345 mod 2^20, and the
// last 1024 blocks, count themselves and record their blockIdx. A 32-bit wrap of the task id would run low
// ids twice and never reach the ids past 2^32.
// The full grid is run only if a 1/64 probe says it takes < 1.2 s here; otherwise the program says SKIP.
#include "common.cuh"

#include <chrono>

constexpr unsigned long long kMarkMask = (1ull << 20) - 1, kMark = 0x12345, kTail = 1024;

__global__ void sparse_blocks(unsigned long long total, unsigned* counts, uint3* where) {
  unsigned long long lin =
      ((unsigned long long)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  unsigned long long slot;
  if ((lin & kMarkMask) == kMark) {
    slot = lin >> 20;
  } else if (lin >= total - kTail) {
    slot = (total >> 20) + 1 + (lin - (total - kTail));
  } else {
    return;
  }
  if (threadIdx.x == 0) {
    atomicAdd(&counts[slot], 1u);
    where[slot] = blockIdx;
  }
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "grid_over_2pow32");
  const unsigned gx = 65537, gy = 256;
  auto run = [&](unsigned gz, bool verify) -> double {
    unsigned long long total = (unsigned long long)gx * gy * gz;
    size_t nslots = (size_t)(total >> 20) + 1 + kTail;
    tg::DevBuf<unsigned> counts(nslots);
    tg::DevBuf<uint3> where(nslots);
    counts.fill_bytes(0);
    where.poison();
    CUDA_CHECK(cudaDeviceSynchronize());
    auto t0 = std::chrono::steady_clock::now();
    sparse_blocks<<<dim3(gx, gy, gz), 32>>>(total, counts, where);
    tg::sync_check("sparse_blocks");
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!verify) return s;
    auto hc = counts.download();
    auto hw = where.download();
    size_t bad = 0;
    for (size_t slot = 0; slot < nslots; ++slot) {
      unsigned long long lin;
      bool exists;
      if (slot <= (total >> 20)) {
        lin = ((unsigned long long)slot << 20) | kMark;
        exists = lin < total - kTail;
      } else {
        lin = total - kTail + (slot - (total >> 20) - 1);
        exists = true;
      }
      unsigned want = exists ? 1 : 0;
      bool ok = hc[slot] == want;
      if (ok && exists) {
        uint3 w = hw[slot];
        ok = w.x == lin % gx && w.y == (lin / gx) % gy && w.z == lin / gx / gy;
      }
      if (!ok && bad++ == 0)
        tg::check(false, "gz=%u: block with linear id %llu ran %u times (want %u) or recorded a wrong blockIdx", gz,
                  lin, hc[slot], want);
    }
    tg::check(bad == 0, "gz=%u: %zu wrong slots", gz, bad);
    return s;
  };
  if (tg::bench_mode()) {
    printf("NOTE grid_over_2pow32: no --bench for this program (a correctness test of 64-bit task ids)\n");
    return 0;
  }
  double probe = run(4, true);  // 2^26 blocks: also a check on its own
  double est = probe * 64;
  printf("probe: 65537x256x4 blocks took %.3f s; full grid estimated %.2f s\n", probe, est);
  if (est > 1.2) {
    if (tg::state().failures) return tg::finish();
    printf("SKIP grid_over_2pow32: the full grid would take about %.1f s here\n", est);
    return 0;
  }
  double full = run(256, true);
  printf("full grid (4295032832 blocks) took %.3f s\n", full);
  return tg::finish();
}

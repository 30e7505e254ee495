// The launch shape that hung under PTB_SMS=0-65 (issue 10): a 2-D wavefront (Needleman-Wunsch's shape),
// two kernels with 16-thread blocks, shared memory and __syncthreads, launched ~2*W times in one stream
// with grids of 1, 2, ..., W, ..., 2, 1 blocks and no synchronization in between. Twins written by hand
// as ptb-transform emits them. Checks every task ran exactly once, against a CPU count. The launches give
// no policy: run it under PTB_MODE=ptb (or a PTB_SMS / PTB_BLOCKS_PER_SM) to check the twins; in the
// automatic launch mode with no process policy it runs the original kernels.
//   wavefront [--width W] [--rounds R] [--sync-every K] [--malloc-every K]
// A watchdog thread prints where the program is and exits 3 when it makes no progress for 20 s.
// --malloc-every K: a cudaMalloc/cudaFree pair every K steps (they may wait for the device).
#include <ptb/ptb.cuh>
#include "../runtime/common.cuh"
#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

__device__ __forceinline__ void wave_body(uint3 bid, unsigned* cnt, unsigned* val, unsigned step) {
  __shared__ unsigned s[16];
  s[threadIdx.x] = bid.x * 16 + threadIdx.x + step;
  __syncthreads();
  unsigned acc = 0;
  for (int k = 0; k < 16; ++k) acc += s[(threadIdx.x + k) & 15];
  __syncthreads();
  if (threadIdx.x == 0) {
    atomicAdd(&cnt[bid.x], 1u);
    atomicAdd(&val[bid.x], acc);
  }
}
__global__ void wave_a(unsigned* cnt, unsigned* val, unsigned step) { wave_body(blockIdx, cnt, val, step); }
__global__ void wave_a__ptb(unsigned* cnt, unsigned* val, unsigned step, const ::ptb::Launch L) {
  ::ptb::run_tasks(L, [&](const uint3 b, const dim3) { wave_body(b, cnt, val, step); });
}
__global__ void wave_b(unsigned* cnt, unsigned* val, unsigned step) { wave_body(blockIdx, cnt, val, step + 7); }
__global__ void wave_b__ptb(unsigned* cnt, unsigned* val, unsigned step, const ::ptb::Launch L) {
  ::ptb::run_tasks(L, [&](const uint3 b, const dim3) { wave_body(b, cnt, val, step + 7); });
}

static std::atomic<long> g_progress{0};
static std::atomic<bool> g_done{false};

int main(int argc, char** argv) {
  unsigned W = 255, rounds = 1, sync_every = 0, malloc_every = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    unsigned v = static_cast<unsigned>(std::atoi(argv[i + 1]));
    if (a == "--width") W = v; else if (a == "--rounds") rounds = v;
    else if (a == "--sync-every") sync_every = v; else if (a == "--malloc-every") malloc_every = v;
  }
  std::thread watchdog([] {
    long last = -1;
    auto since = std::chrono::steady_clock::now();
    while (!g_done.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      const long p = g_progress.load();
      if (p != last) { last = p; since = std::chrono::steady_clock::now(); continue; }
      if (std::chrono::steady_clock::now() - since > std::chrono::seconds(20)) {
        std::printf("FAIL wavefront: HANG, no progress for 20 s at step %ld\n", p);
        std::fflush(stdout);
        std::_Exit(3);
      }
    }
  });
  watchdog.detach();
  const unsigned steps = 2 * W - 1;
  unsigned *cnt, *val;
  CK(cudaMalloc(&cnt, sizeof(unsigned) * steps * 2 * W));
  CK(cudaMalloc(&val, sizeof(unsigned) * steps * 2 * W));
  auto t0 = std::chrono::steady_clock::now();
  for (unsigned r = 0; r < rounds; ++r) {
    CK(cudaMemset(cnt, 0, sizeof(unsigned) * steps * 2 * W));
    CK(cudaMemset(val, 0, sizeof(unsigned) * steps * 2 * W));
    for (unsigned i = 0; i < steps; ++i) {
      const unsigned g = i < W ? i + 1 : steps - i;
      unsigned* c = cnt + (size_t)i * 2 * W;
      unsigned* v = val + (size_t)i * 2 * W;
      ::ptb::launch(::ptb::LaunchConfig(dim3(g), dim3(16), 0, 0), wave_a, wave_a__ptb, c, v, i);
      ::ptb::launch(::ptb::LaunchConfig(dim3(g), dim3(16), 0, 0), wave_b, wave_b__ptb, c + W, v + W, i);
      if (sync_every && (i + 1) % sync_every == 0) CK(cudaStreamSynchronize(0));
      if (malloc_every && (i + 1) % malloc_every == 0) {
        void* p;
        CK(cudaMalloc(&p, 1 << 20));
        CK(cudaFree(p));
      }
      g_progress.fetch_add(1);
    }
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    g_progress.fetch_add(1);
    std::vector<unsigned> hc((size_t)steps * 2 * W), hv(hc.size());
    CK(cudaMemcpy(hc.data(), cnt, hc.size() * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hv.data(), val, hv.size() * 4, cudaMemcpyDeviceToHost));
    for (unsigned i = 0; i < steps; ++i) {
      const unsigned g = i < W ? i + 1 : steps - i;
      for (unsigned k = 0; k < 2; ++k)
        for (unsigned b = 0; b < W; ++b) {
          const size_t at = (size_t)i * 2 * W + k * W + b;
          unsigned want = 0;  // thread 0's sum over the block's shared array
          if (b < g) for (unsigned q = 0; q < 16; ++q) want += b * 16 + q + i + 7 * k;
          EXPECT(hc[at] == (b < g ? 1u : 0u), "step %u kernel %u task %u ran %u times", i, k, b, hc[at]);
          EXPECT(hv[at] == want, "step %u kernel %u task %u value %u want %u", i, k, b, hv[at], want);
          if (g_failures > 10) return finish("wavefront");
        }
    }
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const ptb::LaunchMode lm = ptb::launch_mode();
  std::printf("wavefront W=%u rounds=%u launches=%u, launch mode %s: %.1f ms (%.1f us/launch)\n", W, rounds,
              rounds * steps * 2,
              lm == ptb::LaunchMode::ptb ? "ptb" : lm == ptb::LaunchMode::original ? "original" : "automatic", ms,
              1000 * ms / (rounds * steps * 2));
  g_done = true;
  return finish("wavefront");
}

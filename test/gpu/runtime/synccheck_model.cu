// What compute-sanitizer's synccheck reports for barrier arrivals that PTX allows: one barrier instruction
// (a __noinline__ function, as ptb::detail::task_barrier is) reached from different call sites by
// different warps or lanes of one block. Each case is a correct program (it checks its own result); run
// it plainly and under `compute-sanitizer --tool synccheck`, and compare the reports
// (test/gpu/runtime/synccheck_model.sh). Cases:
//   one-site      every thread calls the barrier function from one call site (the control)
//   warp-sites    warp 0 calls it from one site, the other warps from another (each warp converged)
//   lane-sites    half of each warp from one site, half from the other (the shape of a parking task body:
//                 ptb::task_sync in the body, the park's loop at an exit)
//   park          a parking task body as ptb-transform writes it: threads with odd index leave the task
//                 (ptb::task_exit) before the block's barriers, the others pass two task barriers
#include <ptb/ptb.cuh>

#include <cstdio>
#include <cstring>

namespace {

// One arrival at barrier 0: the runtime's own task barrier (non-aligned barrier.red.or, not inlined).
__device__ __forceinline__ unsigned arrive(unsigned v) { return ptb::detail::task_barrier(v != 0); }

// Two call sites of the one barrier instruction (not inlined, different bodies: not merged).
__device__ __noinline__ unsigned site_a() { return arrive(1); }
__device__ __noinline__ unsigned site_b(unsigned t) { return arrive(t | 1u); }

// Each thread writes its entry, meets the block, and reads its neighbour's: wrong when the barrier did not
// separate the writes from the reads.
__global__ void probe(int which, int* out) {
  __shared__ int s[256];
  const unsigned t = threadIdx.x, lane = t % 32, warp = t / 32;
  s[t] = static_cast<int>(t) * 3 + 1;
  unsigned any = 0;
  switch (which) {
    case 0:
      any = arrive(1);
      break;
    case 1:
      if (warp == 0) any = site_a(); else any = site_b(t);
      break;
    case 2:
      if (lane < 16) any = site_a(); else any = site_b(t);
      break;
    default:
      break;
  }
  out[blockIdx.x * blockDim.x + t] = s[(t + 1) % blockDim.x] + (any ? 0 : 1000000);
}

// A parking task body (what ptb-transform writes for `if (i odd) return; __syncthreads(); ...`).
__global__ void park_body(int* out) {
  __shared__ int s[256];
  const unsigned t = threadIdx.x;
  s[t] = static_cast<int>(t) * 3 + 1;
  ptb::task_sync();
  if (t % 2) {
    ptb::task_exit();
    return;
  }
  const int v = s[(t + 2) % blockDim.x];
  ptb::task_sync();
  out[blockIdx.x * blockDim.x + t] = v;
  ptb::task_exit();
}

}  // namespace

int main(int argc, char** argv) {
  const char* names[] = {"one-site", "warp-sites", "lane-sites", "park"};
  const int blocks = 8, threads = 256, n = blocks * threads;
  int* d = nullptr;
  cudaMalloc(&d, n * sizeof(int));
  int h[n];
  int failed = 0;
  for (int c = 0; c < 4; ++c) {
    if (argc > 1 && std::strcmp(argv[1], names[c]) != 0) continue;
    cudaMemset(d, 0xff, n * sizeof(int));  // poisoned
    if (c < 3) probe<<<blocks, threads>>>(c, d); else park_body<<<blocks, threads>>>(d);
    const cudaError_t e = cudaDeviceSynchronize();
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    int wrong = 0;
    for (int i = 0; i < n; ++i) {
      const int t = i % threads;
      if (c == 3 && t % 2) continue;  // the threads that left write nothing
      const int expect = c < 3 ? ((t + 1) % threads) * 3 + 1 : ((t + 2) % threads) * 3 + 1;
      wrong += h[i] != expect;
    }
    std::printf("%-10s %s, %d wrong\n", names[c], e == cudaSuccess ? "ran" : cudaGetErrorString(e), wrong);
    failed += wrong != 0 || e != cudaSuccess;
  }
  cudaFree(d);
  std::printf("%s\n", failed ? "FAIL" : "PASS");
  return failed ? 1 : 0;
}

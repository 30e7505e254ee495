// Launch-configuration and argument expressions with side effects must be evaluated exactly once:
// K<<<next_grid(&calls), next_block(&bcalls), shmem(&scalls), pick_stream(&stcalls)>>>(p, n, k++).
#include "common.cuh"

static int next_grid(int* calls, int n) {
  ++*calls;
  return (n + 127) / 128;
}
static dim3 next_block(int* calls) {
  ++*calls;
  return dim3(128);
}
static size_t shmem_bytes(int* calls) {
  ++*calls;
  return 64;
}
static cudaStream_t pick_stream(int* calls, cudaStream_t s) {
  ++*calls;
  return s;
}

__global__ void stamp(int* out, int n, int v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = v + i;
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "launch_side_effects");
  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreate(&s));
  if (tg::bench_mode()) {
    int n = 1 << 26, calls = 0;
    tg::DevBuf<int> d(n);
    return tg::bench("launch_side_effects", [&] { stamp<<<next_grid(&calls, n), 128>>>(d, n, calls); });
  }
  int n = (int)tg::rand_int(1, 1000000);
  tg::DevBuf<int> d(n);
  int calls = 0, bcalls = 0, scalls = 0, stcalls = 0;
  int k = (int)tg::rand_int(0, 1000000);
  const int k0 = k;

  d.poison();
  stamp<<<next_grid(&calls, n), 256>>>(d, n, k++);
  tg::sync_check("stamp 1");
  tg::check(calls == 1, "grid expression evaluated %d times, want 1", calls);
  tg::check(k == k0 + 1, "argument k++ evaluated %d times, want 1", k - k0);
  {
    std::vector<int> want(n);
    for (int i = 0; i < n; ++i) want[i] = k0 + i;
    tg::compare_exact(d.download(), want, "stamp 1");
  }

  d.poison();
  stamp<<<next_grid(&calls, n), next_block(&bcalls), shmem_bytes(&scalls), pick_stream(&stcalls, s)>>>(d, n, ++k);
  CUDA_CHECK(cudaStreamSynchronize(s));
  tg::sync_check("stamp 2");
  tg::check(calls == 2 && bcalls == 1 && scalls == 1 && stcalls == 1,
            "config expressions evaluated grid %d, block %d, shmem %d, stream %d times (want 2, 1, 1, 1)", calls,
            bcalls, scalls, stcalls);
  tg::check(k == k0 + 2, "argument ++k evaluated %d times, want 1", k - k0 - 1);
  {
    std::vector<int> want(n);
    for (int i = 0; i < n; ++i) want[i] = k0 + 2 + i;
    tg::compare_exact(d.download(), want, "stamp 2");
  }
  CUDA_CHECK(cudaStreamDestroy(s));
  return tg::finish();
}

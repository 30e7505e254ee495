// Four streams at once: each runs a chain of three kernels on its own buffer, records an event, and a
// fourth-stream kernel combines all four after cudaStreamWaitEvent on the others' events. Kernels in
// different streams must really be in flight together: a 1-block kernel in stream 0 spins (bounded by
// %globaltimer, 1 s) until a kernel launched later in stream 1 sets a flag. Exact check.
#include "common.cuh"

__device__ __forceinline__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void wait_for_flag(const volatile int* flag, int* seen, unsigned long long timeout_ns) {
  if (threadIdx.x != 0) return;
  unsigned long long t0 = now_ns();
  while (*flag == 0 && now_ns() - t0 < timeout_ns) {
  }
  *seen = *flag;
}

__global__ void set_flag(int* flag, int v) {
  if (threadIdx.x == 0) {
    atomicExch(flag, v);
    __threadfence_system();
  }
}

__global__ void init_scaled(const int* in, int* b, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = in[i] * (k + 1);
}
__global__ void add_block_id(int* b, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) b[i] += (int)blockIdx.x;
}
__global__ void square_mod(int* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = (int)(((long long)b[i] * b[i]) % 1000003);
}
__global__ void combine(const int* b0, const int* b1, const int* b2, int* b3, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b3[i] = b0[i] + b1[i] - b2[i] + 2 * b3[i];
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "multi_stream_concurrent");
  cudaStream_t s[4];
  cudaEvent_t ev[4];
  for (int k = 0; k < 4; ++k) {
    CUDA_CHECK(cudaStreamCreateWithFlags(&s[k], cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&ev[k], cudaEventDisableTiming));
  }
  if (tg::bench_mode()) {
    int n = 1 << 24;
    tg::DevBuf<int> in(n), b[4] = {tg::DevBuf<int>(n), tg::DevBuf<int>(n), tg::DevBuf<int>(n), tg::DevBuf<int>(n)};
    in.fill_bytes(1);
    // TG_BENCH_STREAMS=1 (diagnosis only): the same 12 launches in one stream, to see how much of the
    // 4-stream time comes from the streams overlapping.
    const char* ns_env = getenv("TG_BENCH_STREAMS");
    const int ns = ns_env && atoi(ns_env) >= 1 && atoi(ns_env) <= 4 ? atoi(ns_env) : 4;
    return tg::bench("multi_stream_concurrent", [&] {
      CUDA_CHECK(cudaEventRecord(ev[0], 0));
      for (int k = 0; k < 4; ++k) CUDA_CHECK(cudaStreamWaitEvent(s[k], ev[0], 0));
      for (int k = 0; k < 4; ++k) {
        cudaStream_t sk = s[k % ns];
        init_scaled<<<(n + 255) / 256, 256, 0, sk>>>(in, b[k], n, k);
        add_block_id<<<132 * 4, 256, 0, sk>>>(b[k], n);
        square_mod<<<(n + 255) / 256, 256, 0, sk>>>(b[k], n);
        CUDA_CHECK(cudaEventRecord(ev[k], sk));
      }
      for (int k = 0; k < 4; ++k) CUDA_CHECK(cudaStreamWaitEvent(0, ev[k], 0));
    });
  }
  // 1. concurrency handshake (both kernels loaded first: a first launch may wait for running kernels)
  {
    tg::DevBuf<int> flag(1), seen(1);
    CUDA_CHECK(cudaMemset(flag, 0xFF, sizeof(int)));
    CUDA_CHECK(cudaDeviceSynchronize());  // the streams are non-blocking: the memset must be done first
    wait_for_flag<<<1, 32, 0, s[0]>>>(flag, seen, 1000000000ull);
    set_flag<<<1, 32, 0, s[1]>>>(flag, 1);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemset(flag, 0, sizeof(int)));
    CUDA_CHECK(cudaMemset(seen, 0, sizeof(int)));
    CUDA_CHECK(cudaDeviceSynchronize());
    int v = (int)tg::rand_int(2, 1000000);
    wait_for_flag<<<1, 32, 0, s[0]>>>(flag, seen, 1000000000ull);
    set_flag<<<1, 32, 0, s[1]>>>(flag, v);
    tg::sync_check("handshake");
    int got = seen.download()[0];
    tg::check(got == v, "the stream-0 kernel did not see the stream-1 kernel's flag within 1 s (saw %d): the two "
                        "kernels were not in flight at the same time", got);
  }
  // 2. four streams, chains, events
  int n = (int)tg::rand_int(1, 1000000);
  auto h = tg::random_ints<int>(n, -1000, 1000);
  tg::DevBuf<int> in(n);
  in.upload(h);
  tg::DevBuf<int> b[4] = {tg::DevBuf<int>(n), tg::DevBuf<int>(n), tg::DevBuf<int>(n), tg::DevBuf<int>(n)};
  for (auto& x : b) x.poison();
  CUDA_CHECK(cudaDeviceSynchronize());
  int g2[4];
  for (int k = 0; k < 4; ++k) {
    g2[k] = 1 + (int)tg::rand_int(0, 300);
    init_scaled<<<(n + 255) / 256, 256, 0, s[k]>>>(in, b[k], n, k);
    add_block_id<<<g2[k], 128, 0, s[k]>>>(b[k], n);
    square_mod<<<dim3((n + 127) / 128), dim3(128), 0, s[k]>>>(b[k], n);
    CUDA_CHECK(cudaEventRecord(ev[k], s[k]));
  }
  for (int k = 0; k < 3; ++k) CUDA_CHECK(cudaStreamWaitEvent(s[3], ev[k], 0));
  combine<<<(n + 255) / 256, 256, 0, s[3]>>>(b[0], b[1], b[2], b[3], n);
  CUDA_CHECK(cudaStreamSynchronize(s[3]));
  tg::sync_check("four streams");
  std::vector<int> want(n);
  for (int i = 0; i < n; ++i) {
    long long v[4];
    for (int k = 0; k < 4; ++k) {
      long long x = (long long)h[i] * (k + 1) + (i / 128) % g2[k];
      v[k] = (x * x) % 1000003;
    }
    want[i] = (int)(v[0] + v[1] - v[2] + 2 * v[3]);
  }
  tg::compare_exact(b[3].download(), want, "combined result");
  for (int k = 0; k < 4; ++k) {
    CUDA_CHECK(cudaEventDestroy(ev[k]));
    CUDA_CHECK(cudaStreamDestroy(s[k]));
  }
  return tg::finish();
}

// Issue 41 (the first twin launch's set-up): can the two largest steps of a device's set-up overlap when two
// host threads make them? Step A, the lazy load of a kernel's module (cudaFuncGetAttributes on a kernel not
// used yet: what the runtime's "module" step pays); step B, the pool's first page, by the runtime's own
// detail::grow_pool_locked on a device state of the probe's (cudaMalloc, memset, cudaHostRegister of a 4 KB
// page, its device pointer, a sync). One fresh process per measurement (a module loads once a process), after the program's own set-up
// (its context, an allocation and a copy, as sobel_once does before its first launch):
//   probe_setup_overlap seq    A, then B, on the calling thread
//   probe_setup_overlap par    B on a second thread while the calling thread does A
// Prints one line: mode, A us, B us, total us (the time until both are done). Run each mode several times,
// alternating (bench/runtime/README.md); lazy loading is CUDA's default (CUDA_MODULE_LOADING unset).
// Measured (H100, 2026-12-07, results/programs/2026-12-07-h100-setup-steps-906e149): step A took 15-25 us, not
// a module's load: big_kernel shares its module with warm_kernel, which the program's set-up already ran, so the
// probe times the page beside a short driver call; two threads were slower (403 us median in sequence, 759 us
// apart), and so was the runtime with the page on a second thread.
//   nvcc -std=c++17 -arch=sm_90 -O2 -I runtime/include bench/runtime/probe_setup_overlap.cu -o probe_setup_overlap
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include <ptb/ptb.cuh>

// A kernel with a body of some size (the module's load is what is timed, not its run; it never runs).
__global__ void big_kernel(float* out, int n) {
  float x[16];
#pragma unroll
  for (int k = 0; k < 16; ++k) x[k] = out[(threadIdx.x + k * 32) % n];
  for (int it = 0; it < n; ++it) {
#pragma unroll
    for (int k = 0; k < 16; ++k) x[k] = fmaf(x[k], x[(k + 1) % 16], 1.0f + k);
  }
  float s = 0;
#pragma unroll
  for (int k = 0; k < 16; ++k) s += x[k];
  out[threadIdx.x] = s;
}
__global__ void warm_kernel(float* p) { p[threadIdx.x] += 1.0f; }

using Clock = std::chrono::steady_clock;
static double us(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::micro>(b - a).count(); }

static bool step_a() {
  cudaFuncAttributes attr;
  return cudaFuncGetAttributes(&attr, big_kernel) == cudaSuccess;
}

int main(int argc, char** argv) {
  const bool par = argc > 1 && std::strcmp(argv[1], "par") == 0;
  // The program's own set-up before its first launch: context, buffers, a copy, a kernel of its own.
  float* buf = nullptr;
  static float host[1 << 16];
  if (cudaMalloc(&buf, sizeof host) != cudaSuccess) return 1;
  cudaMemcpy(buf, host, sizeof host, cudaMemcpyHostToDevice);
  warm_kernel<<<1, 32>>>(buf);
  cudaDeviceSynchronize();
  ptb::detail::DeviceState d;
  cudaStreamCreateWithFlags(&d.ctl, cudaStreamNonBlocking);
  bool ok_a = false, ok_b = false;
  Clock::time_point a0, a1, b0, b1;
  const Clock::time_point t0 = Clock::now();
  if (par) {
    std::thread tb([&] {
      cudaSetDevice(0);
      b0 = Clock::now();
      ok_b = ptb::detail::grow_pool_locked(d);
      b1 = Clock::now();
    });
    a0 = Clock::now();
    ok_a = step_a();
    a1 = Clock::now();
    tb.join();
  } else {
    a0 = Clock::now();
    ok_a = step_a();
    a1 = Clock::now();
    b0 = Clock::now();
    ok_b = ptb::detail::grow_pool_locked(d);
    b1 = Clock::now();
  }
  const Clock::time_point t1 = Clock::now();
  if (!ok_a || !ok_b) {
    std::printf("%s FAILED (A %d, B %d): %s\n", par ? "par" : "seq", ok_a, ok_b, cudaGetErrorString(cudaGetLastError()));
    return 1;
  }
  std::printf("%s A %.1f us B %.1f us total %.1f us\n", par ? "par" : "seq", us(a0, a1), us(b0, b1), us(t0, t1));
  return 0;
}

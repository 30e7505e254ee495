// A small launch checked exactly, shared by the runtime's GPU tests that need one (test_early_setup,
// test_link_devices): y = a * x + 1 in wrapping integer arithmetic (the CPU's reference is exact), with the
// transformed twin written as ptb-transform writes it, fresh random inputs, a poisoned output and a count of
// each block's runs. Include after <ptb/ptb.cuh> and common.cuh.
#pragma once

__global__ void scale_add(int n, unsigned a, const unsigned* x, unsigned* y, unsigned* seen) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x == 0) atomicAdd(&seen[blockIdx.x], 1u);
  if (i < n) y[i] = a * x[i] + 1u;
}
static __device__ __forceinline__ void scale_add__ptb_task(const uint3 blockIdx, const dim3 gridDim, int n, unsigned a,
                                                           const unsigned* x, unsigned* y, unsigned* seen) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x == 0) atomicAdd(&seen[blockIdx.x], 1u);
  if (i < n) y[i] = a * x[i] + 1u;
}
__global__ void scale_add__ptb(int n, unsigned a, const unsigned* x, unsigned* y, unsigned* seen,
                               const ::ptb::Launch ptb_launch) {
  ::ptb::run_tasks(ptb_launch, [&](const uint3 ptb_block, const dim3 ptb_grid) {
    scale_add__ptb_task(ptb_block, ptb_grid, n, a, x, y, seen);
  });
}

// The inputs and outputs on the current device.
struct ScaleAdd {
  static constexpr int kThreads = 256;
  int n = 1 << 20, blocks = ((1 << 20) + kThreads - 1) / kThreads;
  std::vector<unsigned> hx;
  unsigned *x = nullptr, *y = nullptr, *seen = nullptr;

  ScaleAdd() : hx(n) {
    for (unsigned& v : hx) v = rnd(0, 0xffffffffu);
    CK(cudaMalloc(&x, n * sizeof(unsigned)));
    CK(cudaMalloc(&y, n * sizeof(unsigned)));
    CK(cudaMalloc(&seen, blocks * sizeof(unsigned)));
    CK(cudaMemcpy(x, hx.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
  }
  ~ScaleAdd() {
    CK(cudaFree(x));
    CK(cudaFree(y));
    CK(cudaFree(seen));
  }
  ScaleAdd(const ScaleAdd&) = delete;
  ScaleAdd& operator=(const ScaleAdd&) = delete;

  // One launch through ptb::launch with a fresh factor, checked: every output and every block once. `what`
  // names it in a failure.
  void launch_and_check(const char* what) {
    const unsigned a = rnd(3, 0xffffffffu) | 1u;
    CK(cudaMemset(y, 0xa5, n * sizeof(unsigned))); // poisoned
    CK(cudaMemset(seen, 0, blocks * sizeof(unsigned)));
    ptb::launch(ptb::LaunchConfig(dim3(blocks), dim3(kThreads)), scale_add, scale_add__ptb, n, a,
                static_cast<const unsigned*>(x), y, seen);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<unsigned> hy(n), hs(blocks);
    CK(cudaMemcpy(hy.data(), y, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hs.data(), seen, blocks * sizeof(unsigned), cudaMemcpyDeviceToHost));
    int bad = 0, once = 0;
    for (int i = 0; i < n; ++i) bad += hy[i] != a * hx[i] + 1u;
    for (int b = 0; b < blocks; ++b) once += hs[b] == 1;
    EXPECT(bad == 0, "%s: %d wrong outputs", what, bad);
    EXPECT(once == blocks, "%s: %d of %d blocks ran once", what, once, blocks);
  }
};

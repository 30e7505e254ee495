// Kernels and a device function declared in a namespace and defined outside it (`__global__ void
// lib::inner::k(...) {...}`), a kernel template too: the twins are generated in the namespace reopened
// after each definition. Integer arithmetic: exact check against the CPU.
#include "common.cuh"

namespace lib {
__device__ int block_base();
namespace inner {
__global__ void add_base(int* p, int n);
}
template <typename T>
__global__ void scale(T* p, int n, T f);
}  // namespace lib

__device__ int lib::block_base() { return blockIdx.x * blockDim.x; }

__global__ void lib::inner::add_base(int* p, int n) {
  int i = block_base() + threadIdx.x;
  if (i < n) p[i] += (int)blockIdx.x;
}

template <typename T>
__global__ void lib::scale(T* p, int n, T f) {
  int i = block_base() + threadIdx.x;
  if (i < n) p[i] *= f;
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "out_of_line_namespace");
  int n = (int)tg::rand_int(1, 1000000);
  auto h = tg::random_ints<int>(n, -1000, 1000);
  tg::DevBuf<int> d(n);
  d.upload(h);
  int f = (int)tg::rand_int(-5, 5);
  lib::inner::add_base<<<(n + 127) / 128, 128>>>(d, n);
  lib::scale<int><<<(n + 255) / 256, 256>>>(d, n, f);
  tg::sync_check("out-of-line kernels");
  std::vector<int> want(n);
  for (int i = 0; i < n; ++i) want[i] = (h[i] + i / 128) * f;
  tg::compare_exact(d.download(), want, "out-of-line kernels");
  return tg::finish();
}

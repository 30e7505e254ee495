// A kernel whose body has a lambda without a capture default that reads threadIdx (or blockIdx, blockDim,
// gridDim) is refused with a located error: in the slot function those names are the function's
// parameters, which a capture-less lambda cannot use. Nothing is written.
// RUN: rm -f %t.cu
// RUN: not %fuse-kernels %s --kernel lam=64 --kernel other=32 --ratio 1:1 -o %t.cu 2>&1 | FileCheck %s
// RUN: not test -e %t.cu
// CHECK: lambda-thread-index.cu:[[@LINE+3]]:12: error: kernel 'lam' cannot be fused: it has a lambda without a capture default that reads a built-in index variable
// CHECK: nothing written
__global__ void lam(int *p) {
  auto f = [](int x) { return x + (int)threadIdx.x; };
  p[blockIdx.x * blockDim.x + threadIdx.x] = f(1);
}
__global__ void other(int *p) { p[blockIdx.x * blockDim.x + threadIdx.x] = 3; }

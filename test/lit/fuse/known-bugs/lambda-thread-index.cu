// BUG: a kernel whose body has a lambda without captures that reads threadIdx (or blockIdx, blockDim,
// gridDim) is accepted, but in the slot function those names are the function's parameters, which a
// capture-less lambda cannot use: nvcc rejects the output ("an enclosing-function local variable cannot be
// referenced in a lambda body unless it is in the capture list"). ptb-transform refuses such kernels
// (test/lit/rewrite/refused.cu, lambda_no_capture). Expected: the output compiles, or the kernel is refused
// with a located error (then turn this test into a refusal check).
// REQUIRES: nvcc
// RUN: %fuse-kernels %s --kernel lam=64 --kernel other=32 --ratio 1:1 -o %t.cu 2> /dev/null
// RUN: %nvcc -c %t.cu -o %t.o
__global__ void lam(int *p) {
  auto f = [](int x) { return x + (int)threadIdx.x; };
  p[blockIdx.x * blockDim.x + threadIdx.x] = f(1);
}
__global__ void other(int *p) { p[blockIdx.x * blockDim.x + threadIdx.x] = 3; }

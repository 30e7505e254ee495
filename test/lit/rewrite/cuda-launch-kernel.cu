// cudaLaunchKernel launches of a transformed kernel go to ::ptb::launch_kernel_args with both kernels;
// the grid, block, argument array, shared memory and stream stay as written, and the result is still a
// cudaError_t. Other launch APIs are left alone with a warning.
// RUN: %ptb-transform %s -o %t.cu 2> %t.err
// RUN: FileCheck %s --check-prefix=DIAG < %t.err
// RUN: %strip-directives %t.cu | FileCheck %s
// RUN: %if nvcc %{ %nvcc -c %t.cu -o %t.o %}
#include <cuda_runtime.h>

template <typename T>
__global__ void store(T *p, T v) { p[blockIdx.x * blockDim.x + threadIdx.x] = v; }
__global__ void plain(int *p) { p[blockIdx.x] = 1; }

cudaError_t run(float *p, int *q, cudaStream_t s) {
  float v = 2.0f;
  void *args[] = {&p, &v};
  cudaError_t e = cudaLaunchKernel((const void *)store<float>, dim3(4), dim3(64), args, 0, s);
  if (e != cudaSuccess) return e;
  void *qargs[] = {&q};
  e = cudaLaunchKernel(reinterpret_cast<void *>(&plain), 2, 1, qargs);
  cudaLaunchConfig_t config = {};
  config.gridDim = 1;
  config.blockDim = 1;
  cudaLaunchKernelEx(&config, plain, q);
  return e;
}

// DIAG: cuda-launch-kernel.cu:24:3: warning: cudaLaunchKernelEx launch of 'plain' is not rewritten: it still launches the original kernel
// CHECK: cudaError_t e = ::ptb::launch_kernel_args(store<float>, store__ptb<float>, dim3(4), dim3(64), args, 0, s);
// CHECK: e = ::ptb::launch_kernel_args(plain, plain__ptb, 2, 1, qargs, 0, 0);
// CHECK: cudaLaunchKernelEx(&config, plain, q);

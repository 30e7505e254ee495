// nvcc's headers give host code min/max overloads of every mix of signedness (crt/math_functions.hpp);
// clang's CUDA headers make them device-only ("no matching function for call to 'max'"). The front end's
// forced include supplies host ones.
// RUN: %ptb-transform %s -o %t.cu
// RUN: %strip-directives %t.cu | FileCheck %s
// RUN: %if nvcc %{ %nvcc -c %s -o %t.orig.o %}
// RUN: %if nvcc %{ %nvcc -c %t.cu -o %t.o %}

__global__ void k(int *p, int n) { p[blockIdx.x] = min(n, 4) + max(1u, 2u); }

void run(int *d, unsigned n, long m, size_t bytes) {
  int blocks = max(1, n / 32);
  int threads = min(256, n);
  long l = max(m, 1L) + min(2L, m);
  size_t s = max(bytes, size_t(1));
  float f = max(1.f, 2.f) + min(1.0, 2.f);
  k<<<blocks, threads>>>(d, int(l + s + f));
}

// CHECK: int blocks = max(1, n / 32);
// CHECK: k__ptb_launch(::ptb::LaunchConfig(blocks, threads), d, int(l + s + f));

// A .cu compiled with `-Xcompiler -fopenmp` that includes <omp.h>: nvcc's host compiler (GCC) has the
// header; Debian's clang 19 has none without libomp-19-dev, and GCC's own uses an attribute clang rejects.
// The front end serves an omp.h that wraps GCC's; -fopenmp reaches the parse (_OPENMP, the pragmas).
// RUN: %ptb-transform %s -o %t.cu -- -Xcompiler -fopenmp
// RUN: %strip-directives %t.cu | FileCheck %s
// RUN: %ptb-transform %s -o %t.noflag.cu
// RUN: %if nvcc %{ %nvcc -Xcompiler -fopenmp -c %s -o %t.orig.o %}
// RUN: %if nvcc %{ %nvcc -Xcompiler -fopenmp -c %t.cu -o %t.o %}
#include <omp.h>

#ifndef _OPENMP
#define PTB_NO_OPENMP 1
#endif

__global__ void k(int *p) { p[blockIdx.x] = 1; }

void run(int *d, int *host) {
  int t = omp_get_max_threads();
#pragma omp parallel for
  for (int i = 0; i < 4; ++i) host[i] = t + omp_get_thread_num();
  k<<<2, 32>>>(d);
}

// CHECK: int t = omp_get_max_threads();
// CHECK: k__ptb_launch(::ptb::LaunchConfig(2, 32), d);

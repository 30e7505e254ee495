// nvcc's headers make <time.h>, <string.h> and <stdlib.h> visible to host code (crt/common_functions.h),
// so `time(0)` or `memcpy` compile without an include; clang says "use of undeclared identifier". The
// front end's forced include brings the same headers (not <stdio.h>: nvcc has no printf there either).
// RUN: %ptb-transform %s -o %t.cu
// RUN: %strip-directives %t.cu | FileCheck %s
// RUN: %if nvcc %{ %nvcc -c %s -o %t.orig.o %}
// RUN: %if nvcc %{ %nvcc -c %t.cu -o %t.o %}

__global__ void k(int *p, int seed) { p[blockIdx.x] = seed; }

void run(int *d) {
  srand(time(0));
  int seed = rand();
  char buf[4];
  memcpy(buf, &seed, sizeof buf);
  seed += buf[0];
  k<<<2, 32>>>(d, seed);
}

// CHECK: srand(time(0));
// CHECK: k__ptb_launch(::ptb::LaunchConfig(2, 32), d, seed);

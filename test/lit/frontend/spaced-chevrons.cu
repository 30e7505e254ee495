// nvcc takes a launch written with spaced chevrons (`<< <` ... `>> >`); clang alone says "expected
// expression". The text clang reads is normalized (same length, same lines): `<<<` and `>>>` followed by
// what was between, comments included. `operator<< <T>` is not a launch and stays as written.
// RUN: %ptb-transform %s -o %t.cu
// RUN: %strip-directives %t.cu | FileCheck %s
// RUN: %if nvcc %{ %nvcc -c %s -o %t.orig.o %}
// RUN: %if nvcc %{ %nvcc -c %t.cu -o %t.o %}
#include <ostream>

__global__ void k(int *p) { p[blockIdx.x] = 1; }
__global__ void left(int *p) { __shared__ int s; asm("mov.u32 %0, %%smid;" : "=r"(s)); p[0] = s; }

template <typename T> struct Box { T v; };
template <typename T> std::ostream &operator<<(std::ostream &os, const Box<T> &b);
template <typename T> struct Printer {
  friend std::ostream &operator<< <T>(std::ostream &os, const Box<T> &b);
};

void run(int *d) {
  k << < 2, 32 >> > (d);
  k<<<2, 32>> >(d);
  k <</* grid */ <1, 1>>/* end */>(d);
  left << < 1, 1 >> > (d);
}

// CHECK:      template <typename T> std::ostream &operator<<(std::ostream &os, const Box<T> &b);
// CHECK:      friend std::ostream &operator<< <T>(std::ostream &os, const Box<T> &b);
// CHECK:      k__ptb_launch (::ptb::LaunchConfig(  2, 32 ), d);
// CHECK-NEXT: k__ptb_launch(::ptb::LaunchConfig(2, 32), d);
// CHECK-NEXT: k__ptb_launch (::ptb::LaunchConfig(/* grid */ 1, 1), d);
// CHECK-NEXT: left <<<  1, 1 >>>  (d);

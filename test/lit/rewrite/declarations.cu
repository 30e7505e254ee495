// A kernel declared (with default arguments) before the code that launches it and defined after: the
// launcher is declared after the first declaration, with the defaults, and defined after the twin.
// RUN: %ptb-transform %s -o %t.cu
// RUN: %strip-directives %t.cu | FileCheck %s
// RUN: %if nvcc %{ %nvcc -c %t.cu -o %t.o %}

__global__ void fill(float *p, float v = 1.0f, int n = 256);

void run(float *p) { fill<<<1, 256>>>(p); }

__global__ void fill(float *p, float v, int n) {
  if (threadIdx.x < n) p[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

// CHECK:      __global__ void fill(float *p, float v = 1.0f, int n = 256);
// CHECK-NEXT: static inline void fill__ptb_launch(const ::ptb::LaunchConfig& ptb_config, float *p, float v = 1.0f, int n = 256);
// CHECK:      void run(float *p) { fill__ptb_launch(::ptb::LaunchConfig(1, 256), p); }
// CHECK:      static inline void fill__ptb_launch(const ::ptb::LaunchConfig& ptb_config, float *p, float v, int n) {

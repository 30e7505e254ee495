// The text inventory of a small file: one block per kernel, what it uses and where it is launched.
// RUN: %ptb-transform --list-kernels %s | FileCheck %s

#define GLOBAL_ID (blockIdx.x * blockDim.x + threadIdx.x)

__global__ void fill(float *p, float v, int n) {
  for (int i = GLOBAL_ID; i < n; i += gridDim.x * blockDim.x) p[i] = v;
}

int main() { fill<<<4, 128>>>(nullptr, 1.0f, 0); }

// CHECK:      {{.*}}text-format.cu: 1 kernel
// CHECK:      fill  ({{.*}}text-format.cu:6:17)
// CHECK-NEXT:   parameters: float * p, float v, int n
// CHECK-NEXT:   blockIdx: macro GLOBAL_ID
// CHECK-NEXT:   gridDim: direct
// CHECK-NEXT:   threadIdx: macro GLOBAL_ID
// CHECK-NEXT:   blockDim: direct; macro GLOBAL_ID
// CHECK-NEXT:   launch: {{.*}}text-format.cu:10:14 <<<>>> in main

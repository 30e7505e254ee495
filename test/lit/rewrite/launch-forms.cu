// Every <<<>>> form: dim3 and integer shapes, shared memory and stream given or not, a grid expression
// with a side effect (kept in place, so evaluated once), a launch inside a macro argument, a multi-line
// launch, a launch with no arguments, and a namespace-qualified kernel.
// RUN: %ptb-transform %s -o %t.cu
// RUN: %strip-directives %t.cu | FileCheck %s
// RUN: %if nvcc %{ %nvcc -c %t.cu -o %t.o %}
#include <cuda_runtime.h>

#define CHECK(call) do { call; if (cudaGetLastError() != cudaSuccess) return -1; } while (0)

namespace app {
__global__ void touch(int *p) { p[blockIdx.x + blockIdx.y * gridDim.x] = 1; }
__global__ void nothing() {}
} // namespace app

static unsigned next_grid(int *calls) { return ++*calls; }

int run(int *p, cudaStream_t s) {
  int calls = 0;
  app::touch<<<4, 32>>>(p);
  app::touch<<<dim3(4, 2), dim3(32), 0, s>>>(p);
  app::touch<<<dim3(2, 2, 1), 64, 128>>>(p);
  app::touch<<<next_grid(&calls), 32, 0, s>>>(p);
  CHECK((app::touch<<<4, 32>>>(p)));
  app::touch<<<
      4,
      32>>>(
      p);
  app::nothing<<<1, 1>>>();
  return calls;
}

// CHECK:      app::touch__ptb_launch(::ptb::LaunchConfig(4, 32), p);
// CHECK-NEXT: app::touch__ptb_launch(::ptb::LaunchConfig(dim3(4, 2), dim3(32), 0, s), p);
// CHECK-NEXT: app::touch__ptb_launch(::ptb::LaunchConfig(dim3(2, 2, 1), 64, 128), p);
// CHECK-NEXT: app::touch__ptb_launch(::ptb::LaunchConfig(next_grid(&calls), 32, 0, s), p);
// CHECK-NEXT: CHECK((app::touch__ptb_launch(::ptb::LaunchConfig(4, 32), p)));
// CHECK-NEXT: app::touch__ptb_launch(::ptb::LaunchConfig(
// CHECK-NEXT:     4,
// CHECK-NEXT:     32), 
// CHECK-NEXT:     p);
// CHECK-NEXT: app::nothing__ptb_launch(::ptb::LaunchConfig(1, 1));

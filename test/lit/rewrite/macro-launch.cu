// A launch inside a macro argument is rewritten in place; a launch written inside a macro's definition
// cannot be, and is reported (the macro may be used elsewhere); --strict makes that an error.
// RUN: %ptb-transform %s -o %t.cu 2> %t.err
// RUN: FileCheck %s --check-prefix=DIAG < %t.err
// RUN: %strip-directives %t.cu | FileCheck %s
// RUN: %if nvcc %{ %nvcc -c %t.cu -o %t.o %}
// RUN: not %ptb-transform --strict %s -o %t.strict.cu 2>&1 | FileCheck %s --check-prefix=STRICT
#include <cstdio>
#define CUDA_CHECK(expr) do { expr; cudaError_t e = cudaGetLastError(); if (e) std::printf("%d\n", e); } while (0)
#define LAUNCH_ZERO(p) zero<<<1, 32>>>(p)
#define TWICE(x) x; x

__global__ void zero(int *p) { p[blockIdx.x * 32 + threadIdx.x] = 0; }

void run(int *p) {
  CUDA_CHECK((zero<<<1, 32>>>(p)));
  CUDA_CHECK(TWICE((zero<<<2, 32>>>(p))));
  LAUNCH_ZERO(p);
}

// DIAG: macro-launch.cu:18:3: warning: launch of 'zero' is written inside the definition of macro 'LAUNCH_ZERO' and is not rewritten: it still launches the original kernel
// CHECK: CUDA_CHECK((zero__ptb_launch(::ptb::LaunchConfig(1, 32), p)));
// CHECK-NEXT: CUDA_CHECK(TWICE((zero__ptb_launch(::ptb::LaunchConfig(2, 32), p))));
// CHECK-NEXT: LAUNCH_ZERO(p);
// STRICT: error: launch of 'zero' is written inside the definition of macro 'LAUNCH_ZERO'
// STRICT: nothing written

// ptb-transform clones member functions, constructors and operators that read blockIdx/gridDim; a fusion
// slot does not copy them. A kernel that constructs such an object (no call by name the slot scan would
// see) or calls such an operator is refused with a located error, nothing written.
// RUN: rm -f %t.out
// RUN: not %fuse-kernels %s --kernel constructs=32 --kernel ok=32 --ratio 1:1 -o %t.out 2>&1 | FileCheck %s --check-prefix=CTOR
// RUN: not test -e %t.out
// RUN: not %fuse-kernels %s --kernel adds=32 --kernel ok=32 --ratio 1:1 -o %t.out 2>&1 | FileCheck %s --check-prefix=OP
// RUN: not test -e %t.out

struct Place {
  int base;
  __device__ Place(int n) : base(blockIdx.x * n) {}
};
struct Num {
  int v;
  __device__ Num operator+(Num o) const { return {v + o.v + (int)gridDim.x}; }
};

__global__ void ok(float *p) { p[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f; }
__global__ void constructs(int *p) {
  Place at(32);
  p[at.base + threadIdx.x] = 1;
}
// CTOR: {{.*}}members-refused.cu:[[# @LINE - 3]]:{{[0-9]+}}: error: kernel 'constructs' cannot be fused: it calls 'Place::Place', which reads blockIdx/gridDim, and member functions, constructors and operators are not copied for a slot
__global__ void adds(Num *p) { p[threadIdx.x] = p[0] + p[1]; }
// OP: {{.*}}members-refused.cu:[[# @LINE - 1]]:{{[0-9]+}}: error: kernel 'adds' cannot be fused: it calls 'Num::operator+', which reads blockIdx/gridDim, and member functions, constructors and operators are not copied for a slot

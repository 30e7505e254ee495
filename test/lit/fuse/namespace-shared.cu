// Regression test (fixed): a namespace-scope __shared__ array used through its qualified name (data::buf) is "shadowed" by a
// per-slot `__shared__ int buf[64];` at the top of the slot body, but the body still names data::buf, so
// every slot of the fused block uses the one block-wide array (slots race on it; nvcc warns that the
// shadow is never referenced), while the feasibility check counts a copy per slot. Expected: the slot body
// uses a per-slot copy (qualified references rewritten too), or the kernel is refused with an error.
// RUN: %fuse-kernels %s --kernel qual=64 --kernel other=32 --ratio 2:1 -o %t.cu 2> /dev/null
// RUN: %strip-directives %t.cu | FileCheck %s
namespace data {
__shared__ int buf[64];
}
__global__ void qual(int *p) {
  data::buf[threadIdx.x % 64] = threadIdx.x;
  __syncthreads();
  p[threadIdx.x] = data::buf[(threadIdx.x + 1) % 64];
}
__global__ void other(int *p) { p[blockIdx.x * blockDim.x + threadIdx.x] = 3; }
// CHECK:     void qual__slot(
// CHECK-NOT: data::buf
// CHECK:     // Fused kernel

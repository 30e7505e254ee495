// Kernels in an unnamed namespace (a common way to keep a file's kernels private; bench/colocate's BE
// kernels are written so): the fused kernel and its launcher spell them through the enclosing namespace
// (`outer::k__slot`, `outer::k<<<...>>>`; a member of an unnamed namespace is found there), never as
// "(anonymous namespace)", which only the comments and messages keep. Before 2026-11-24 the output did not compile. A
// file-scope __shared__ array in the unnamed namespace gets its slot copy the same way.
// RUN: %fuse-kernels %s --kernel a=32 --kernel b=64 --ratio 1:1 -o %t.cu 2> %t.log
// RUN: FileCheck %s --check-prefix=LOG < %t.log
// RUN: %strip-directives %t.cu | FileCheck %s
// RUN: %if nvcc %{ %nvcc -c %t.cu -o %t.o %}

namespace {
__global__ void top(float *p) { p[threadIdx.x] = 1.0f; }
}  // namespace

namespace outer {
namespace {
__shared__ float tile[64];
__global__ void a(float *p) { p[blockIdx.x * blockDim.x + threadIdx.x] = 0.0f; }
__global__ void b(float *p, float v) {
  tile[threadIdx.x] = v;
  __syncthreads();
  p[blockIdx.x * blockDim.x + threadIdx.x] = tile[63 - threadIdx.x];
}
}  // namespace
}  // namespace outer

// LOG: note: a__b__fused: ratio 1:1, 96 threads, 2 slots
// CHECK:      ::outer::ptb_slot_tile<PtbBar>[threadIdx.x] = v;
// CHECK:      // Fused kernel a__b__fused: outer::(anonymous namespace)::a x1 (32x1x1) + outer::(anonymous namespace)::b x1 (64x1x1), 96 threads in 2 slots
// CHECK:        outer::a__slot<1, 32>(
// CHECK:        outer::b__slot<2, 64>(
// CHECK:        outer::a<<<ptb_config0.grid, ptb_config0.block, ptb_config0.shmem, ptb_config0.stream>>>(k0_p);
// CHECK-NEXT:   outer::b<<<ptb_config1.grid, ptb_config1.block, ptb_config1.shmem, ptb_config1.stream>>>(k1_p, k1_v);

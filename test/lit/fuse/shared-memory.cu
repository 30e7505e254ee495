// Shared memory per slot: a static __shared__ array in the body stays (the slot function is a template
// on the barrier id, so each slot has its own); extern __shared__ in the body becomes a pointer to the
// slot's part of the dynamic shared memory; a file-scope extern __shared__ array the kernel uses is
// shadowed by such a pointer at the top of the slot body, a file-scope static one by a per-slot copy.
// The notes report the fused block's static (variables + bookkeeping) and dynamic shared memory.
// RUN: %fuse-kernels %s --kernel local=128,512 --kernel global=64,256 --ratio 1:2 -o %t.cu 2> %t.err
// RUN: %strip-directives %t.cu | FileCheck %s
// RUN: FileCheck %s --check-prefix=NOTE < %t.err
// RUN: %if nvcc %{ %nvcc -c %t.cu -o %t.o %}

extern __shared__ float g_dyn[];
__shared__ int g_stat[64];

__global__ void local(float *p) {
  __shared__ float tile[128];
  extern __shared__ float s[];
  tile[threadIdx.x] = p[threadIdx.x];
  s[threadIdx.x] = tile[threadIdx.x];
  __syncthreads();
  p[threadIdx.x] = s[127 - threadIdx.x];
}

__global__ void global(float *p) {
  g_stat[threadIdx.x % 64] = threadIdx.x;
  g_dyn[threadIdx.x] = p[threadIdx.x];
  __syncthreads();
  p[threadIdx.x] = g_dyn[63 - threadIdx.x] + g_stat[threadIdx.x % 64];
}

// The originals are untouched.
// CHECK:      extern __shared__ float g_dyn[];
// CHECK-NEXT: __shared__ int g_stat[64];
// CHECK:      template <unsigned PtbBar> __shared__ int ptb_slot_g_stat[64];
// CHECK:      __global__ void local(float *p) {
// CHECK-NEXT:   __shared__ float tile[128];
// CHECK-NEXT:   extern __shared__ float s[];

// CHECK:      void local__slot(
// CHECK-NEXT: #line
// CHECK-NEXT: {
// CHECK-NEXT:   __shared__ float tile[128];
// CHECK-NEXT:   float* const s = reinterpret_cast<float*>(ptb_dyn_shared);
// CHECK-NEXT:   tile[threadIdx.x] = p[threadIdx.x];
// CHECK-NEXT:   s[threadIdx.x] = tile[threadIdx.x];

// CHECK:      __global__ void global(float *p) {
// CHECK-NEXT:   g_stat[threadIdx.x % 64] = threadIdx.x;
// CHECK:      void global__slot(
// CHECK-NEXT: #line
// The order of the two shadows is not part of the contract.
// CHECK-DAG:  float* const ptb_slot_g_dyn = reinterpret_cast<float*>(ptb_dyn_shared);
// CHECK:        ::ptb_slot_g_stat<PtbBar>[threadIdx.x % 64] = threadIdx.x;
// CHECK-NEXT:   ptb_slot_g_dyn[threadIdx.x] = p[threadIdx.x];
// CHECK-NEXT:   ::ptb::bar_sync<PtbBar, PtbThreads>();

// CHECK:      __global__ void __launch_bounds__(256) local__global__fused(
// CHECK:        local__slot<1, 128>({{.*}}, ptb_dyn_ + ptb_layout.offset[0], k0_p);
// CHECK:        global__slot<2, 64>({{.*}}, ptb_dyn_ + ptb_layout.offset[1], k1_p);
// CHECK:        global__slot<3, 64>({{.*}}, ptb_dyn_ + ptb_layout.offset[2], k1_p);

// 3 slots x 128 B bookkeeping + 512 B (tile) + 2 x 256 B (g_stat); dynamic 512 + 2 x 256.
// NOTE: note: local__global__fused: ratio 1:2, 256 threads, 3 slots; shared memory per block: 1408 B static (slots' variables and bookkeeping) + 1024 B dynamic

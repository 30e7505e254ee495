// In a slot, __syncthreads() and its reducing forms run on the slot's named barrier over the slot's
// threads only: bar_sync / bar_red_popc / bar_red_and / bar_red_or<PtbBar, PtbThreads>. The original
// kernel keeps its __syncthreads*; a kernel with barriers keeps the barrier between its tasks.
// RUN: %fuse-kernels %s --kernel red=64 --kernel inc=32 --ratio 2:1 -o %t.cu 2> /dev/null
// RUN: %strip-directives %t.cu | FileCheck %s
// RUN: %if nvcc %{ %nvcc -c %t.cu -o %t.o %}

__global__ void red(const int *in, int *out) {
  int v = in[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  int c = __syncthreads_count(v > 0);
  int a = __syncthreads_and(v > 0);
  int o = __syncthreads_or(v > 0);
  if (threadIdx.x == 0) out[blockIdx.x] = c + a + o;
}

__global__ void inc(float *p) { p[blockIdx.x * blockDim.x + threadIdx.x] += 1.0f; }

// CHECK:      __global__ void red(const int *in, int *out) {
// CHECK-NEXT:   int v = in[blockIdx.x * blockDim.x + threadIdx.x];
// CHECK-NEXT:   __syncthreads();
// CHECK-NEXT:   int c = __syncthreads_count(v > 0);
// CHECK-NEXT:   int a = __syncthreads_and(v > 0);
// CHECK-NEXT:   int o = __syncthreads_or(v > 0);
// CHECK:      void red__slot(
// CHECK-NEXT: #line
// CHECK-NEXT: {
// CHECK-NEXT:   int v = in[blockIdx.x * blockDim.x + threadIdx.x];
// CHECK-NEXT:   ::ptb::bar_sync<PtbBar, PtbThreads>();
// CHECK-NEXT:   int c = ::ptb::bar_red_popc<PtbBar, PtbThreads>(v > 0);
// CHECK-NEXT:   int a = ::ptb::bar_red_and<PtbBar, PtbThreads>(v > 0);
// CHECK-NEXT:   int o = ::ptb::bar_red_or<PtbBar, PtbThreads>(v > 0);
// CHECK-NEXT:   if (threadIdx.x == 0) out[blockIdx.x] = c + a + o;
// CHECK-NEXT: }
// CHECK-NOT:  __syncthreads

// Each slot its own barrier id and thread count; red's slots keep the barrier between tasks.
// CHECK:      __global__ void __launch_bounds__(160) red__inc__fused(
// CHECK:        ::ptb::run_slot_tasks<::ptb::TaskSync::block, 1, 64>(ptb_launch0, ptb_slot_[0], ptb_t, blockIdx.x * 2u + 0u,
// CHECK-NEXT:     red__slot<1, 64>(
// CHECK:        ::ptb::run_slot_tasks<::ptb::TaskSync::block, 2, 64>(ptb_launch0, ptb_slot_[1], ptb_t - 64u, blockIdx.x * 2u + 1u,
// CHECK-NEXT:     red__slot<2, 64>(
// CHECK:        ::ptb::run_slot_tasks<::ptb::TaskSync::none, 3, 32>(ptb_launch1, ptb_slot_[2], ptb_t - 128u, blockIdx.x * 1u + 0u,
// CHECK-NEXT:     inc__slot<3, 32>(

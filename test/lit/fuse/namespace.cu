// A kernel in a namespace, named by its plain or its qualified name: its slot function is declared in
// the same namespace, the fused kernel (at file scope) calls ns::inner::k__slot and its launcher falls
// back to ns::inner::k<<<...>>>; parameter types are fully qualified in the fused kernel.
// RUN: %fuse-kernels %s --kernel flat=32 --kernel ns::inner::k=64 --ratio 1:1 -o %t.cu 2> /dev/null
// RUN: %strip-directives %t.cu | FileCheck %s
// RUN: %fuse-kernels %s --kernel flat=32 --kernel k=64 --ratio 1:1 -o %t.plain.cu 2> /dev/null
// RUN: cmp %t.cu %t.plain.cu
// RUN: %if nvcc %{ %nvcc -c %t.cu -o %t.o %}

__global__ void flat(float *p) { p[blockIdx.x * blockDim.x + threadIdx.x] = 0.0f; }

namespace ns {
struct Span {
  float *p;
  int n;
};
namespace inner {
__global__ void k(Span s, float v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < s.n) s.p[i] = v;
}
} // namespace inner
} // namespace ns

// CHECK:      namespace inner {
// CHECK-NEXT: __global__ void k(Span s, float v) {
// CHECK:      // Fusion slot of ns::inner::k:
// CHECK:      static __device__ __forceinline__ void k__slot({{.*}}, unsigned char* const ptb_dyn_shared, Span s, float v)
// CHECK:      } // namespace inner
// CHECK-NEXT: } // namespace ns
// CHECK:      // Fused kernel flat__k__fused: flat x1 (32x1x1) + ns::inner::k x1 (64x1x1), 96 threads in 2 slots
// CHECK-NEXT: __global__ void __launch_bounds__(96) flat__k__fused(float * k0_p, ns::Span k1_s, float k1_v,
// CHECK:        ns::inner::k__slot<2, 64>(ptb_block, ptb_grid, ::ptb::slot_thread_index(ptb_t - 32u, 64u, 1u), dim3(64u, 1u, 1u), ptb_dyn_ + ptb_layout.offset[1], k1_s, k1_v);
// CHECK:        flat<<<ptb_config0.grid, ptb_config0.block, ptb_config0.shmem, ptb_config0.stream>>>(k0_p);
// CHECK-NEXT:   ns::inner::k<<<ptb_config1.grid, ptb_config1.block, ptb_config1.shmem, ptb_config1.stream>>>(k1_s, k1_v);

// 2-D and 3-D blocks: each slot gets its own threadIdx from its linear thread number and the kernel's
// block shape (slot_thread_index(local, X, Y)), and its blockDim is that shape.
// RUN: %fuse-kernels %s --kernel st=32x8 --kernel vol=8x4x4 --ratio 1:2 -o %t.cu 2> /dev/null
// RUN: %strip-directives %t.cu | FileCheck %s
// RUN: %if nvcc %{ %nvcc -c %t.cu -o %t.o %}

__global__ void st(float *p, int w) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  p[y * w + x] += 1.0f;
}

__global__ void vol(float *p) {
  unsigned t = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  p[blockIdx.x * blockDim.x * blockDim.y * blockDim.z + t] *= 2.0f;
}

// CHECK:      // Fused kernel st__vol__fused: st x1 (32x8x1) + vol x2 (8x4x4), 512 threads in 3 slots
// CHECK-NEXT: __global__ void __launch_bounds__(512) st__vol__fused(
// CHECK:        if (ptb_t < 256u) {
// CHECK:          st__slot<1, 256>(ptb_block, ptb_grid, ::ptb::slot_thread_index(ptb_t, 32u, 8u), dim3(32u, 8u, 1u), ptb_dyn_ + ptb_layout.offset[0], k0_p, k0_w);
// CHECK:        } else if (ptb_t < 384u) {
// CHECK:          vol__slot<2, 128>(ptb_block, ptb_grid, ::ptb::slot_thread_index(ptb_t - 256u, 8u, 4u), dim3(8u, 4u, 4u), ptb_dyn_ + ptb_layout.offset[1], k1_p);
// CHECK:        } else {
// CHECK:          vol__slot<3, 128>(ptb_block, ptb_grid, ::ptb::slot_thread_index(ptb_t - 384u, 8u, 4u), dim3(8u, 4u, 4u), ptb_dyn_ + ptb_layout.offset[2], k1_p);
// CHECK:        const ::ptb::FusedPart ptb_parts[2] = {{[{][{]}}ptb_config0, dim3(32u, 8u, 1u), 1u}, {ptb_config1, dim3(8u, 4u, 4u), 2u}};

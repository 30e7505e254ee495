// Device functions that read the built-in index variables, meet at a barrier or declare __shared__
// memory get a slot copy (name__slot<PtbBar, PtbThreads>, the slot's index variables passed first), and
// the calls in the slot function and in other copies go to the copies; functions that need none keep
// being called as they are. A file-scope static __shared__ array gets one per-slot copy (a variable
// template) that the slot function and the copies share.
// RUN: %fuse-kernels %s --kernel reduce=128 --kernel scale=256 --ratio 2:1 -o %t.cu 2>/dev/null
// RUN: %strip-directives %t.cu | FileCheck %s
// RUN: %if nvcc %{ %nvcc -c %t.cu -o %t.o %}
__shared__ float gbuf[64];
__device__ float square(float v) { return v * v; }
__device__ float warp_sum(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}
__device__ float block_sum(float v) {
  __shared__ float part[32];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warp_sum(v);
  if (lane == 0) part[warp] = v;
  __syncthreads();
  v = threadIdx.x < blockDim.x / 32 ? part[lane] : 0.f;
  if (warp == 0) v = warp_sum(v);
  return v;
}
__device__ unsigned tile_id() { return blockIdx.x + gridDim.x * blockIdx.y; }
__device__ void stash(float v) { gbuf[threadIdx.x % 64] = v; __syncthreads(); }
__global__ void reduce(const float *in, float *out, int n) {
  int i = tile_id() * blockDim.x + threadIdx.x;
  float s = block_sum(i < n ? square(in[i]) : 0.f);
  stash(s);
  if (threadIdx.x == 0) out[tile_id()] = s + gbuf[1];
}
__global__ void scale(float *p, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] *= 2.f; }

// CHECK:      __shared__ float gbuf[64];
// CHECK-NEXT: // Per-slot copies of gbuf (fuse-kernels).
// CHECK-NEXT: template <unsigned PtbBar> __shared__ float ptb_slot_gbuf[64];
// CHECK-NOT:  square__slot
// CHECK-NOT:  warp_sum__slot
// CHECK:      static __device__ __forceinline__ float block_sum__slot(const uint3 blockIdx, const dim3 gridDim, const uint3 threadIdx, const dim3 blockDim, unsigned char* const ptb_dyn_shared, float v)
// CHECK:        __shared__ float part[32];
// CHECK:        v = warp_sum(v);
// CHECK:        ::ptb::bar_sync<PtbBar, PtbThreads>();
// CHECK:      static __device__ __forceinline__ unsigned int tile_id__slot(const uint3 blockIdx, const dim3 gridDim, const uint3 threadIdx, const dim3 blockDim, unsigned char* const ptb_dyn_shared)
// CHECK:      void stash__slot(
// CHECK:      { ::ptb_slot_gbuf<PtbBar>[threadIdx.x % 64] = v; ::ptb::bar_sync<PtbBar, PtbThreads>(); }
// CHECK:      __global__ void reduce(const float *in, float *out, int n) {
// CHECK-NEXT:   int i = tile_id() * blockDim.x + threadIdx.x;
// CHECK:      void reduce__slot(
// CHECK:        int i = tile_id__slot<PtbBar, PtbThreads>(blockIdx, gridDim, threadIdx, blockDim, ptb_dyn_shared) * blockDim.x + threadIdx.x;
// CHECK-NEXT:   float s = block_sum__slot<PtbBar, PtbThreads>(blockIdx, gridDim, threadIdx, blockDim, ptb_dyn_shared, i < n ? square(in[i]) : 0.f);
// CHECK-NEXT:   stash__slot<PtbBar, PtbThreads>(blockIdx, gridDim, threadIdx, blockDim, ptb_dyn_shared, s);
// CHECK-NEXT:   if (threadIdx.x == 0) out[tile_id__slot<PtbBar, PtbThreads>(blockIdx, gridDim, threadIdx, blockDim, ptb_dyn_shared)] = s + ::ptb_slot_gbuf<PtbBar>[1];

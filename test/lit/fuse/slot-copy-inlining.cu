// A slot copy of a called device function keeps the original's inlining and specifiers: __noinline__
// stays __noinline__ (with `inline` when written), everything else is __forceinline__ (as before);
// static, inline and constexpr are kept (a copy is always static: it is internal to the output).
// RUN: %fuse-kernels %s --kernel k=64 --kernel other=64 --ratio 1:1 -o %t.cu 2>/dev/null
// RUN: %strip-directives %t.cu | FileCheck %s
// RUN: %if nvcc %{ %nvcc -c %t.cu -o %t.o %}
__device__ __noinline__ int no_inline() { return threadIdx.x; }
inline __device__ __noinline__ int inline_no_inline() { return threadIdx.x + 1; }
__device__ __forceinline__ int force_inline() { return threadIdx.x + 2; }
static __device__ int file_static() { return threadIdx.x + 3; }
static inline __device__ int static_inline() { return threadIdx.x + 4; }
__host__ __device__ int host_device() { return threadIdx.x + 5; }
constexpr __device__ int maybe_const(int v) { return v < 0 ? static_cast<int>(threadIdx.x) : v; }
__global__ void k(int *out) {
  out[threadIdx.x] = no_inline() + inline_no_inline() + force_inline() + file_static() + static_inline() +
                     host_device() + maybe_const(-1);
}
__global__ void other(float *p) { p[threadIdx.x] = 0.f; }

// CHECK: {{^}}static __device__ __noinline__ int no_inline__slot(
// CHECK: {{^}}static __device__ inline __noinline__ int inline_no_inline__slot(
// CHECK: {{^}}static __device__ __forceinline__ int force_inline__slot(
// CHECK: {{^}}static __device__ __forceinline__ int file_static__slot(
// CHECK: {{^}}static __device__ __forceinline__ int static_inline__slot(
// CHECK: {{^}}static __device__ __forceinline__ int host_device__slot(
// CHECK: {{^}}static __device__ __forceinline__ constexpr int maybe_const__slot(

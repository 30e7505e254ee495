// A slot copy of a called device function keeps the original's attributes as written: standard ones
// ([[nodiscard]], also when only an earlier declaration has it; scoped ones), GNU ones, and attributes
// that a macro expands to (the macro is repeated), in front of its specifiers.
// RUN: %fuse-kernels %s --kernel k=64 --kernel other=64 --ratio 1:1 -o %t.cu 2>/dev/null
// RUN: %strip-directives %t.cu | FileCheck %s
// RUN: %if nvcc %{ %nvcc -c %t.cu -o %t.o %}
#define MUST_USE [[nodiscard]]
[[nodiscard]] __device__ int lane() { return threadIdx.x % 32; }
[[nodiscard]] __device__ int warp();
__device__ int warp() { return threadIdx.x / 32; }
__device__ __attribute__((warn_unused_result)) int tid() { return threadIdx.x; }
[[gnu::warn_unused_result]] __device__ int tidy() { return threadIdx.y; }
MUST_USE __device__ int tidz() { return threadIdx.z; }
__global__ void k(int *out) { out[threadIdx.x] = lane() + warp() + tid() + tidy() + tidz(); }
__global__ void other(float *p) { p[threadIdx.x] = 0.f; }

// CHECK: {{^}}[[NODISCARD:\[\[nodiscard\]\]]] static __device__ __forceinline__ int lane__slot(
// CHECK: {{^}}[[NODISCARD]] static __device__ __forceinline__ int warp__slot(
// CHECK: {{^}}__attribute__((warn_unused_result)) static __device__ __forceinline__ int tid__slot(
// CHECK: {{^}}{{\[\[}}gnu::warn_unused_result]] static __device__ __forceinline__ int tidy__slot(
// CHECK: {{^}}MUST_USE static __device__ __forceinline__ int tidz__slot(

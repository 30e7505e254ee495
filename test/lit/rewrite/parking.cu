// Parking (docs/ptb-transform.md, "Parking"): a kernel with a thread-dependent return that a block barrier
// can follow gets a twin whose task body has every block barrier made a task barrier of the runtime, and
// whose run_tasks parks the threads that return (TaskSync::parked). Each barrier form, as written in the
// body, in a macro, in a lambda and in device functions (cloned, as for blockIdx); a return inside a loop;
// a template; a return of a void call, a block-uniform return, a body on one line. Every thread leaves the
// task through ::ptb::task_exit() where it leaves the body (at each return and at the end); a kernel with a
// return written in a macro cannot get that exit and is refused. The originals stay byte for byte. Kernels whose barriers cannot all be rewritten, or with a
// warp-level operation after the return, are refused (each with the reason). The output compiles.
// RUN: %ptb-transform %s -o %t.cu 2> %t.err
// RUN: FileCheck %s --check-prefix=DIAG < %t.err
// RUN: %strip-directives %t.cu | FileCheck %s
// RUN: %if nvcc %{ %nvcc -Werror all-warnings -c %t.cu -o %t.o %}
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
#define SYNC __syncthreads()
#define SYNC_IN_BLOCK do { __syncthreads(); } while (0)

__device__ void stage(float *s, const float *p, int i) { s[threadIdx.x] = p[i]; __syncthreads(); }
__device__ float neighbour(const float *s) { return s[(threadIdx.x + 1) % 128] + blockIdx.x; }

__global__ void reduce(const float *in, float *out, int n) {
  __shared__ float s[128];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  s[threadIdx.x] = in[i];
  __syncthreads();
  for (int w = 64; w > 0; w >>= 1) {
    if (threadIdx.x < w && threadIdx.x + w < blockDim.x) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}

__global__ void forms(float *p, int n) {
  if (threadIdx.x >= n) return;
  int c = __syncthreads_count(p[threadIdx.x] > 0);
  c += __syncthreads_and(c > 1) + __syncthreads_or(c > 2);
  __barrier_sync(0);
  cg::thread_block b = cg::this_thread_block();
  b.sync();
  cg::this_thread_block().sync();
  cg::sync(b);
  SYNC;
  auto again = [&] { __syncthreads(); };
  again();
  p[threadIdx.x] = c;
}

__global__ void loop_return(float *p, const int *len, int rounds) {
  __shared__ float s[128];
  for (int r = 0; r < rounds; ++r) {
    s[threadIdx.x] = p[threadIdx.x];
    __syncthreads();
    if (r >= len[threadIdx.x]) return;
    p[threadIdx.x] += s[127 - threadIdx.x];
    __syncthreads();
  }
}

__global__ void through_callees(float *out, const float *p, int n) {
  __shared__ float s[128];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  stage(s, p, i);
  out[i] = neighbour(s);
}

template <int Block>
__global__ void tiled(float *p, int n) {
  __shared__ float s[Block];
  int i = blockIdx.x * Block + threadIdx.x;
  if (i >= n) return;
  s[threadIdx.x] = p[i];
  __syncthreads();
  p[i] = s[Block - 1 - threadIdx.x];
}

__device__ void finish(float *p) { p[threadIdx.x] = 0; }
__global__ void value_and_uniform(float *p, int n) {
  if (blockIdx.x > 7) return;
  __shared__ float s[128];
  if (threadIdx.x >= n) return finish(p);
  s[threadIdx.x] = p[threadIdx.x]; __syncthreads(); p[threadIdx.x] = s[0];
}
__global__ void one_line(float *p, int n) { if (threadIdx.x >= n) return; __syncthreads(); p[threadIdx.x] = 1; }
__global__ void local_class(float *p, int n) {
  struct Get { __device__ static float at(const float *q, int i) { if (i < 0) return 0.f; return q[i]; } };
  if (threadIdx.x >= n) return;
  __syncthreads();
  p[threadIdx.x] = Get::at(p, threadIdx.x);
}

#define LEAVE_IF(c) if (c) return
__global__ void refused_return_macro(float *p, int n) {
  LEAVE_IF(threadIdx.x >= n);
  __syncthreads();
  p[threadIdx.x] = 1;
}

__global__ void refused_macro(float *p, int n) {
  if (threadIdx.x >= n) return;
  SYNC_IN_BLOCK;
}

__global__ void refused_shuffle(float *p, int n) {
  if (threadIdx.x >= n) return;
  __syncthreads();
  p[threadIdx.x] = __shfl_down_sync(0xffffffffu, p[threadIdx.x], 1);
}

void run(float *p, int *len, int n) {
  reduce<<<4, 128>>>(p, p, n);
  forms<<<4, 128>>>(p, n);
  loop_return<<<1, 128>>>(p, len, 4);
  through_callees<<<4, 128>>>(p, p, n);
  tiled<128><<<4, 128>>>(p, n);
  value_and_uniform<<<9, 128>>>(p, n);
  one_line<<<1, 128>>>(p, n);
  local_class<<<1, 128>>>(p, n);
  refused_return_macro<<<1, 128>>>(p, n);
  refused_macro<<<1, 128>>>(p, n);
  refused_shuffle<<<1, 32>>>(p, n);
}

// DIAG:     parking.cu:95:3: warning: kernel 'refused_return_macro' is left as it is (no PTB twin): thread-dependent return before a barrier: a barrier can follow a thread-dependent return, so each thread must leave the task where it returns, and the return at {{.*}}parking.cu:95:3 is written in a macro, where ptb-transform cannot add that exit
// DIAG:     parking.cu:101:25: warning: kernel 'refused_macro' is left as it is (no PTB twin): thread-dependent return before a barrier: {{.*}} can be followed by __syncthreads at {{.*}}parking.cu:102:3; {{.*}}: it is written inside the definition of macro SYNC_IN_BLOCK
// DIAG:     parking.cu:106:25: warning: kernel 'refused_shuffle' is left as it is (no PTB twin): thread-dependent return before a barrier: {{.*}} can be followed by __shfl_down_sync at {{.*}}parking.cu:108:20; a thread that returns waits at the task's barriers until the block has finished the task, and a warp-level operation waits for every thread of its mask that has not exited
// DIAG-NOT: warning: kernel
// DIAG:     8 kernels made PTB, 3 left as they are, 8 launches rewritten, 2 device functions cloned

// The device functions: the one with a barrier and the one that reads blockIdx get clones.
// CHECK:      __device__ void stage(float *s, const float *p, int i) { s[threadIdx.x] = p[i]; __syncthreads(); }
// CHECK-NEXT: // PTB clone of stage
// CHECK-NEXT: __device__ void stage__ptb(const uint3 blockIdx, const dim3 gridDim, float *s, const float *p, int i)
// CHECK:      { s[threadIdx.x] = p[i]; ::ptb::task_sync(); }
// CHECK:      __device__ float neighbour(const float *s) { return s[(threadIdx.x + 1) % 128] + blockIdx.x; }
// CHECK-NEXT: // PTB clone of neighbour

// reduce: the original, then the twin.
// CHECK:      __global__ void reduce(const float *in, float *out, int n) {
// CHECK:        if (i >= n) return;
// CHECK-NEXT:   s[threadIdx.x] = in[i];
// CHECK-NEXT:   __syncthreads();
// CHECK:          __syncthreads();
// CHECK:      // PTB twin of reduce
// CHECK-NEXT: // Threads that return before a barrier park until the task ends
// Each thread leaves the task where it leaves the body: at the return and at the end (task_exit).
// CHECK:      static __device__ __forceinline__ void reduce__ptb_task(
// CHECK:        if (i >= n) { ::ptb::task_exit(); return; }
// CHECK-NEXT:   s[threadIdx.x] = in[i];
// CHECK-NEXT:   ::ptb::task_sync();
// CHECK-NEXT:   for (int w = 64; w > 0; w >>= 1) {
// CHECK-NEXT:     if (threadIdx.x < w && threadIdx.x + w < blockDim.x) s[threadIdx.x] += s[threadIdx.x + w];
// CHECK-NEXT:     ::ptb::task_sync();
// CHECK-NEXT:   }
// CHECK-NEXT:   if (threadIdx.x == 0) out[blockIdx.x] = s[0];
// CHECK-NEXT:   ::ptb::task_exit();
// CHECK-NEXT: }
// CHECK:      __global__ void reduce__ptb(const float *in, float *out, int n, const ::ptb::Launch ptb_launch) {
// CHECK-NEXT:   ::ptb::run_tasks<::ptb::TaskSync::parked>(ptb_launch,

// forms: every form, the original untouched.
// CHECK:      __global__ void forms(float *p, int n) {
// CHECK-NEXT:   if (threadIdx.x >= n) return;
// CHECK-NEXT:   int c = __syncthreads_count(p[threadIdx.x] > 0);
// CHECK:      static __device__ __forceinline__ void forms__ptb_task(
// CHECK:        if (threadIdx.x >= n) { ::ptb::task_exit(); return; }
// CHECK-NEXT:   int c = ::ptb::task_sync_count(p[threadIdx.x] > 0);
// CHECK-NEXT:   c += ::ptb::task_sync_and(c > 1) + ::ptb::task_sync_or(c > 2);
// CHECK-NEXT:   ::ptb::task_barrier_sync(0);
// CHECK-NEXT:   cg::thread_block b = cg::this_thread_block();
// CHECK-NEXT:   ::ptb::task_group_sync(b);
// CHECK-NEXT:   ::ptb::task_group_sync(cg::this_thread_block());
// CHECK-NEXT:   ::ptb::task_group_sync(b);
// CHECK-NEXT:   ::ptb::task_sync();
// CHECK-NEXT:   auto again = [&] { ::ptb::task_sync(); };
// CHECK-NEXT:   again();
// CHECK:        ::ptb::run_tasks<::ptb::TaskSync::parked>(ptb_launch,

// A return inside a loop with barriers before and after it.
// CHECK:      static __device__ __forceinline__ void loop_return__ptb_task(
// CHECK:          ::ptb::task_sync();
// CHECK-NEXT:     if (r >= len[threadIdx.x]) { ::ptb::task_exit(); return; }
// CHECK-NEXT:     p[threadIdx.x] += s[127 - threadIdx.x];
// CHECK-NEXT:     ::ptb::task_sync();
// CHECK-NEXT:   }
// CHECK-NEXT:   ::ptb::task_exit();
// CHECK-NEXT: }
// CHECK:        ::ptb::run_tasks<::ptb::TaskSync::parked>(ptb_launch,

// CHECK:      static __device__ __forceinline__ void through_callees__ptb_task(
// CHECK:        stage__ptb(blockIdx, gridDim, s, p, i);
// CHECK-NEXT:   out[i] = neighbour__ptb(blockIdx, gridDim, s);
// CHECK:        ::ptb::run_tasks<::ptb::TaskSync::parked>(ptb_launch,

// CHECK:      static __device__ __forceinline__ void tiled__ptb_task(
// CHECK:        ::ptb::task_sync();
// CHECK:        ::ptb::run_tasks<::ptb::TaskSync::parked>(ptb_launch,
// CHECK-NEXT:     tiled__ptb_task<Block>(

// A return of a void call: the call, then the exit. A block-uniform return exits too (every thread
// leaves each task through exactly one exit). A body on one line keeps its line.
// CHECK:      static __device__ __forceinline__ void value_and_uniform__ptb_task(
// CHECK:      {
// CHECK-NEXT:   if (blockIdx.x > 7) { ::ptb::task_exit(); return; }
// CHECK-NEXT:   __shared__ float s[128];
// CHECK-NEXT:   if (threadIdx.x >= n) { finish(p); ::ptb::task_exit(); return; }
// CHECK-NEXT:   s[threadIdx.x] = p[threadIdx.x]; ::ptb::task_sync(); p[threadIdx.x] = s[0];
// CHECK-NEXT:   ::ptb::task_exit();
// CHECK-NEXT: }
// CHECK:      static __device__ __forceinline__ void one_line__ptb_task(
// CHECK:      { if (threadIdx.x >= n) { ::ptb::task_exit(); return; } ::ptb::task_sync(); p[threadIdx.x] = 1; ::ptb::task_exit(); }

// The returns of a local class's member function are its own: no exit there.
// CHECK:      static __device__ __forceinline__ void local_class__ptb_task(
// CHECK:        struct Get { __device__ static float at(const float *q, int i) { if (i < 0) return 0.f; return q[i]; } };
// CHECK-NEXT:   if (threadIdx.x >= n) { ::ptb::task_exit(); return; }

// The refused kernels are left as they are, with no twin.
// CHECK-NOT:  refused_return_macro__ptb
// CHECK-NOT:  refused_macro__ptb
// CHECK-NOT:  refused_shuffle__ptb
// CHECK:      reduce__ptb_launch(::ptb::LaunchConfig(4, 128), p, p, n);
// CHECK-NEXT: forms__ptb_launch(::ptb::LaunchConfig(4, 128), p, n);
// CHECK-NEXT: loop_return__ptb_launch(::ptb::LaunchConfig(1, 128), p, len, 4);
// CHECK-NEXT: through_callees__ptb_launch(::ptb::LaunchConfig(4, 128), p, p, n);
// CHECK-NEXT: tiled__ptb_launch<128>(::ptb::LaunchConfig(4, 128), p, n);
// CHECK-NEXT: value_and_uniform__ptb_launch(::ptb::LaunchConfig(9, 128), p, n);
// CHECK-NEXT: one_line__ptb_launch(::ptb::LaunchConfig(1, 128), p, n);
// CHECK-NEXT: local_class__ptb_launch(::ptb::LaunchConfig(1, 128), p, n);
// CHECK-NEXT: refused_return_macro<<<1, 128>>>(p, n);
// CHECK-NEXT: refused_macro<<<1, 128>>>(p, n);
// CHECK-NEXT: refused_shuffle<<<1, 32>>>(p, n);

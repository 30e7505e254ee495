// Returns: a block-uniform return and a thread-dependent one with no barrier after it are kept (they end
// the task); a thread-dependent return that a barrier can follow is kept too, by parking the threads that
// return (TaskSync::parked, the barriers made task barriers: parking.cu); one that a barrier the tool
// cannot rewrite can follow is refused, naming both, and the kernel is left as it is. --strict turns the
// refusal into an error and writes nothing.
// RUN: %ptb-transform %s -o %t.cu 2> %t.err
// RUN: FileCheck %s --check-prefix=DIAG < %t.err
// RUN: %strip-directives %t.cu | FileCheck %s
// RUN: %if nvcc %{ %nvcc -c %t.cu -o %t.o %}
// RUN: rm -f %t.strict.cu
// RUN: not %ptb-transform --strict %s -o %t.strict.cu 2>&1 | FileCheck %s --check-prefix=STRICT
// RUN: not test -e %t.strict.cu

__global__ void uniform_return(float *p, int valid_blocks) {
  if (blockIdx.x >= valid_blocks) return;
  p[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f;
}

__global__ void tail_return(float *p, int n) {
  __shared__ float s[128];
  s[threadIdx.x] = p[threadIdx.x];
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  p[i] = s[127 - threadIdx.x];
}

__global__ void return_then_barrier(float *p, int n) {
  __shared__ float s[128];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  s[threadIdx.x] = p[i];
  __syncthreads();
  p[i] = s[127 - threadIdx.x];
}

__global__ void return_then_asm_barrier(float *p, int n) {
  __shared__ float s[128];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  s[threadIdx.x] = p[i];
  asm volatile("bar.sync 0;" ::: "memory");
  p[i] = s[127 - threadIdx.x];
}

void run(float *p, int n) {
  uniform_return<<<4, 128>>>(p, 2);
  tail_return<<<4, 128>>>(p, n);
  return_then_barrier<<<4, 128>>>(p, n);
  return_then_asm_barrier<<<4, 128>>>(p, n);
}

// DIAG:     returns.cu:40:15: warning: kernel 'return_then_asm_barrier' is left as it is (no PTB twin): thread-dependent return before a barrier: the return at {{.*}}returns.cu:40:15 depends on i (assigned a thread-dependent value) and can be followed by bar.sync (inline asm) at {{.*}}returns.cu:42:3; a thread that returns must wait at every barrier the rest of the task passes, and this one cannot be rewritten to let it: it is inline asm
// DIAG:     returns.cu:37:17: note: kernel 'return_then_asm_barrier' is defined here
// DIAG-NOT: warning: kernel
// CHECK:    uniform_return__ptb_task(
// CHECK:    __global__ void uniform_return__ptb(
// CHECK-NEXT: ::ptb::run_tasks<::ptb::TaskSync::none>(ptb_launch,
// CHECK:    tail_return__ptb_task(
// CHECK:    __global__ void tail_return__ptb(
// CHECK-NEXT: ::ptb::run_tasks(ptb_launch,
// CHECK:    return_then_barrier__ptb_task(
// CHECK:      if (i >= n) { ::ptb::task_exit(); return; }
// CHECK-NEXT: s[threadIdx.x] = p[i];
// CHECK-NEXT: ::ptb::task_sync();
// CHECK:    __global__ void return_then_barrier__ptb(
// CHECK-NEXT: ::ptb::run_tasks<::ptb::TaskSync::parked>(ptb_launch,
// CHECK-NOT: return_then_asm_barrier__ptb
// CHECK:    uniform_return__ptb_launch(::ptb::LaunchConfig(4, 128), p, 2);
// CHECK-NEXT: tail_return__ptb_launch(::ptb::LaunchConfig(4, 128), p, n);
// CHECK-NEXT: return_then_barrier__ptb_launch(::ptb::LaunchConfig(4, 128), p, n);
// CHECK-NEXT: return_then_asm_barrier<<<4, 128>>>(p, n);
// STRICT:   returns.cu:40:15: error: kernel 'return_then_asm_barrier' is left as it is
// STRICT:   nothing written

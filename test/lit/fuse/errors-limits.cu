// What a fused block cannot be is refused with a located error, a non-zero exit code and nothing
// written: a block that is not a whole number of warps, more slots than named barriers (15 besides
// barrier 0), more than 1024 threads, more than 48 KiB of static __shared__ variables, more shared
// memory (static + dynamic) than an SM offers.
// RUN: rm -f %t.out

// RUN: not %fuse-kernels %s --kernel small=100 --kernel other=64 --ratio 1:1 -o %t.out 2>&1 | FileCheck %s --check-prefixes=WARP,ALL
// RUN: not test -e %t.out

// RUN: not %fuse-kernels %s --kernel small=32 --kernel other=32 --ratio 15:1 -o %t.out 2>&1 | FileCheck %s --check-prefixes=SLOTS,ALL
// RUN: not test -e %t.out

// RUN: not %fuse-kernels %s --kernel small=256 --kernel other=256 --ratio 8:1 -o %t.out 2>&1 | FileCheck %s --check-prefixes=THREADS,ALL
// RUN: not test -e %t.out

// RUN: not %fuse-kernels %s --kernel tile1=32 --kernel tile2=32 --ratio 1:1 -o %t.out 2>&1 | FileCheck %s --check-prefixes=STATIC,ALL
// RUN: not test -e %t.out

// RUN: not %fuse-kernels %s --kernel small=32,120000 --kernel other=32,120000 --ratio 1:1 -o %t.out 2>&1 | FileCheck %s --check-prefixes=TOTAL,ALL
// RUN: not test -e %t.out
// --max-shared lowers the limit: 1:1 of two 40000-byte kernels fits the default, not 64 KiB.
// RUN: %fuse-kernels %s --kernel small=32,40000 --kernel other=32,40000 --ratio 1:1 -o %t.out 2> /dev/null
// RUN: rm -f %t.out
// RUN: not %fuse-kernels %s --kernel small=32,40000 --kernel other=32,40000 --ratio 1:1 --max-shared 65536 -o %t.out 2>&1 | FileCheck %s --check-prefixes=MAX,ALL
// RUN: not test -e %t.out

__global__ void small(float *p) { p[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f; }
// WARP: {{.*}}errors-limits.cu:[[# @LINE - 1]]:17: error: kernel 'small' cannot be fused: its block (100x1x1 = 100 threads) is not a whole number of warps; slots must be warp-aligned
// SLOTS: {{.*}}errors-limits.cu:[[# @LINE - 2]]:17: error: ratio 15:1 cannot be fused: 16 slots need 16 named barriers; the hardware has 15 besides __syncthreads' barrier 0
// THREADS: {{.*}}errors-limits.cu:[[# @LINE - 3]]:17: error: ratio 8:1 cannot be fused: the fused block would have 2304 threads; at most 1024 are allowed
// TOTAL: {{.*}}errors-limits.cu:[[# @LINE - 4]]:17: error: ratio 1:1 cannot be fused: the fused block would use 240256 bytes of shared memory; an SM offers 232448
// MAX: {{.*}}errors-limits.cu:[[# @LINE - 5]]:17: error: ratio 1:1 cannot be fused: the fused block would use 80256 bytes of shared memory; an SM offers 65536
__global__ void other(float *p) { p[blockIdx.x * blockDim.x + threadIdx.x] = 2.0f; }

// 30 KiB each: 2 x (30720 + 128 bytes of slot bookkeeping) > 48 KiB.
__global__ void tile1(float *p) {
// STATIC: {{.*}}errors-limits.cu:[[# @LINE - 1]]:17: error: ratio 1:1 cannot be fused: the slots' static __shared__ variables would take 61696 bytes; a kernel's static shared memory is limited to 49152
  __shared__ float a[7680];
  a[threadIdx.x] = p[threadIdx.x];
  __syncthreads();
  p[threadIdx.x + 1] = a[threadIdx.x];
}
__global__ void tile2(float *p) {
  __shared__ float b[7680];
  b[threadIdx.x] = p[threadIdx.x];
  __syncthreads();
  p[threadIdx.x + 1] = b[threadIdx.x];
}

// ALL: fuse-kernels: nothing written (errors above)

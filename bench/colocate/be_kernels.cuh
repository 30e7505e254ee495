// bench/colocate/be_kernels.cuh: the kernels of the best-effort (BE) programs (be_programs.cu), plain CUDA.
// Two translation units take them: be_programs.cu (made PTB by ptb-transform: each kernel gets a twin)
// and the fused pair (fuse-kernels runs on be_pair.cu, which includes this file: be_compute and be_wmma
// in one block, for the Tacker manager of bench/colocate). The kernels live in an unnamed namespace, so
// each translation unit has its own copy and nothing clashes at link time.
//
//   compute  FMA loops (4 independent chains per thread): compute-bound, little memory traffic
//   memory   a streaming triad a = b + s*c over three arrays of 512 MiB (>> the 50 MB L2): memory-bound
//   wmma     a Tensor-Core GEMM (nvcuda::wmma, half in, float out, a warp per 16x16 tile)
//
// Each kernel's blocks are its tasks; every task ends the same way (be_task_done): all its threads are
// past their work, thread 0 stamps the task's slot with the launch's sequence number and counts the task.
// The results are exact by construction (integers in floating point, or the same fmaf chain on the
// CPU), so check() compares bit for bit.
#pragma once
#include <cuda_fp16.h>
#include <mma.h>

#include <cstddef>

namespace colo {
namespace {

// ---- what every BE task does at its end --------------------------------------------------------------
__device__ __forceinline__ void be_task_done(unsigned* stamp, unsigned task, unsigned seq, unsigned long long* done,
                                             unsigned long long* seen) {
  stamp[task] = seq;
  const unsigned long long v = atomicAdd(done, 1ull) + 1;
  if ((v & 255) == 0) *static_cast<volatile unsigned long long*>(seen) = v;  // host-mapped: BE's progress
}

// ---- compute: FMA chains -----------------------------------------------------------------------------
// One thread's result; the same function runs on the CPU for the check (fmaf is correctly rounded on both).
__host__ __device__ inline float compute_chain(unsigned tid, unsigned seq, int iters) {
  float x0 = float((tid * 7u + seq) % 1024u) * 1e-3f, x1 = x0 + 0.25f, x2 = x0 + 0.5f, x3 = x0 + 0.75f;
  for (int k = 0; k < iters; ++k) {
    x0 = fmaf(x0, 0.9999f, 1e-4f);
    x1 = fmaf(x1, 0.99993f, 3e-5f);
    x2 = fmaf(x2, 0.99995f, 2e-5f);
    x3 = fmaf(x3, 0.99997f, 1e-5f);
  }
  return (x0 + x1) + (x2 + x3);
}

__global__ void be_compute(float* out, unsigned* stamp, unsigned seq, int iters, unsigned long long* done,
                           unsigned long long* seen) {
  const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
  out[tid] = compute_chain(tid, seq, iters);
  __syncthreads();
  if (threadIdx.x == 0) be_task_done(stamp, blockIdx.x, seq, done, seen);
}

// ---- memory: streaming triad -------------------------------------------------------------------------
__host__ __device__ inline float triad_b(size_t i) { return float(int(i % 129) - 64); }
__host__ __device__ inline float triad_c(size_t i) { return float(int((i * 5) % 127) - 63); }
__host__ __device__ inline float triad_scale(unsigned seq) { return float(1 + seq % 8); }

__global__ void be_triad_fill(float* b, float* c, size_t n) {
  const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    b[i] = triad_b(i);
    c[i] = triad_c(i);
  }
}

// Task t streams floats [t * chunk, (t + 1) * chunk), as float4.
__global__ void be_triad(float4* a, const float4* b, const float4* c, unsigned chunk4, unsigned* stamp, unsigned seq,
                         unsigned long long* done, unsigned long long* seen) {
  const float s = triad_scale(seq);
  const size_t base = size_t(blockIdx.x) * chunk4;
  for (unsigned i = threadIdx.x; i < chunk4; i += blockDim.x) {
    const float4 x = b[base + i], y = c[base + i];
    a[base + i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
  }
  __syncthreads();
  if (threadIdx.x == 0) be_task_done(stamp, blockIdx.x, seq, done, seen);
}

// ---- wmma: Tensor-Core GEMM --------------------------------------------------------------------------
// C = A B + seq, A M x K and B K x N row-major half, C float; a block of 4 warps computes a 32 x 32 tile
// (block t: tile row t / (N / 32), tile column t % (N / 32)). Entries of A and B are integers in [-2, 2]
// and K <= 2048: every partial sum is an integer below 2^24, exact in float whatever the order.
__global__ void be_wmma(const half* A, const half* B, float* C, int M, int N, int K, unsigned* stamp, unsigned seq,
                        unsigned long long* done, unsigned long long* seen) {
  using namespace nvcuda;
  const int warp = threadIdx.x / 32, tiles_n = N / 32;
  const int row = (blockIdx.x / tiles_n) * 32 + (warp / 2) * 16, col = (blockIdx.x % tiles_n) * 32 + (warp % 2) * 16;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, float(seq));
  for (int k = 0; k < K; k += 16) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> b;
    wmma::load_matrix_sync(a, A + size_t(row) * K + k, K);
    wmma::load_matrix_sync(b, B + size_t(k) * N + col, N);
    wmma::mma_sync(acc, a, b, acc);
  }
  wmma::store_matrix_sync(C + size_t(row) * N + col, acc, N, wmma::mem_row_major);
  (void)M;
  __syncthreads();
  if (threadIdx.x == 0) be_task_done(stamp, blockIdx.x, seq, done, seen);
}

}  // namespace
}  // namespace colo

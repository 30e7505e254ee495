// Kernels for the fuse-kernels slot-rule test (README.md here). Each one exercises rewrite
// rules that the TC+CD corpus does not, and is written so that a wrong thread or block mapping in a slot
// changes its output. No main: check.cu includes the fuse-kernels output, which holds this file in full.
//
//   sem_counts  3-D block 8x4x4, 2-D grid: threadIdx/blockDim .x/.y/.z, __syncthreads_count/_and/_or with
//               data-dependent predicates, __syncthreads, a static __shared__ array, blockIdx.x/.y, gridDim.
//   sem_cg      1-D block 128: cooperative_groups::this_thread_block() (thread_rank, size, group_index,
//               thread_index, dim_threads, b.sync(), cg::sync(b)), a second this_thread_block(), a tree
//               reduction, a file-scope __shared__ array.
//   sem_dyn     2-D block 32x2: extern __shared__ declared in the body (2 words per thread, from the launch),
//               a block-uniform early return before the first barrier (those blocks write nothing).
//   sem_warp    1-D block 96 (3 warps): __shfl_down_sync reduction, __shfl_sync, __ballot_sync, %laneid
//               against threadIdx.x % 32 (slots must start at multiples of 32).
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

// ---- sem_counts ----
// in: one word per thread; out_thread: 2 words per thread; out_block: 4 words per block.
__global__ void sem_counts(const unsigned* __restrict__ in, unsigned* __restrict__ out_thread,
                           unsigned* __restrict__ out_block) {
  __shared__ unsigned sem_counts_s[4][4][8];  // [z][y][x] of an 8x4x4 block
  const unsigned nx = blockDim.x, ny = blockDim.y, nz = blockDim.z;
  const unsigned tx = threadIdx.x, ty = threadIdx.y, tz = threadIdx.z;
  const unsigned nthreads = nx * ny * nz;
  const unsigned t = (tz * ny + ty) * nx + tx;
  const unsigned long long block = static_cast<unsigned long long>(blockIdx.y) * gridDim.x + blockIdx.x;
  const unsigned long long g = block * nthreads + t;
  const unsigned v = in[g];
  sem_counts_s[tz][ty][tx] = v;
  // About half the threads; all of them in ~13% of the blocks; any of them in ~39% of the blocks.
  const int cnt = __syncthreads_count(v & 1u);
  const int all = __syncthreads_and((v & 63u) != 0u);
  const int any = __syncthreads_or((v & 255u) == 0u);
  const unsigned nb = sem_counts_s[(tz + 1) % nz][(ty + 1) % ny][(tx + 1) % nx];
  __syncthreads();
  sem_counts_s[tz][ty][tx] = nb * 3u + static_cast<unsigned>(cnt);
  __syncthreads();
  const unsigned nb2 = sem_counts_s[nz - 1 - tz][ny - 1 - ty][nx - 1 - tx];
  out_thread[2 * g] = nb2 * 2654435761u + static_cast<unsigned>(cnt) + (static_cast<unsigned>(all) << 8) +
                      (static_cast<unsigned>(any) << 9);
  out_thread[2 * g + 1] = tx | (ty << 4) | (tz << 8) | (nx << 12) | (ny << 16) | (nz << 20) | (t << 24);
  if (t == nthreads - 1) {  // thread (7,3,3): a leader other than thread 0
    out_block[4 * block + 0] = static_cast<unsigned>(cnt) | (nb2 << 8);
    out_block[4 * block + 1] = static_cast<unsigned>(all) | (static_cast<unsigned>(any) << 1);
    out_block[4 * block + 2] = blockIdx.x | (blockIdx.y << 16);
    out_block[4 * block + 3] = gridDim.x | (gridDim.y << 16) | (gridDim.z << 30);
  }
}

// ---- sem_cg ----
__shared__ float sem_cg_tile[128];  // file scope: one per block in the original, one per slot when fused

// in: n floats; out_sum: one float per block; out_val: n floats; out_info: one word per thread of the grid.
__global__ void sem_cg(const float* __restrict__ in, float* __restrict__ out_sum, float* __restrict__ out_val,
                       unsigned* __restrict__ out_info, int n) {
  cg::thread_block b = cg::this_thread_block();
  __shared__ float sem_cg_red[128];
  const unsigned r = static_cast<unsigned>(b.thread_rank());
  const unsigned size = static_cast<unsigned>(b.size());
  const unsigned long long i = static_cast<unsigned long long>(b.group_index().x) * size + r;
  const float v = i < static_cast<unsigned long long>(n) ? in[i] : 0.f;
  sem_cg_tile[r] = v;
  b.sync();
  sem_cg_red[r] = sem_cg_tile[(r + 1) % size] * 2.f + v;
  cg::sync(b);
  for (unsigned w = size / 2; w > 0; w /= 2) {
    if (r < w) sem_cg_red[r] += sem_cg_red[r + w];
    cg::sync(b);
  }
  const float total = sem_cg_red[0];
  sem_cg_tile[r] = total - v;
  auto b2 = cg::this_thread_block();
  b2.sync();
  const float mirror = sem_cg_tile[size - 1 - r];
  if (i < static_cast<unsigned long long>(n)) out_val[i] = mirror;
  out_info[i] = r | (b.thread_index().x << 8) | (b.dim_threads().x << 16) | ((size & 0xffu) << 24);
  if (r == size - 1) out_sum[blockIdx.x] = total;
}

// ---- sem_dyn ----
// Launched with 2 * blockDim.x * blockDim.y words of dynamic shared memory.
// in: 2 words per thread; out: one word per thread; out_block: 2 words per block. Blocks with
// blockIdx.x % 5 == 3 return at once and write nothing.
__global__ void sem_dyn(const unsigned* __restrict__ in, unsigned* __restrict__ out, unsigned* __restrict__ out_block) {
  extern __shared__ unsigned sem_dyn_buf[];
  if (blockIdx.x % 5 == 3) return;
  const unsigned nt = blockDim.x * blockDim.y;
  const unsigned t = threadIdx.y * blockDim.x + threadIdx.x;
  const unsigned long long base = static_cast<unsigned long long>(blockIdx.x) * nt;
  sem_dyn_buf[t] = in[2 * base + t];
  sem_dyn_buf[nt + t] = in[2 * base + nt + t] ^ (threadIdx.x << 3) ^ threadIdx.y;
  __syncthreads();
  const unsigned a = sem_dyn_buf[(t + 1) % nt] + sem_dyn_buf[2 * nt - 1 - t] * 7u;
  __syncthreads();
  sem_dyn_buf[t] = a * 3u + threadIdx.y;
  sem_dyn_buf[nt + t] = a ^ 0x9e3779b9u;
  __syncthreads();
  out[base + t] = sem_dyn_buf[nt - 1 - t] + sem_dyn_buf[nt + (t + nt / 2) % nt] * 5u;
  if (threadIdx.x == blockDim.x - 1 && threadIdx.y == blockDim.y - 1) {
    out_block[2 * blockIdx.x] = blockIdx.x;
    out_block[2 * blockIdx.x + 1] = gridDim.x ^ (blockDim.x << 20) ^ (blockDim.y << 28);
  }
}

// ---- sem_warp ----
// in: n ints; out_sum, out_ballot: one word per warp of the grid; out_lane: 2 words per thread of the grid.
__global__ void sem_warp(const int* __restrict__ in, int* __restrict__ out_sum, unsigned* __restrict__ out_ballot,
                         unsigned* __restrict__ out_lane, int n) {
  const unsigned t = threadIdx.x;
  const unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + t;
  const int v = i < static_cast<unsigned long long>(n) ? in[i] : 0;
  int s = v;
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  const unsigned bal = __ballot_sync(0xffffffffu, (v & 3) == 0);
  const int rot = __shfl_sync(0xffffffffu, v, (t + 7) & 31u);
  unsigned hw_lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(hw_lane));
  const unsigned warps = blockDim.x / 32, w = t / 32;
  if ((t & 31u) == 0) {
    out_sum[blockIdx.x * warps + w] = s;
    out_ballot[blockIdx.x * warps + w] = bal;
  }
  out_lane[2 * i] = static_cast<unsigned>(rot);
  out_lane[2 * i + 1] = static_cast<unsigned>(hw_lane == (t & 31u)) | (w << 1) | (warps << 8) |
                        (static_cast<unsigned>(__popc(bal)) << 16);
}

// ---- sem_callee ----
// 1-D block 128, 2-D grid: everything the slot needs is in called device functions, two of them function
// templates (slot copies of templates; a call with explicit template arguments and a deduced one).
// sem_callee_tile reads blockIdx/gridDim, sem_callee_block_sum meets at a barrier over threadIdx/blockDim with its own __shared__
// array (and calls a warp-shuffle helper that needs no slot copy), sem_callee_stash writes the file-scope
// __shared__ array sem_callee_buf that the kernel itself then reads (one per-slot copy shared by both).
__shared__ unsigned sem_callee_buf[128];
template <unsigned Stride = 1>
__device__ unsigned sem_callee_tile() { return blockIdx.x + gridDim.x * blockIdx.y * Stride; }
__device__ unsigned sem_callee_warp_sum(unsigned v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}
template <typename T, unsigned Warp = 32>
__device__ T sem_callee_block_sum(T v) {
  __shared__ T part[Warp];
  const unsigned lane = threadIdx.x % Warp, warp = threadIdx.x / Warp;
  v = sem_callee_warp_sum(v);
  if (lane == 0) part[warp] = v;
  __syncthreads();
  v = threadIdx.x < blockDim.x / Warp ? part[lane] : T(0);
  if (warp == 0) v = sem_callee_warp_sum(v);
  return v;
}
__device__ void sem_callee_stash(unsigned v) {
  sem_callee_buf[threadIdx.x] = v;
  __syncthreads();
}
__global__ void sem_callee(const unsigned* __restrict__ in, unsigned* __restrict__ out_sum,
                           unsigned* __restrict__ out_rot, int n) {
  const unsigned b = sem_callee_tile<1>();
  const unsigned i = b * blockDim.x + threadIdx.x;
  const unsigned v = i < unsigned(n) ? in[i] : 0u;
  const unsigned s = sem_callee_block_sum(v);
  sem_callee_stash(v * 3u + b);
  if (threadIdx.x == 0) out_sum[b] = s;
  if (i < unsigned(n)) out_rot[i] = sem_callee_buf[(threadIdx.x + 5) % blockDim.x];
}

// histogram: the byte histogram of each block's share of the input, counted with shared-memory atomics.
//
//   partial[b][v] = number of bytes equal to v in words [b * 4096, (b + 1) * 4096) of in (as uint4: 1024)
//   block: 256 threads (1-D); grid: ceil(n4 / 1024); static shared memory 8192 bytes (one 256-bin
//   histogram per warp)
//
// Each thread reads four uint4 (64 bytes) and adds each byte to its warp's histogram (atomicAdd on shared
// memory: 16 atomics per 16-byte load); after a __syncthreads(), thread v sums bin v over the eight warps
// and writes it. Shared-memory-atomic-bound, with integer byte extraction; the result is exact whatever
// the order of the atomics. One task per block; blocks are independent.

constexpr int histogram_bins = 256;
constexpr int histogram_warps = 8;
constexpr int histogram_loads = 4;

__global__ void histogram_bytes(const uint4* in, unsigned* partial, int n4)
{
  __shared__ unsigned histogram_sub[histogram_warps][histogram_bins];
  for (int i = threadIdx.x; i < histogram_warps * histogram_bins; i += blockDim.x)
    histogram_sub[i / histogram_bins][i % histogram_bins] = 0u;
  __syncthreads();
  unsigned* mine = histogram_sub[threadIdx.x / 32];
  const size_t base = (size_t)blockIdx.x * blockDim.x * histogram_loads;
  for (int k = 0; k < histogram_loads; ++k) {
    const size_t i = base + (size_t)k * blockDim.x + threadIdx.x;
    if (i < (size_t)n4) {
      const uint4 v = in[i];
      const unsigned w[4] = {v.x, v.y, v.z, v.w};
      for (int q = 0; q < 4; ++q)
        for (int s = 0; s < 32; s += 8) atomicAdd(&mine[(w[q] >> s) & 255u], 1u);
    }
  }
  __syncthreads();
  for (int b = threadIdx.x; b < histogram_bins; b += blockDim.x) {
    unsigned sum = 0;
    for (int wp = 0; wp < histogram_warps; ++wp) sum += histogram_sub[wp][b];
    partial[(size_t)blockIdx.x * histogram_bins + b] = sum;
  }
}

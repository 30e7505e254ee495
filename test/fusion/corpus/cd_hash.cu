// hash: INT32 bit mixing, `rounds` rounds per element, with a per-block salt table in dynamic shared memory.
//
//   table[i] = salts[i] ^ (blockIdx.x * 0x9E3779B9)            (i < nsalt; nsalt a power of two)
//   x = in[t]; repeat rounds times (r = 0, 1, ...):
//     x += table[(x ^ r) & (nsalt - 1)]
//     x = fmix32(x)                                             (murmur3's finalizer)
//     x = rotl(x, 13) * 5 + 0xE6546B64                          (murmur3's block step)
//   out[t] = x
//   block: 256 threads (1-D); grid: ceil(n / 256); dynamic shared memory nsalt * 4 bytes (4096 for 1024)
//
// The block loads its salt table into dynamic shared memory once, __syncthreads(), then each thread mixes
// one element: ~14 integer ALU operations and one data-dependent shared-memory load per round.
// INT32-ALU-bound. One task per block; blocks are independent (the table depends on blockIdx.x only).

constexpr unsigned hash_block_salt = 0x9E3779B9u;

__global__ void hash_mix(const unsigned* in, unsigned* out, const unsigned* salts, int nsalt, int n, int rounds)
{
  extern __shared__ unsigned hash_scratch[];
  for (int i = threadIdx.x; i < nsalt; i += blockDim.x)
    hash_scratch[i] = salts[i] ^ ((unsigned)blockIdx.x * hash_block_salt);
  __syncthreads();

  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n) {
    const unsigned mask = (unsigned)nsalt - 1u;
    unsigned x = in[t];
    for (int r = 0; r < rounds; ++r) {
      x += hash_scratch[(x ^ (unsigned)r) & mask];
      x ^= x >> 16;
      x *= 0x85EBCA6Bu;
      x ^= x >> 13;
      x *= 0xC2B2AE35u;
      x ^= x >> 16;
      x = ((x << 13) | (x >> 19)) * 5u + 0xE6546B64u;
    }
    out[t] = x;
  }
}

// triad: the streaming triad a = b + s * c, four floats per thread.
//
//   a[i] = b[i] + s * c[i]   (i < 4 * n4; each thread one float4)
//   block: 256 threads (1-D); grid: ceil(n4 / 256); no shared memory, no barrier
//
// Three 16-byte accesses and four FMAs per thread: DRAM-bandwidth-bound with almost no arithmetic, the
// kind of kernel that needs every load in flight it can get (resident warps). One task per block; blocks
// are independent.

__global__ void triad_stream(float4* a, const float4* b, const float4* c, float s, int n4)
{
  const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < (size_t)n4) {
    const float4 x = b[i], y = c[i];
    a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
  }
}

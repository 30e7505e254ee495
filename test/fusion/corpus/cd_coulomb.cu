// coulomb: direct Coulomb summation (the DCS kernel of VMD/Parboil cutcp, without cutoff) on a 2-D slice.
//
//   pot[iy * nx + ix] = sum_j q_j * rsqrtf((x_j - ix*h)^2 + (y_j - iy*h)^2 + (z_j - z0)^2 + coulomb_eps)
//   atoms: natoms float4 (x, y, z, q) in global memory; natoms a multiple of 128 (pad with q = 0 atoms)
//   block: (32, 4) = 128 threads; grid: (ceil(nx / 32), ceil(ny / 4)); static shared memory 2048 bytes
//
// Each thread computes one grid point. The block stages 128 atoms at a time in shared memory (one per
// thread, then __syncthreads()), and every thread sums over the staged atoms: 7 FP32 operations and one
// rsqrtf (SFU) per atom. Compute-bound (FP32 + SFU). One task per block; blocks are independent.

constexpr int coulomb_chunk = 128;      // atoms staged per step; equals the block's thread count
constexpr float coulomb_eps = 1.0e-3f;  // softening added to r^2 (the inputs keep r >= 1 anyway)

__global__ void coulomb_potential(const float4* atoms, int natoms, float* pot, int nx, int ny, float spacing,
                                  float z0)
{
  __shared__ float4 coulomb_tile[coulomb_chunk];
  const int tid = threadIdx.y * blockDim.x + threadIdx.x;  // 0..127
  const int ix = blockIdx.x * blockDim.x + threadIdx.x;
  const int iy = blockIdx.y * blockDim.y + threadIdx.y;
  const float px = (float)ix * spacing;
  const float py = (float)iy * spacing;

  float v = 0.0f;
  for (int base = 0; base < natoms; base += coulomb_chunk) {
    coulomb_tile[tid] = atoms[base + tid];
    __syncthreads();
#pragma unroll 8
    for (int j = 0; j < coulomb_chunk; ++j) {
      const float4 a = coulomb_tile[j];
      const float dx = a.x - px;
      const float dy = a.y - py;
      const float dz = a.z - z0;
      v += a.w * rsqrtf(dx * dx + dy * dy + dz * dz + coulomb_eps);
    }
    __syncthreads();
  }
  if (ix < nx && iy < ny)
    pot[(size_t)iy * nx + ix] = v;
}

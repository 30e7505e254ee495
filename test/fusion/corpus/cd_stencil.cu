// stencil: one Jacobi sweep of a 2-D 5-point stencil with clamp-to-edge boundaries.
//
//   out[y][x] = c0 * in[y][x] + c1 * ((in[y][x-1] + in[y][x+1]) + (in[y-1][x] + in[y+1][x]))
//   (an index outside [0, nx) x [0, ny) is clamped to the nearest edge)
//   in, out: nx * ny floats, row-major (x fastest)
//   block: (32, 8) = 256 threads; grid: (ceil(nx / 32), ceil(ny / 8)); static shared memory 1360 bytes
//
// Each block loads its 32 x 8 tile plus a one-point halo into a static shared array (edge threads load the
// halo), __syncthreads(), then every thread computes one point from shared memory. Memory-bound (DRAM
// bandwidth: one read and one write per point). One task per block; blocks are independent.

constexpr int stencil_bx = 32;
constexpr int stencil_by = 8;

__global__ void stencil_5pt(const float* in, float* out, int nx, int ny, float c0, float c1)
{
  __shared__ float stencil_tile[stencil_by + 2][stencil_bx + 2];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int gx = blockIdx.x * stencil_bx + tx;
  const int gy = blockIdx.y * stencil_by + ty;
  // Clamped coordinates: threads past the edge of a partial tile load valid (unused) data.
  const int cx = min(gx, nx - 1);
  const int cy = min(gy, ny - 1);
  const size_t row = (size_t)cy * nx;

  stencil_tile[ty + 1][tx + 1] = in[row + cx];
  if (tx == 0)
    stencil_tile[ty + 1][0] = in[row + max(cx - 1, 0)];
  if (tx == stencil_bx - 1)
    stencil_tile[ty + 1][stencil_bx + 1] = in[row + min(gx + 1, nx - 1)];
  if (ty == 0)
    stencil_tile[0][tx + 1] = in[(size_t)max(cy - 1, 0) * nx + cx];
  if (ty == stencil_by - 1)
    stencil_tile[stencil_by + 1][tx + 1] = in[(size_t)min(gy + 1, ny - 1) * nx + cx];
  __syncthreads();

  if (gx < nx && gy < ny) {
    const float c = stencil_tile[ty + 1][tx + 1];
    const float w = stencil_tile[ty + 1][tx];
    const float e = stencil_tile[ty + 1][tx + 2];
    const float n = stencil_tile[ty][tx + 1];
    const float s = stencil_tile[ty + 2][tx + 1];
    out[(size_t)gy * nx + gx] = c0 * c + c1 * ((w + e) + (n + s));
  }
}

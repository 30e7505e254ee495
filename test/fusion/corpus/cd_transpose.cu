// transpose: out = in^T through a shared-memory tile, so that both the reads and the writes are coalesced.
//
//   out[c][r] = in[r][c]   in: rows x cols floats, out: cols x rows floats, both row-major
//   block: (32, 8) = 256 threads; grid: (ceil(cols / 32), ceil(rows / 32)); static shared memory 4224 bytes
//
// Each block moves one 32 x 32 tile: its threads read four rows each into a padded shared tile (33 floats a
// row, so that the column reads meet no bank conflict), __syncthreads(), then write the tile's columns as
// rows. Shared-memory traffic as large as the DRAM traffic, and bandwidth-bound. One task per block;
// blocks are independent.

constexpr int transpose_tile = 32;
constexpr int transpose_step = 8;

__global__ void transpose_tiled(const float* in, float* out, int rows, int cols)
{
  __shared__ float transpose_buf[transpose_tile][transpose_tile + 1];
  const int x = blockIdx.x * transpose_tile + threadIdx.x;
  const int y = blockIdx.y * transpose_tile + threadIdx.y;
  for (int j = 0; j < transpose_tile; j += transpose_step)
    if (x < cols && y + j < rows) transpose_buf[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
  __syncthreads();
  const int ox = blockIdx.y * transpose_tile + threadIdx.x;
  const int oy = blockIdx.x * transpose_tile + threadIdx.y;
  for (int j = 0; j < transpose_tile; j += transpose_step)
    if (ox < rows && oy + j < cols) out[(size_t)(oy + j) * rows + ox] = transpose_buf[threadIdx.x][threadIdx.y + j];
}

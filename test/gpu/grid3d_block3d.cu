// 3-D grid and 3-D block: a 7-point integer stencil over a volume whose sides are not multiples of the
// block, plus gridDim.z/blockIdx.z used in the result. Exact check.
#include "common.cuh"

__global__ void stencil7(int nx, int ny, int nz, const int* in, int* out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x >= nx || y >= ny || z >= nz) return;
  auto at = [&](int i, int j, int k) {
    i = min(max(i, 0), nx - 1);
    j = min(max(j, 0), ny - 1);
    k = min(max(k, 0), nz - 1);
    return in[((size_t)k * ny + j) * nx + i];
  };
  int v = 6 * at(x, y, z) - at(x - 1, y, z) - at(x + 1, y, z) - at(x, y - 1, z) - at(x, y + 1, z) - at(x, y, z - 1) -
          at(x, y, z + 1);
  out[((size_t)z * ny + y) * nx + x] = v * (int)gridDim.z + (int)blockIdx.z;
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "grid3d_block3d");
  if (tg::bench_mode()) {
    int nx = 512, ny = 512, nz = 256;
    size_t n = (size_t)nx * ny * nz;
    tg::DevBuf<int> in(n), out(n);
    in.fill_bytes(1);
    dim3 block(32, 4, 2), grid(nx / 32, ny / 4, nz / 2);
    return tg::bench("grid3d_block3d", [&] { stencil7<<<grid, block>>>(nx, ny, nz, in, out); });
  }
  const dim3 blocks[] = {dim3(8, 8, 4), dim3(32, 2, 2), dim3(4, 4, 16), dim3(3, 5, 7)};
  for (dim3 block : blocks) {
    int nx = (int)tg::rand_int(1, 130), ny = (int)tg::rand_int(1, 130), nz = (int)tg::rand_int(1, 70);
    size_t n = (size_t)nx * ny * nz;
    auto h = tg::random_ints<int>(n, -10000, 10000);
    tg::DevBuf<int> in(n), out(n);
    in.upload(h);
    out.poison();
    dim3 grid((nx + block.x - 1) / block.x, (ny + block.y - 1) / block.y, (nz + block.z - 1) / block.z);
    stencil7<<<grid, block>>>(nx, ny, nz, in, out);
    tg::sync_check("stencil7");
    std::vector<int> want(n);
    auto at = [&](int i, int j, int k) {
      i = std::min(std::max(i, 0), nx - 1);
      j = std::min(std::max(j, 0), ny - 1);
      k = std::min(std::max(k, 0), nz - 1);
      return h[((size_t)k * ny + j) * nx + i];
    };
    for (int z = 0; z < nz; ++z)
      for (int y = 0; y < ny; ++y)
        for (int x = 0; x < nx; ++x) {
          int v = 6 * at(x, y, z) - at(x - 1, y, z) - at(x + 1, y, z) - at(x, y - 1, z) - at(x, y + 1, z) -
                  at(x, y, z - 1) - at(x, y, z + 1);
          want[((size_t)z * ny + y) * nx + x] = v * (int)grid.z + (int)(z / block.z);
        }
    tg::compare_exact(out.download(), want, "3-D stencil");
  }
  return tg::finish();
}

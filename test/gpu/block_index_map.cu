// Every thread of random 1-D, 2-D and 3-D grids/blocks writes what it sees of blockIdx, threadIdx,
// gridDim and blockDim; every block counts its runs. Checks that each virtual block runs exactly once and
// sees the original grid's built-in variables.
#include "common.cuh"

struct Seen {
  unsigned bx, by, bz, tx, ty, tz, gx, gy, gz, dx, dy, dz;
};

__global__ void record(Seen* out, unsigned* runs) {
  size_t b = ((size_t)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  unsigned t = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  unsigned nt = blockDim.x * blockDim.y * blockDim.z;
  Seen s{blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y, threadIdx.z,
         gridDim.x,  gridDim.y,  gridDim.z,  blockDim.x,  blockDim.y,  blockDim.z};
  out[b * nt + t] = s;
  if (t == 0) atomicAdd(&runs[b], 1u);
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "block_index_map");
  if (tg::bench_mode()) {
    dim3 grid(64, 32, 32), block(16, 4, 2);  // 65536 blocks x 128 threads x 48 bytes = 400 MB of writes
    size_t nb = (size_t)grid.x * grid.y * grid.z, nt = 128;
    tg::DevBuf<Seen> out(nb * nt);
    tg::DevBuf<unsigned> runs(nb);
    return tg::bench("block_index_map", [&] { record<<<grid, block>>>(out, runs); });
  }
  for (int it = 0; it < 9; ++it) {
    int dims = it % 3 + 1;
    dim3 grid(1, 1, 1), block(1, 1, 1);
    if (dims == 1) grid.x = (unsigned)tg::rand_int(1, 5000), block.x = (unsigned)tg::rand_int(1, 512);
    if (dims == 2) grid = dim3((unsigned)tg::rand_int(1, 60), (unsigned)tg::rand_int(1, 60)),
                   block = dim3((unsigned)tg::rand_int(1, 16), (unsigned)tg::rand_int(1, 16));
    if (dims == 3) grid = dim3((unsigned)tg::rand_int(1, 20), (unsigned)tg::rand_int(1, 20), (unsigned)tg::rand_int(1, 10)),
                   block = dim3((unsigned)tg::rand_int(1, 8), (unsigned)tg::rand_int(1, 8), (unsigned)tg::rand_int(1, 4));
    size_t nb = (size_t)grid.x * grid.y * grid.z, nt = (size_t)block.x * block.y * block.z;
    tg::DevBuf<Seen> out(nb * nt);
    tg::DevBuf<unsigned> runs(nb);
    out.poison();
    runs.fill_bytes(0);
    record<<<grid, block>>>(out, runs);
    tg::sync_check("record");
    auto h = out.download();
    auto r = runs.download();
    size_t bad = 0;
    for (size_t b = 0; b < nb && bad < 1; ++b) {
      unsigned bx = b % grid.x, by = (b / grid.x) % grid.y, bz = b / grid.x / grid.y;
      if (!tg::check(r[b] == 1, "grid (%u,%u,%u) block (%u,%u,%u) ran %u times", grid.x, grid.y, grid.z, bx, by, bz,
                     r[b]))
        ++bad;
      for (size_t t = 0; t < nt && !bad; ++t) {
        unsigned tx = t % block.x, ty = (t / block.x) % block.y, tz = t / block.x / block.y;
        Seen w{bx, by, bz, tx, ty, tz, grid.x, grid.y, grid.z, block.x, block.y, block.z};
        const Seen& g = h[b * nt + t];
        if (memcmp(&g, &w, sizeof w) != 0) {
          tg::check(false,
                    "grid (%u,%u,%u) block (%u,%u,%u): block (%u,%u,%u) thread (%u,%u,%u) saw blockIdx (%u,%u,%u) "
                    "threadIdx (%u,%u,%u) gridDim (%u,%u,%u) blockDim (%u,%u,%u)",
                    grid.x, grid.y, grid.z, block.x, block.y, block.z, bx, by, bz, tx, ty, tz, g.bx, g.by, g.bz, g.tx,
                    g.ty, g.tz, g.gx, g.gy, g.gz, g.dx, g.dy, g.dz);
          ++bad;
        }
      }
    }
  }
  return tg::finish();
}

// (b) A chain of 10^4 dependent launches of short 2-D stencils: 5000 steps of two kernels (ping-pong
// between the state `a` and a flux field `f`) on a 2048 x 2048 periodic grid, 32x8 blocks, one stream,
// no synchronization in between: what a fixed per-launch cost adds to an iterative solver.
//   stencil2d_chain [--w 2048] [--h 2048] [--steps 5000]
// The kernels work in 32-bit integers (wrapping), so the result is exact and every step changes the
// state (a launch that ran late, twice or not at all leaves a visible trace). The initial state repeats
// a 64 x 32 tile and the boundaries are periodic, so the whole grid stays a repetition of that tile: the
// CPU reference runs the same steps on the 64 x 32 torus, and every cell of the GPU's grid is compared.
#include "bp.cuh"

#include <vector>

// f = the 5-point Laplacian of a
__global__ void flux(const uint32_t* __restrict__ a, uint32_t* __restrict__ f, int w, int h) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  const int xm = x == 0 ? w - 1 : x - 1, xp = x == w - 1 ? 0 : x + 1;
  const int ym = y == 0 ? h - 1 : y - 1, yp = y == h - 1 ? 0 : y + 1;
  const uint32_t c = a[(size_t)y * w + x];
  f[(size_t)y * w + x] = a[(size_t)y * w + xm] + a[(size_t)y * w + xp] + a[(size_t)ym * w + x] + a[(size_t)yp * w + x] - 4u * c;
}

// a = 5 a + f + (f east >> 3) + (f south >> 5) + step
__global__ void update(uint32_t* __restrict__ a, const uint32_t* __restrict__ f, int w, int h, uint32_t step) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  const int xp = x == w - 1 ? 0 : x + 1, yp = y == h - 1 ? 0 : y + 1;
  const size_t i = (size_t)y * w + x;
  a[i] = 5u * a[i] + f[i] + (f[(size_t)y * w + xp] >> 3) + (f[(size_t)yp * w + x] >> 5) + step;
}

int main(int argc, char** argv) {
  bp::program_name() = "stencil2d_chain";
  const int w = (int)bp::arg(argc, argv, "--w", 2048), h = (int)bp::arg(argc, argv, "--h", 2048);
  const int steps = (int)bp::arg(argc, argv, "--steps", 5000);
  const int P = 64, Q = 32;  // the tile
  if (w % P || h % Q) bp::fail("--w must be a multiple of %d, --h of %d", P, Q);
  std::vector<uint32_t> tile((size_t)P * Q), grid((size_t)w * h);
  for (size_t i = 0; i < tile.size(); ++i) tile[i] = bp::hash32((uint32_t)i * 2654435761u + 12345u);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) grid[(size_t)y * w + x] = tile[(size_t)(y % Q) * P + x % P];
  uint32_t *d_a, *d_f;
  BP_CK(cudaMalloc(&d_a, grid.size() * 4));
  BP_CK(cudaMalloc(&d_f, grid.size() * 4));
  BP_CK(cudaMemcpy(d_a, grid.data(), grid.size() * 4, cudaMemcpyHostToDevice));
  BP_CK(cudaMemset(d_f, 0, grid.size() * 4));
  bp::Timer t;
  BP_CK(cudaDeviceSynchronize());

  t.start();
  const dim3 block(32, 8), g((w + 31) / 32, (h + 7) / 8);
  for (int s = 0; s < steps; ++s) {
    flux<<<g, block>>>(d_a, d_f, w, h);
    update<<<g, block>>>(d_a, d_f, w, h, (uint32_t)s);
  }
  const float ms = t.stop();

  // CPU reference on the P x Q torus.
  std::vector<uint32_t> a = tile, f(tile.size());
  for (int s = 0; s < steps; ++s) {
    for (int y = 0; y < Q; ++y)
      for (int x = 0; x < P; ++x) {
        const int xm = (x + P - 1) % P, xp = (x + 1) % P, ym = (y + Q - 1) % Q, yp = (y + 1) % Q;
        f[y * P + x] = a[y * P + xm] + a[y * P + xp] + a[ym * P + x] + a[yp * P + x] - 4u * a[y * P + x];
      }
    for (int y = 0; y < Q; ++y)
      for (int x = 0; x < P; ++x) {
        const int xp = (x + 1) % P, yp = (y + 1) % Q;
        uint32_t& c = a[y * P + x];
        c = 5u * c + f[y * P + x] + (f[y * P + xp] >> 3) + (f[yp * P + x] >> 5) + (uint32_t)s;
      }
  }
  BP_CK(cudaMemcpy(grid.data(), d_a, grid.size() * 4, cudaMemcpyDeviceToHost));
  size_t bad = 0, first = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      if (grid[(size_t)y * w + x] != a[(size_t)(y % Q) * P + x % P] && bad++ == 0) first = (size_t)y * w + x;
  if (bad)
    bp::fail("%zu of %zu cells wrong after %d steps (first at x=%zu y=%zu: %u, want %u)", bad, grid.size(), steps, first % w,
             first / w, grid[first], a[(first / w % Q) * P + first % w % P]);
  bp::result(ms, 2ull * steps);
  return 0;
}

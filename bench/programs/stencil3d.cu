// (e) A 3-D 7-point stencil, several steps: 10 Jacobi-type sweeps u' = 0.4 u + 0.1 (sum of the 6
// neighbours) over a 384^3 periodic grid of floats, 3-D grid of 32x4x4 blocks, ping-pong buffers.
//   stencil3d [--n 384] [--steps 10]
// The initial field repeats a 16 x 8 x 8 tile (smooth waves plus noise); with periodic boundaries the
// field stays a repetition of it, so the CPU reference runs the same sweeps on the 16 x 8 x 8 torus and
// every cell of the GPU's grid is compared (tolerance 2e-5: the GPU may fuse the multiply-adds).
#include "bp.cuh"

#include <cmath>
#include <vector>

__global__ void jacobi7(const float* __restrict__ u, float* __restrict__ v, int nx, int ny, int nz) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  const int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x >= nx || y >= ny || z >= nz) return;
  const int xm = x == 0 ? nx - 1 : x - 1, xp = x == nx - 1 ? 0 : x + 1;
  const int ym = y == 0 ? ny - 1 : y - 1, yp = y == ny - 1 ? 0 : y + 1;
  const int zm = z == 0 ? nz - 1 : z - 1, zp = z == nz - 1 ? 0 : z + 1;
  auto at = [&](int xx, int yy, int zz) { return ((size_t)zz * ny + yy) * nx + xx; };
  const float s = u[at(xm, y, z)] + u[at(xp, y, z)] + u[at(x, ym, z)] + u[at(x, yp, z)] + u[at(x, y, zm)] + u[at(x, y, zp)];
  v[at(x, y, z)] = 0.4f * u[at(x, y, z)] + 0.1f * s;
}

int main(int argc, char** argv) {
  bp::program_name() = "stencil3d";
  const int n = (int)bp::arg(argc, argv, "--n", 384), steps = (int)bp::arg(argc, argv, "--steps", 10);
  const int P = 16, Q = 8, R = 8;
  if (n % P || n % Q || n % R) bp::fail("--n must be a multiple of %d", P);
  const size_t cells = (size_t)n * n * n;
  std::vector<float> tile((size_t)P * Q * R);
  const double pi = 3.14159265358979323846;
  for (int z = 0; z < R; ++z)
    for (int y = 0; y < Q; ++y)
      for (int x = 0; x < P; ++x)
        tile[((size_t)z * Q + y) * P + x] =
            (float)(0.5 + 0.3 * std::sin(2 * pi * x / P) * std::cos(2 * pi * y / Q) + 0.1 * std::sin(2 * pi * z / R) +
                    0.1 * (bp::hash32((uint32_t)((z * Q + y) * P + x)) % 1000) / 1000.0);
  std::vector<float> grid(cells);
  for (int z = 0; z < n; ++z)
    for (int y = 0; y < n; ++y) {
      const float* tr = &tile[((size_t)(z % R) * Q + y % Q) * P];
      float* gr = &grid[((size_t)z * n + y) * n];
      for (int x = 0; x < n; ++x) gr[x] = tr[x % P];
    }
  float *d_u, *d_v;
  BP_CK(cudaMalloc(&d_u, cells * 4));
  BP_CK(cudaMalloc(&d_v, cells * 4));
  BP_CK(cudaMemcpy(d_u, grid.data(), cells * 4, cudaMemcpyHostToDevice));
  BP_CK(cudaMemset(d_v, 0xff, cells * 4));
  bp::Timer t;
  BP_CK(cudaDeviceSynchronize());

  t.start();
  const dim3 block(32, 4, 4), g((n + 31) / 32, (n + 3) / 4, (n + 3) / 4);
  for (int s = 0; s < steps; ++s) {
    jacobi7<<<g, block>>>(d_u, d_v, n, n, n);
    float* tmp = d_u;
    d_u = d_v;
    d_v = tmp;
  }
  const float ms = t.stop();

  std::vector<float> a = tile, b(tile.size());
  for (int s = 0; s < steps; ++s) {
    for (int z = 0; z < R; ++z)
      for (int y = 0; y < Q; ++y)
        for (int x = 0; x < P; ++x) {
          auto at = [&](int xx, int yy, int zz) { return a[((size_t)((zz + R) % R) * Q + (yy + Q) % Q) * P + (xx + P) % P]; };
          const float sum = at(x - 1, y, z) + at(x + 1, y, z) + at(x, y - 1, z) + at(x, y + 1, z) + at(x, y, z - 1) + at(x, y, z + 1);
          b[((size_t)z * Q + y) * P + x] = 0.4f * at(x, y, z) + 0.1f * sum;
        }
    a.swap(b);
  }
  BP_CK(cudaMemcpy(grid.data(), d_u, cells * 4, cudaMemcpyDeviceToHost));
  size_t bad = 0, first = 0;
  for (int z = 0; z < n; ++z)
    for (int y = 0; y < n; ++y) {
      const float* tr = &a[((size_t)(z % R) * Q + y % Q) * P];
      const float* gr = &grid[((size_t)z * n + y) * n];
      for (int x = 0; x < n; ++x)
        if (!(std::fabs(gr[x] - tr[x % P]) <= 2e-5f) && bad++ == 0) first = ((size_t)z * n + y) * n + x;
    }
  if (bad) {
    const size_t x = first % n, y = first / n % n, z = first / n / n;
    bp::fail("%zu of %zu cells wrong after %d steps (first at %zu,%zu,%zu: %g, want %g)", bad, cells, steps, x, y, z,
             grid[first], a[((z % R) * Q + y % Q) * P + x % P]);
  }
  bp::result(ms, (unsigned long long)steps);
  return 0;
}

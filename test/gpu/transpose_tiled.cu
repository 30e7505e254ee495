// Tiled matrix transpose through a padded static __shared__ tile (32 x 33) with __syncthreads, 2-D grid
// of 32x8 blocks, matrix sides not multiples of 32. A pure copy: bit-exact.
#include "common.cuh"

constexpr int kTile = 32, kRows = 8;

__global__ void transpose(const float* in, float* out, int w, int h) {
  __shared__ float tile[kTile][kTile + 1];
  int x = blockIdx.x * kTile + threadIdx.x;
  int y0 = blockIdx.y * kTile + threadIdx.y;
  for (int j = 0; j < kTile; j += kRows)
    if (x < w && y0 + j < h) tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y0 + j) * w + x];
  __syncthreads();
  int ox = blockIdx.y * kTile + threadIdx.x;  // column in out (= row in in)
  int oy0 = blockIdx.x * kTile + threadIdx.y;
  for (int j = 0; j < kTile; j += kRows)
    if (ox < h && oy0 + j < w) out[(size_t)(oy0 + j) * h + ox] = tile[threadIdx.x][threadIdx.y + j];
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "transpose_tiled");
  if (tg::bench_mode()) {
    int w = 8192, h = 8192;
    tg::DevBuf<float> in((size_t)w * h), out((size_t)w * h);
    in.fill_bytes(0);
    dim3 grid(w / kTile, h / kTile), block(kTile, kRows);
    return tg::bench("transpose_tiled", [&] { transpose<<<grid, block>>>(in, out, w, h); });
  }
  for (int it = 0; it < 4; ++it) {
    int w = (int)tg::rand_int(1, 2000), h = (int)tg::rand_int(1, 2000);
    if (it == 0) w = 1;
    size_t n = (size_t)w * h;
    auto hin = tg::random_reals<float>(n, -1e6, 1e6);
    tg::DevBuf<float> in(n), out(n);
    in.upload(hin);
    out.poison();
    dim3 grid((w + kTile - 1) / kTile, (h + kTile - 1) / kTile), block(kTile, kRows);
    transpose<<<grid, block>>>(in, out, w, h);
    tg::sync_check("transpose");
    std::vector<float> want(n);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) want[(size_t)x * h + y] = hin[(size_t)y * w + x];
    tg::compare_exact(out.download(), want, "transpose");
  }
  return tg::finish();
}

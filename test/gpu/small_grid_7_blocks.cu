// Grids far smaller than the number of SMs (132 on an H100): 7 blocks, 1 block, and a 3x2 grid, each
// block looping over its own segment with a block-stride loop (blockDim, not gridDim).
#include "common.cuh"

__global__ void segment_scale(const int* in, int* out, int seg, int n) {
  int begin = blockIdx.x * seg;
  int end = min(begin + seg, n);
  for (int i = begin + threadIdx.x; i < end; i += blockDim.x) out[i] = in[i] * 3 + (int)blockIdx.x;
}

__global__ void tile_2d(const int* in, int* out, int w, int h) {
  // grid (3,2): block (bx,by) owns rows [by*h/2, ..) and cols [bx*w/3, ..)
  int x0 = blockIdx.x * w / gridDim.x, x1 = (blockIdx.x + 1) * w / gridDim.x;
  int y0 = blockIdx.y * h / gridDim.y, y1 = (blockIdx.y + 1) * h / gridDim.y;
  for (int y = y0 + threadIdx.y; y < y1; y += blockDim.y)
    for (int x = x0 + threadIdx.x; x < x1; x += blockDim.x)
      out[y * w + x] = in[y * w + x] - (int)(blockIdx.y * gridDim.x + blockIdx.x);
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "small_grid_7_blocks");
  if (tg::bench_mode()) {
    int seg = 1 << 21, n = 7 * seg;
    tg::DevBuf<int> in(n), out(n);
    in.fill_bytes(1);
    return tg::bench("small_grid_7_blocks", [&] { segment_scale<<<7, 128>>>(in, out, seg, n); });
  }
  for (int blocks : {7, 1}) {
    int seg = (int)tg::rand_int(1000, 100000);
    int n = blocks * seg - (int)tg::rand_int(0, seg - 1);
    auto h = tg::random_ints<int>(n, -1000000, 1000000);
    tg::DevBuf<int> in(n), out(n);
    in.upload(h);
    out.poison();
    segment_scale<<<blocks, 128>>>(in, out, seg, n);
    tg::sync_check("segment_scale");
    std::vector<int> want(n);
    for (int i = 0; i < n; ++i) want[i] = h[i] * 3 + i / seg;
    tg::compare_exact(out.download(), want, blocks == 7 ? "7 blocks" : "1 block");
  }
  {
    int w = (int)tg::rand_int(3, 700), hgt = (int)tg::rand_int(2, 500);
    auto h = tg::random_ints<int>((size_t)w * hgt, -1000, 1000);
    tg::DevBuf<int> in(h.size()), out(h.size());
    in.upload(h);
    out.poison();
    tile_2d<<<dim3(3, 2), dim3(32, 4)>>>(in, out, w, hgt);
    tg::sync_check("tile_2d");
    std::vector<int> want(h.size());
    for (int by = 0; by < 2; ++by)
      for (int bx = 0; bx < 3; ++bx)
        for (int y = by * hgt / 2; y < (by + 1) * hgt / 2; ++y)
          for (int x = bx * w / 3; x < (bx + 1) * w / 3; ++x) want[y * w + x] = h[y * w + x] - (by * 3 + bx);
    tg::compare_exact(out.download(), want, "3x2 grid");
  }
  return tg::finish();
}

// 2-D grid and 2-D block (dim3 shapes), sizes not multiples of the block, thread-dependent bounds check
// as the last statement. c = 2a - b is one rounding whether or not it is contracted to an FMA (2a is
// exact): bit-exact check. A second output records each element's block id.
#include "common.cuh"

__global__ void mat_op(int w, int h, const float* a, const float* b, float* c, unsigned* tag) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) {
    size_t i = (size_t)y * w + x;
    c[i] = 2.0f * a[i] - b[i];
    tag[i] = blockIdx.y * gridDim.x + blockIdx.x;
  }
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "grid2d_block2d");
  if (tg::bench_mode()) {
    int w = 8192, h = 8192;
    size_t n = (size_t)w * h;
    tg::DevBuf<float> a(n), b(n), c(n);
    tg::DevBuf<unsigned> tag(n);
    a.fill_bytes(0);
    b.fill_bytes(0);
    dim3 block(32, 8), grid((w + 31) / 32, (h + 7) / 8);
    return tg::bench("grid2d_block2d", [&] { mat_op<<<grid, block>>>(w, h, a, b, c, tag); });
  }
  const dim3 blocks[] = {dim3(16, 16), dim3(32, 4), dim3(8, 32), dim3(5, 7)};
  for (dim3 block : blocks) {
    int w = (int)tg::rand_int(1, 1500), h = (int)tg::rand_int(1, 1500);
    size_t n = (size_t)w * h;
    auto ha = tg::random_reals<float>(n, -100, 100), hb = tg::random_reals<float>(n, -100, 100);
    tg::DevBuf<float> a(n), b(n), c(n);
    tg::DevBuf<unsigned> tag(n);
    a.upload(ha);
    b.upload(hb);
    c.poison();
    tag.poison();
    dim3 grid((w + block.x - 1) / block.x, (h + block.y - 1) / block.y);
    mat_op<<<grid, block>>>(w, h, a, b, c, tag);
    tg::sync_check("mat_op");
    std::vector<float> wc(n);
    std::vector<unsigned> wt(n);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        size_t i = (size_t)y * w + x;
        wc[i] = 2.0f * ha[i] - hb[i];
        wt[i] = (y / block.y) * grid.x + x / block.x;
      }
    tg::compare_exact(c.download(), wc, "c = 2a - b");
    tg::compare_exact(tag.download(), wt, "block id per element");
  }
  return tg::finish();
}

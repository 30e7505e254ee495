// Grid-stride loops on gridDim: for (i = blockIdx.x*blockDim.x+threadIdx.x; i < n; i += gridDim.x*blockDim.x),
// with grids of 1, 7, 132, 1000 and 65536 blocks over the same n, and a 2-D grid-stride over rows with
// gridDim.y. Each element records which virtual block touched it and is counted: every element exactly once,
// by the block the original grid assigns.
#include "common.cuh"

__global__ void stride_1d(int n, const int* in, int* out, unsigned* hits) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    out[i] = in[i] ^ (int)(blockIdx.x * 2654435761u);
    atomicAdd(&hits[i], 1u);
  }
}

__global__ void stride_rows(int w, int h, const float* in, float* out) {
  for (int y = blockIdx.y; y < h; y += gridDim.y)
    for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < w; x += gridDim.x * blockDim.x)
      out[(size_t)y * w + x] = in[(size_t)y * w + x] * 0.5f + (float)(blockIdx.y % 7);
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "grid_stride_loop");
  if (tg::bench_mode()) {
    int n = 1 << 26;
    tg::DevBuf<int> in(n), out(n);
    tg::DevBuf<unsigned> hits(n);
    in.fill_bytes(0);
    return tg::bench("grid_stride_loop", [&] { stride_1d<<<132 * 8, 256>>>(n, in, out, hits); });
  }
  int n = (int)tg::rand_int(0, 3000000);
  auto h = tg::random_ints<int>(n, -2000000000, 2000000000);
  tg::DevBuf<int> in(n), out(n);
  tg::DevBuf<unsigned> hits(n);
  in.upload(h);
  for (int grid : {1, 7, 132, 1000, 65536}) {
    out.poison();
    hits.fill_bytes(0);
    stride_1d<<<grid, 128>>>(n, in, out, hits);
    tg::sync_check("stride_1d");
    std::vector<int> want(n);
    for (int i = 0; i < n; ++i) want[i] = h[i] ^ (int)((unsigned)((i / 128) % grid) * 2654435761u);
    tg::compare_exact(out.download(), want, "grid-stride output");
    tg::compare_exact(hits.download(), std::vector<unsigned>(n, 1u), "each element once");
  }
  {
    int w = (int)tg::rand_int(1, 3000), hh = (int)tg::rand_int(1, 1000);
    size_t nn = (size_t)w * hh;
    auto hin = tg::random_reals<float>(nn, -1000, 1000);
    tg::DevBuf<float> a(nn), b(nn);
    a.upload(hin);
    b.poison();
    stride_rows<<<dim3(3, 37), 64>>>(w, hh, a, b);
    tg::sync_check("stride_rows");
    std::vector<float> want(nn);
    for (int y = 0; y < hh; ++y)
      for (int x = 0; x < w; ++x) want[(size_t)y * w + x] = hin[(size_t)y * w + x] * 0.5f + (float)((y % 37) % 7);
    tg::compare_exact(b.download(), want, "2-D grid-stride");
  }
  return tg::finish();
}

// blockIdx and gridDim used only through macros expanded inside the kernels: object-like macros
// (GID, NTHREADS, BLOCK_LINEAR) and a function-like macro applied to blockIdx/gridDim.
#include "common.cuh"

#define GID (blockIdx.x * blockDim.x + threadIdx.x)
#define NTHREADS (gridDim.x * blockDim.x)
#define BLOCK_LINEAR (blockIdx.y * gridDim.x + blockIdx.x)
#define LIN2(idx, dim) ((idx).y * (dim).x + (idx).x)

__global__ void saxpy_macro(int n, float a, const float* x, float* y) {
  for (unsigned i = GID; i < (unsigned)n; i += NTHREADS) y[i] = a * x[i];
}

__global__ void tag_blocks(unsigned* out) {
  unsigned b = BLOCK_LINEAR;
  unsigned t = threadIdx.x;
  if (t == 0) out[b] = LIN2(blockIdx, gridDim) * 3u + (b == LIN2(blockIdx, gridDim));
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "blockidx_macro");
  if (tg::bench_mode()) {
    int n = 1 << 26;
    tg::DevBuf<float> x(n), y(n);
    x.fill_bytes(0);
    return tg::bench("blockidx_macro", [&] { saxpy_macro<<<(n + 255) / 256, 256>>>(n, 2.0f, x, y); });
  }
  for (int grid : {0, 5, 300}) {
    int n = (int)tg::rand_int(1, 1000000);
    int g = grid ? grid : (n + 255) / 256;
    float a = tg::rand_float(-4, 4);
    auto hx = tg::random_reals<float>(n, -100, 100);
    tg::DevBuf<float> x(n), y(n);
    x.upload(hx);
    y.poison();
    saxpy_macro<<<g, 256>>>(n, a, x, y);
    tg::sync_check("saxpy_macro");
    std::vector<float> want(n);
    for (int i = 0; i < n; ++i) want[i] = a * hx[i];
    tg::compare_exact(y.download(), want, "y = a*x via GID/NTHREADS");
  }
  {
    unsigned gx = (unsigned)tg::rand_int(1, 500), gy = (unsigned)tg::rand_int(1, 500);
    tg::DevBuf<unsigned> out((size_t)gx * gy);
    out.poison();
    tag_blocks<<<dim3(gx, gy), 32>>>(out);
    tg::sync_check("tag_blocks");
    std::vector<unsigned> want((size_t)gx * gy);
    for (size_t b = 0; b < want.size(); ++b) want[b] = (unsigned)b * 3u + 1u;
    tg::compare_exact(out.download(), want, "BLOCK_LINEAR / LIN2(blockIdx, gridDim)");
  }
  return tg::finish();
}

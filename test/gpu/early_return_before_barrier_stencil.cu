// A tiled stencil whose edge threads return early (docs/user/ptb-transform.md, "Parking"): each block loads a
// tile with a halo of R cells into shared memory, then runs R steps of a 5-point stencil in shared memory,
// double-buffered with a barrier after each step; before step s the threads of the outer s rings return
// (their cells are no longer valid), so every step's barrier is met by fewer threads, and the ones that
// returned in earlier steps (exited in the original, parked in the transformed build) are not there.
// Integer arithmetic: exact. The CPU replays the tile semantics: the input extended by clamping, then R
// steps on the unbounded grid.
#include "common.cuh"

__global__ void stencil(const int* in, int* out, int w, int h, int r) {
  __shared__ int s[2][32][32];
  const int tile = blockDim.x - 2 * r;  // blockDim.x == blockDim.y
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int gx = blockIdx.x * tile + tx - r, gy = blockIdx.y * tile + ty - r;
  const int cx = min(max(gx, 0), w - 1), cy = min(max(gy, 0), h - 1);
  // Distance to the tile's edge: ring 0 is the outermost.
  const int ring = min(min(tx, ty), min((int)blockDim.x - 1 - tx, (int)blockDim.y - 1 - ty));
  s[0][ty][tx] = in[cy * w + cx];
  __syncthreads();
  int cur = 0;
  for (int step = 1; step <= r; ++step) {
    if (ring < step) return;  // an edge thread: its neighbours of the last step are not all valid
    const int c = s[cur][ty][tx], n = s[cur][ty - 1][tx], so = s[cur][ty + 1][tx], e = s[cur][ty][tx + 1],
              we = s[cur][ty][tx - 1];
    s[cur ^ 1][ty][tx] = (4 * c + n + so + e + we) / 8 + step;
    __syncthreads();
    cur ^= 1;
  }
  if (gx < w && gy < h) out[gy * w + gx] = s[cur][ty][tx];
}

static std::vector<int> cpu(const std::vector<int>& in, int w, int h, int r) {
  const int W = w + 2 * r, H = h + 2 * r;
  std::vector<int> a(W * H), b(W * H);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      int cx = std::min(std::max(x - r, 0), w - 1), cy = std::min(std::max(y - r, 0), h - 1);
      a[y * W + x] = in[cy * w + cx];
    }
  for (int step = 1; step <= r; ++step) {
    for (int y = step; y < H - step; ++y)
      for (int x = step; x < W - step; ++x) {
        const int c = a[y * W + x], n = a[(y - 1) * W + x], so = a[(y + 1) * W + x], e = a[y * W + x + 1],
                  we = a[y * W + x - 1];
        b[y * W + x] = (4 * c + n + so + e + we) / 8 + step;
      }
    std::swap(a, b);
  }
  std::vector<int> out(w * h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) out[y * w + x] = a[(y + r) * W + x + r];
  return out;
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "early_return_before_barrier_stencil");
  if (tg::bench_mode()) {
    int w = 4099, h = 4097, r = 3, bd = 16, tile = bd - 2 * r;
    tg::DevBuf<int> in((size_t)w * h), out((size_t)w * h);
    in.fill_bytes(1);
    dim3 grid((w + tile - 1) / tile, (h + tile - 1) / tile);
    return tg::bench("early_return_before_barrier_stencil",
                     [&] { stencil<<<grid, dim3(bd, bd)>>>(in, out, w, h, r); });
  }
  struct Shape { int bd, r; };
  for (Shape sh : {Shape{16, 3}, Shape{32, 5}, Shape{8, 1}, Shape{12, 2}, Shape{32, 1}}) {
    int w = (int)tg::rand_int(1, 700), h = (int)tg::rand_int(1, 700);
    int tile = sh.bd - 2 * sh.r;
    auto hin = tg::random_ints<int>((size_t)w * h, -100000, 100000);
    tg::DevBuf<int> in((size_t)w * h), out((size_t)w * h);
    in.upload(hin);
    out.poison();
    dim3 grid((w + tile - 1) / tile, (h + tile - 1) / tile);
    stencil<<<grid, dim3(sh.bd, sh.bd)>>>(in, out, w, h, sh.r);
    tg::sync_check("stencil");
    tg::compare_exact(out.download(), cpu(hin, w, h, sh.r), "stencil");
  }
  return tg::finish();
}

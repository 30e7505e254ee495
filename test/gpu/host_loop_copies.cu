// The host side of an image-diffusion solver: a host loop of 20 iterations, each copying the image to the
// device with cudaMemcpy on the legacy stream, launching two kernels once each (16x16 blocks, a 128x128
// grid, five 16x16 shared tiles per block), copying the image back and working on it on the host (the
// next iteration's kernel argument comes from it); a scratch buffer allocated and freed in every
// iteration. Before the loop the program makes an invalid launch and does not read its error: a plain
// CUDA program keeps that error for its next cudaGetLastError, so the runtime must neither consume it nor
// let it turn confinement off (a solver of this shape ran 19 of its 20 iterations unconfined, with no
// word). Integer arithmetic: the CPU replays it exactly.
#include "common.cuh"

constexpr int kTile = 16;

// The coefficient of each pixel from its 4 neighbours (clamped at the image's edge), through shared tiles.
__global__ void diffusion_coefficients(const unsigned* img, unsigned* coef, int cols, int rows, unsigned bias) {
  __shared__ unsigned center[kTile][kTile];
  __shared__ unsigned north[kTile][kTile];
  __shared__ unsigned south[kTile][kTile];
  __shared__ unsigned east[kTile][kTile];
  __shared__ unsigned west[kTile][kTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int x = blockIdx.x * kTile + tx, y = blockIdx.y * kTile + ty;
  const int yn = y > 0 ? y - 1 : 0, ys = y + 1 < rows ? y + 1 : rows - 1;
  const int xw = x > 0 ? x - 1 : 0, xe = x + 1 < cols ? x + 1 : cols - 1;
  center[ty][tx] = img[y * cols + x];
  north[ty][tx] = img[yn * cols + x];
  south[ty][tx] = img[ys * cols + x];
  __syncthreads();
  west[ty][tx] = img[y * cols + xw];
  east[ty][tx] = img[y * cols + xe];
  __syncthreads();
  const unsigned c = center[ty][tx];
  const unsigned grad = (north[ty][tx] ^ c) + (south[ty][tx] ^ c) + (east[ty][tx] ^ c) + (west[ty][tx] ^ c);
  __syncthreads();
  coef[y * cols + x] = (grad * 2654435761u + bias) >> 7;
}

// The update of each pixel from its coefficient and its east and south neighbours' coefficients.
__global__ void diffusion_update(unsigned* img, const unsigned* coef, int cols, int rows, unsigned step) {
  __shared__ unsigned tile[kTile + 1][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int x = blockIdx.x * kTile + tx, y = blockIdx.y * kTile + ty;
  tile[ty][tx] = coef[y * cols + x];
  if (tx == kTile - 1) tile[ty][kTile] = coef[y * cols + (x + 1 < cols ? x + 1 : x)];
  if (ty == kTile - 1) tile[kTile][tx] = coef[(y + 1 < rows ? y + 1 : y) * cols + x];
  __syncthreads();
  img[y * cols + x] += (tile[ty][tx] + tile[ty][tx + 1] + tile[ty + 1][tx]) * step;
}

// Never runs: launched with an invalid block to leave an error pending.
__global__ void never_runs(unsigned* p) { p[threadIdx.x] = 1; }

static void cpu_iteration(std::vector<unsigned>& img, std::vector<unsigned>& coef, int cols, int rows, unsigned bias,
                          unsigned step) {
  for (int y = 0; y < rows; ++y)
    for (int x = 0; x < cols; ++x) {
      const int yn = y > 0 ? y - 1 : 0, ys = y + 1 < rows ? y + 1 : rows - 1;
      const int xw = x > 0 ? x - 1 : 0, xe = x + 1 < cols ? x + 1 : cols - 1;
      const unsigned c = img[y * cols + x];
      const unsigned grad = (img[yn * cols + x] ^ c) + (img[ys * cols + x] ^ c) + (img[y * cols + xe] ^ c) +
                            (img[y * cols + xw] ^ c);
      coef[y * cols + x] = (grad * 2654435761u + bias) >> 7;
    }
  for (int y = 0; y < rows; ++y)
    for (int x = 0; x < cols; ++x) {
      const unsigned e = coef[y * cols + (x + 1 < cols ? x + 1 : x)], s = coef[(y + 1 < rows ? y + 1 : y) * cols + x];
      img[y * cols + x] += (coef[y * cols + x] + e + s) * step;
    }
}

// The host's work between iterations: the next bias from a region of the image.
static unsigned region_sum(const std::vector<unsigned>& img, int cols) {
  unsigned s = 0;
  for (int y = 0; y < 128; ++y)
    for (int x = 0; x < 128; ++x) s += img[y * cols + x] >> 3;
  return s;
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "host_loop_copies");
  const int cols = 128 * kTile, rows = 128 * kTile, iterations = 20;
  const size_t n = size_t(cols) * rows;
  std::vector<unsigned> img = tg::random_ints<unsigned>(n, 0, 0xffffffffll), want = img, coef_cpu(n);
  unsigned *d_img = nullptr, *d_coef = nullptr;
  CUDA_CHECK(cudaMalloc(&d_img, n * sizeof(unsigned)));
  CUDA_CHECK(cudaMalloc(&d_coef, n * sizeof(unsigned)));

  dim3 block(kTile, kTile), grid(cols / kTile, rows / kTile);
  if (tg::bench_mode())
    return tg::bench("host_loop_copies", [&] { diffusion_coefficients<<<grid, block>>>(d_img, d_coef, cols, rows, 7u); });

  // An error left pending on purpose (2048 threads: more than any device's block).
  never_runs<<<1, 2048>>>(d_coef);
  const cudaError_t pending = cudaPeekAtLastError();
  tg::check(pending != cudaSuccess, "the invalid launch reported no error");

  unsigned bias = 12345u, step = 1u + static_cast<unsigned>(tg::rand_int(0, 5));
  unsigned long long launches = 0;
  for (int it = 0; it < iterations; ++it) {
    unsigned* scratch = nullptr;  // allocated and freed between launches, as hosts often do
    CUDA_CHECK(cudaMalloc(&scratch, (1 + it) * 4096));
    cudaMemcpy(d_img, img.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice);  // errors read at the end
    diffusion_coefficients<<<grid, block>>>(d_img, d_coef, cols, rows, bias);
    diffusion_update<<<grid, block>>>(d_img, d_coef, cols, rows, step);
    launches += 2;
    cudaMemcpy(img.data(), d_img, n * sizeof(unsigned), cudaMemcpyDeviceToHost);
    CUDA_CHECK(cudaFree(scratch));
    cpu_iteration(want, coef_cpu, cols, rows, bias, step);
    if (!tg::check(img == want, "image differs from the CPU's after iteration %d", it)) break;
    bias = region_sum(img, cols);
  }
  // The error from before the loop is still the thread's last error, as in a plain program.
  const cudaError_t last = cudaGetLastError();
  tg::check(last == pending, "cudaGetLastError after the loop: %s, expected the pending %s", cudaGetErrorName(last),
            cudaGetErrorName(pending));
  tg::check(cudaGetLastError() == cudaSuccess, "a second cudaGetLastError still reports an error");
  tg::check_twins(launches, "host loop");
  CUDA_CHECK(cudaFree(d_img));
  CUDA_CHECK(cudaFree(d_coef));
  return tg::finish();
}

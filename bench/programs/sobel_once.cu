// (a) A program of one launch: Sobel edge strength of a 16384 x 8192 8-bit image (16x16 blocks), timed
// from before its first (and only) launch, so whatever a first launch costs is in its time.
//   sobel_once [--w 16384] [--h 8192]
// Output: |gx| + |gy| of the 3x3 Sobel operator at every interior pixel, 0 on the border (16-bit).
// Check: every 7th pixel (which hits every block) against the CPU; the output starts poisoned.
#include "bp.cuh"

#include <vector>

__global__ void sobel(const unsigned char* __restrict__ img, unsigned short* __restrict__ out, int w, int h) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  if (x == 0 || y == 0 || x == w - 1 || y == h - 1) {
    out[(size_t)y * w + x] = 0;
    return;
  }
  const unsigned char* r0 = img + (size_t)(y - 1) * w;
  const unsigned char* r1 = img + (size_t)y * w;
  const unsigned char* r2 = img + (size_t)(y + 1) * w;
  const int gx = (r0[x + 1] + 2 * r1[x + 1] + r2[x + 1]) - (r0[x - 1] + 2 * r1[x - 1] + r2[x - 1]);
  const int gy = (r2[x - 1] + 2 * r2[x] + r2[x + 1]) - (r0[x - 1] + 2 * r0[x] + r0[x + 1]);
  out[(size_t)y * w + x] = (unsigned short)(abs(gx) + abs(gy));
}

static unsigned short sobel_cpu(const std::vector<unsigned char>& img, int w, int h, int x, int y) {
  if (x == 0 || y == 0 || x == w - 1 || y == h - 1) return 0;
  auto p = [&](int xx, int yy) { return (int)img[(size_t)yy * w + xx]; };
  const int gx = (p(x + 1, y - 1) + 2 * p(x + 1, y) + p(x + 1, y + 1)) - (p(x - 1, y - 1) + 2 * p(x - 1, y) + p(x - 1, y + 1));
  const int gy = (p(x - 1, y + 1) + 2 * p(x, y + 1) + p(x + 1, y + 1)) - (p(x - 1, y - 1) + 2 * p(x, y - 1) + p(x + 1, y - 1));
  return (unsigned short)(std::abs(gx) + std::abs(gy));
}

int main(int argc, char** argv) {
  bp::program_name() = "sobel_once";
  const int w = (int)bp::arg(argc, argv, "--w", 16384), h = (int)bp::arg(argc, argv, "--h", 8192);
  const size_t n = (size_t)w * h;
  std::vector<unsigned char> img(n);
  for (int y = 0; y < h; ++y)  // smooth gradients plus noise: edges of every strength
    for (int x = 0; x < w; ++x) {
      const size_t i = (size_t)y * w + x;
      img[i] = (unsigned char)(((x * 3 + y * 5) >> 4) + (bp::hash32((uint32_t)i) & 31));
    }
  unsigned char* d_img;
  unsigned short* d_out;
  BP_CK(cudaMalloc(&d_img, n));
  BP_CK(cudaMalloc(&d_out, n * sizeof(unsigned short)));
  BP_CK(cudaMemcpy(d_img, img.data(), n, cudaMemcpyHostToDevice));
  BP_CK(cudaMemset(d_out, 0xff, n * sizeof(unsigned short)));  // poison: 65535 is never a result
  bp::Timer t;
  BP_CK(cudaDeviceSynchronize());

  t.start();
  dim3 block(16, 16), grid((w + 15) / 16, (h + 15) / 16);
  sobel<<<grid, block>>>(d_img, d_out, w, h);
  const float ms = t.stop();

  std::vector<unsigned short> out(n);
  BP_CK(cudaMemcpy(out.data(), d_out, n * sizeof(unsigned short), cudaMemcpyDeviceToHost));
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < n; i += 7) {
    const int x = (int)(i % w), y = (int)(i / w);
    if (out[i] != sobel_cpu(img, w, h, x, y) && bad++ == 0) first = i;
  }
  if (bad) bp::fail("%zu of %zu checked pixels wrong (first at %zu: %u, want %u)", bad, n / 7, first, out[first],
                    sobel_cpu(img, w, h, (int)(first % w), (int)(first / w)));
  bp::result(ms, 1);
  return 0;
}

// Warp shuffles: __shfl_down_sync tree reductions (float, per warp then across warps through shared
// memory), __shfl_xor_sync all-reduce (every lane must get the total), __shfl_sync broadcast. The float
// order is fixed and replayed by the CPU: bit-exact.
#include "common.cuh"

__device__ float warp_sum_down(float v) {
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  return v;
}

__global__ void block_sum_shfl(const float* in, float* out, int n) {
  __shared__ float warp_part[32];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? in[i] : 0.0f;
  v = warp_sum_down(v);
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32, nw = blockDim.x / 32;
  if (lane == 0) warp_part[warp] = v;
  __syncthreads();
  if (warp == 0) {
    float p = lane < nw ? warp_part[lane] : 0.0f;
    p = warp_sum_down(p);
    if (lane == 0) out[blockIdx.x] = p;
  }
}

__global__ void allreduce_xor(const int* in, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? in[i] : 0;
  for (int m = 16; m > 0; m >>= 1) v += __shfl_xor_sync(0xffffffffu, v, m);
  int leader = __shfl_sync(0xffffffffu, i, 0);  // broadcast lane 0's index
  if (i < n) out[i] = v * 2 + (leader == (i & ~31));
}

static float cpu_warp(const float* v32) {
  float v[32];
  memcpy(v, v32, sizeof v);
  for (int off = 16; off > 0; off >>= 1)
    for (int l = 0; l < off; ++l) v[l] = v[l] + v[l + off];  // lanes >= off do not affect lane 0
  return v[0];
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "warp_shuffle_reduce");
  if (tg::bench_mode()) {
    int n = 1 << 27;
    tg::DevBuf<float> in(n), out(n / 256);
    in.fill_bytes(0);
    return tg::bench("warp_shuffle_reduce", [&] { block_sum_shfl<<<n / 256, 256>>>(in, out, n); });
  }
  for (int bs : {32, 256, 1024, 96}) {
    int n = (int)tg::rand_int(1, 2000000);
    auto h = tg::random_reals<float>(n, -1, 1);
    int nb = (n + bs - 1) / bs;
    tg::DevBuf<float> in(n), out(nb);
    in.upload(h);
    out.poison();
    block_sum_shfl<<<nb, bs>>>(in, out, n);
    tg::sync_check("block_sum_shfl");
    std::vector<float> want(nb);
    int nw = bs / 32;
    for (int b = 0; b < nb; ++b) {
      float parts[32] = {0};
      for (int w = 0; w < nw; ++w) {
        float v[32];
        for (int l = 0; l < 32; ++l) {
          size_t i = (size_t)b * bs + w * 32 + l;
          v[l] = i < (size_t)n ? h[i] : 0.0f;
        }
        parts[w] = cpu_warp(v);
      }
      want[b] = cpu_warp(parts);
    }
    tg::compare_exact(out.download(), want, "block sums via __shfl_down_sync");
  }
  {
    int n = (int)tg::rand_int(1, 1000000);
    auto h = tg::random_ints<int>(n, -100000, 100000);
    tg::DevBuf<int> in(n), out(n);
    in.upload(h);
    out.poison();
    allreduce_xor<<<(n + 127) / 128, 128>>>(in, out, n);
    tg::sync_check("allreduce_xor");
    std::vector<int> want(n);
    for (int w0 = 0; w0 < n; w0 += 32) {
      int s = 0;
      for (int l = w0; l < std::min(n, w0 + 32); ++l) s += h[l];
      for (int l = w0; l < std::min(n, w0 + 32); ++l) want[l] = s * 2 + 1;
    }
    tg::compare_exact(out.download(), want, "__shfl_xor_sync all-reduce");
  }
  return tg::finish();
}

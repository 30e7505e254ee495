// A __host__ __device__ function that reads blockIdx/gridDim in its device branch (#ifdef __CUDA_ARCH__)
// and is also called from host code, and a __device__ function reading blockIdx that a kernel and a
// __host__ __device__ function's device branch both call. The host uses stay as they are; the kernels'
// PTB twins must see the virtual block in both.
#include "common.cuh"

__device__ unsigned dev_block_linear() { return blockIdx.y * gridDim.x + blockIdx.x; }

__host__ __device__ unsigned hd_block_or_host(unsigned host_value) {
#ifdef __CUDA_ARCH__
  (void)host_value;
  return dev_block_linear() * 2u + (gridDim.x * gridDim.y == 0);
#else
  return host_value;
#endif
}

__global__ void use_hd(unsigned* out) {
  if (threadIdx.x == 0) out[blockIdx.y * gridDim.x + blockIdx.x] = hd_block_or_host(0) + dev_block_linear();
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "hd_function_blockidx");
  if (tg::bench_mode()) {
    dim3 grid(4096, 1024);
    tg::DevBuf<unsigned> out((size_t)grid.x * grid.y);
    return tg::bench("hd_function_blockidx", [&] { use_hd<<<grid, 64>>>(out); });
  }
  unsigned hv = (unsigned)tg::rand_int(0, 1000000);
  tg::check(hd_block_or_host(hv) == hv, "host call of the __host__ __device__ function returned %u, want %u",
            hd_block_or_host(hv), hv);
  dim3 grid((unsigned)tg::rand_int(1, 2000), (unsigned)tg::rand_int(1, 500));
  size_t nb = (size_t)grid.x * grid.y;
  tg::DevBuf<unsigned> out(nb);
  out.poison();
  use_hd<<<grid, (unsigned)tg::rand_int(1, 128)>>>(out);
  tg::sync_check("use_hd");
  std::vector<unsigned> want(nb);
  for (size_t b = 0; b < nb; ++b) want[b] = (unsigned)b * 3u;
  tg::compare_exact(out.download(), want, "__host__ __device__ function reading blockIdx");
  return tg::finish();
}

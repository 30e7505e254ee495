// A Tensor-Core-like and a CUDA-Core-like kernel for the fuse-kernels command-line tests.
__global__ void tc(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] *= 2.0f;
  __syncthreads();
}

__global__ void cd(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = sinf(p[i]);
}

__global__ void scale(float *p, float s) { p[blockIdx.x * blockDim.x + threadIdx.x] *= s; }

__global__ void shift(float *p, float s) { p[blockIdx.x * blockDim.x + threadIdx.x] += s; }

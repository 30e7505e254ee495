// A kernel in a namespace, in a file of its own, for the fuse-kernels tests.
namespace ns {
struct Params {
  float *p;
  int n;
};
__global__ void k(Params q) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < q.n) q.p[i] += 1.0f;
}
}

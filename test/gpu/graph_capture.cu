// CUDA Graph stream capture (cudaStreamCaptureModeGlobal): four launches in three forms (<<<g,b,0,s>>>,
// <<<g,b,shmem,s>>> with dynamic shared memory, cudaLaunchKernel(..., s)) and a 1-thread counter kernel are
// captured, instantiated, and the graph is replayed 5 times with new input between replays (copied in
// outside the graph). Each replay's outputs are checked, including state carried across replays.
#include "common.cuh"

__global__ void affine(const int* x, int* y, int n, int a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + 1;
}

__global__ void block_sums(const int* y, long long* part, int n) {
  extern __shared__ long long s[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? y[i] : 0;
  __syncthreads();
  for (unsigned w = blockDim.x / 2; w > 0; w >>= 1) {
    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) part[blockIdx.x] = s[0];
}

__global__ void accumulate(const long long* part, long long* acc, int np) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < np) acc[i] += part[i];
}

__global__ void bump(int* counter) { atomicAdd(counter, 1); }

int main(int argc, char** argv) {
  tg::init(argc, argv, "graph_capture");
  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const bool bench = tg::bench_mode();
  int n = bench ? (1 << 26) : (int)tg::rand_int(1, 1000000);
  const int bs = 256;
  int np = (n + bs - 1) / bs;
  int a = (int)tg::rand_int(-50, 50);
  tg::DevBuf<int> x(n), y(n), counter(1);
  tg::DevBuf<long long> part(np), acc(np);
  x.fill_bytes(0);
  y.poison();
  part.poison();
  acc.fill_bytes(0);
  counter.fill_bytes(0);
  CUDA_CHECK(cudaDeviceSynchronize());

  cudaGraph_t graph;
  CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  affine<<<np, bs, 0, s>>>(x, y, n, a);
  block_sums<<<dim3(np), dim3(bs), bs * sizeof(long long), s>>>(y, part, n);
  {
    const long long* pp = part.p;
    long long* ap = acc.p;
    void* args[] = {&pp, &ap, &np};
    CUDA_CHECK(cudaLaunchKernel((const void*)accumulate, dim3((np + 127) / 128), dim3(128), args, 0, s));
  }
  bump<<<1, 1, 0, s>>>(counter);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaStreamEndCapture(s, &graph));
  cudaGraphExec_t exec;
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  size_t nodes = 0;
  CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
  printf("captured graph: %zu nodes\n", nodes);
  tg::check(nodes >= 4, "captured graph has %zu nodes, want at least 4 (one per launch)", nodes);

  if (bench) {
    printf("(bench times one replay of the captured graph)\n");
    return tg::bench("graph_capture", s, [&] { CUDA_CHECK(cudaGraphLaunch(exec, s)); });
  }
  std::vector<long long> hacc(np, 0);
  for (int r = 0; r < 5; ++r) {
    auto hx = tg::random_ints<int>(n, -100000, 100000);
    x.upload(hx);
    y.poison();
    part.poison();
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaGraphLaunch(exec, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    tg::sync_check("graph replay");
    std::vector<int> wy(n);
    std::vector<long long> wp(np, 0);
    for (int i = 0; i < n; ++i) {
      wy[i] = a * hx[i] + 1;
      wp[i / bs] += wy[i];
    }
    for (int b = 0; b < np; ++b) hacc[b] += wp[b];
    tg::compare_exact(y.download(), wy, "replay: y");
    tg::compare_exact(part.download(), wp, "replay: block sums");
    tg::compare_exact(acc.download(), hacc, "replay: accumulated sums");
    int c = counter.download()[0];
    tg::check(c == r + 1, "after replay %d the counter is %d", r + 1, c);
    if (tg::state().failures) break;
  }
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  CUDA_CHECK(cudaStreamDestroy(s));
  return tg::finish();
}

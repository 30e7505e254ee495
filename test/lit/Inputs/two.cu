__global__ void first(int *p) { p[blockIdx.x] = 1; }
__global__ void second(int *p) { p[blockIdx.x] = 2; }
void run(int *p) {
  first<<<1, 1>>>(p);
  second<<<1, 1>>>(p);
}

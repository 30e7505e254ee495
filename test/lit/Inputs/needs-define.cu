#ifndef NEEDED
#error NEEDED is not defined
#endif
__global__ void k(int *p) { p[blockIdx.x] = NEEDED; }

// Kernels that a program defines but never launches, for first_launch.sh: does a first launch pay for
// the other kernels of its translation unit (their number, their size)? Included with nvcc -include.
//   -DPTB_UNUSED_SMALL   one small kernel (about 0.5 KB of SASS, like the runtime's SM discovery kernel)
//   -DPTB_UNUSED_BIG     one large kernel (about 26 KB of SASS, like a twin)
//   -DPTB_UNUSED_MANY=N  N small kernels
#pragma once
#ifdef PTB_UNUSED_SMALL
template <int Unused = 0>
__global__ void unused_small_kernel(unsigned* out) {
  if (threadIdx.x == 0) out[blockIdx.x] = blockIdx.x * 3u + 1u;
}
template __global__ void unused_small_kernel<0>(unsigned*);
#endif
#ifdef PTB_UNUSED_MANY
#include <utility>
template <int I>
__global__ void unused_many_kernel(unsigned* out) {
  if (threadIdx.x == 0) out[blockIdx.x] = blockIdx.x * 3u + I;
}
template <int... I>
const void* const* unused_many_table(std::integer_sequence<int, I...>) {  // instantiates each kernel
  static const void* const t[] = {reinterpret_cast<const void*>(unused_many_kernel<I>)...};
  return t;
}
static const void* const* const unused_many = unused_many_table(std::make_integer_sequence<int, PTB_UNUSED_MANY>());
#endif
#ifdef PTB_UNUSED_BIG
template <int Unused = 0>
__global__ void unused_big_kernel(float* out, const float* in, int n) {
  float a = in[threadIdx.x], b = in[threadIdx.x + 32], c = 0.f;
#pragma unroll
  for (int i = 0; i < 150; ++i) {  // distinct constants: no folding, about 4 instructions each
    a = fmaf(a, b, 1.0f + i * 0.37f);
    b = __fdividef(b + (float)(i ^ n), a + 2.f);
    c += a * b;
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = c;
}
template __global__ void unused_big_kernel<0>(float*, const float*, int);
#endif

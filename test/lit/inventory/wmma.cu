// A WMMA tensor-core kernel (mma.h) parses and is inventoried; warp-level code is no obstacle to PTB.
// RUN: %ptb-transform --list-kernels %s | FileCheck %s
#include <mma.h>
using namespace nvcuda;

__global__ void gemm16(const half *a, const half *b, float *c, int tiles) {
  int t = blockIdx.x;
  if (t >= tiles) return;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 0.0f);
  wmma::load_matrix_sync(fa, a + t * 256, 16);
  wmma::load_matrix_sync(fb, b + t * 256, 16);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c + t * 256, fc, 16, wmma::mem_row_major);
}

// CHECK:      gemm16  ({{.*}}wmma.cu:6:17)
// CHECK-NEXT:   parameters: const half * a, const half * b, float * c, int tiles
// CHECK-NEXT:   blockIdx: direct
// CHECK-NEXT:   return at {{.*}}wmma.cu:8:19: block-uniform
// CHECK-NOT:    blocks PTB

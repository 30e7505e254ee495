// The user's single-letter macros (issue 38): `-DN=4` broke the parse in cuda.h, which clang's CUDA
// wrapper includes (nvcc does not), because clang's driver defines the command line's macros before its
// wrapper headers. The parse must survive every single-letter macro that nvcc 13 survives with the headers
// included here (all but T, U, k, o, checked with nvcc -D<letter>=4 one at a time), and the user's code
// must still see them (N, M, A below), -U included.
// RUN: %ptb-transform %s -o %t.cu -- -DA=1 -DB=4 -DC=4 -DD=4 -DE=4 -DF=4 -DG=4 -DH=4 -DI=4 -DJ=4 -DK=4 -DL=4 -DM=4 -DN=4 -DO=4 -DP=4 -DQ=4 -DR=4 -DS=4 -DV=4 -DW=4 -DX=4 -DY=4 -DZ=4 -Dk=4 -Do=4 -DGONE=1 -UGONE 2> %t.err
// RUN: FileCheck %s --check-prefix=ERR < %t.err
// RUN: %strip-directives %t.cu | FileCheck %s
// The same through --extra-arg.
// RUN: %ptb-transform %s -o %t2.cu --extra-arg=-DN=4 --extra-arg=-DM=4 --extra-arg=-DA=1 2> %t2.err
// RUN: cmp %t.cu %t2.cu
// RUN: %if nvcc %{ %nvcc -DN=4 -DM=4 -DA=1 -c %t.cu -o %t.o %}
#include <cooperative_groups.h>
#include <cuda_fp16.h>

#if !defined(N) || N != 4 || M != 4 || A != 1
#error the command line's macros did not reach the user's code
#endif
#ifdef GONE
#error -UGONE did not reach the user's code
#endif

__global__ void scale(float *data, float factor) {
  __shared__ float tile[N * M];
  tile[threadIdx.x % (N * M)] = data[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  data[blockIdx.x * blockDim.x + threadIdx.x] = tile[threadIdx.x % (N * M)] * factor * A;
}
void run(float *data) { scale<<<2, 32>>>(data, 2.0f); }

// ERR: user-macros.cu -> {{.*}}: 1 kernel made PTB, 0 left as they are, 1 launch rewritten
// CHECK: scale__ptb_launch(::ptb::LaunchConfig(2, 32), data, 2.0f);

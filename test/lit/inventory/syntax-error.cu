// A syntax error: a located diagnostic, a non-zero exit, and no output at all.
// RUN: rm -rf %t && mkdir -p %t
// RUN: not %ptb-transform %s -o %t/out.cu 2>&1 | FileCheck %s
// RUN: not test -e %t/out.cu
// RUN: not %ptb-transform --list-kernels --format=json %s > %t/inv.json 2> %t/err
// RUN: count 0 < %t/inv.json
// RUN: FileCheck %s < %t/err

__global__ void broken(float *p) {
  p[threadIdx.x] = 1.0f
}

// CHECK: syntax-error.cu:10:24: error: expected ';' after expression
// CHECK: nothing written

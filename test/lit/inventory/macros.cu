// Macro-heavy code: indices, kernels' bodies and launches behind macros.
// RUN: %ptb-transform --list-kernels --format=json %s | FileCheck %s
#define IDX_X (blockIdx.x * blockDim.x + threadIdx.x)
#define IDX_Y (blockIdx.y * blockDim.y + threadIdx.y)
#define AT(p, w) p[IDX_Y * (w) + IDX_X]
#define CHECK_LAUNCH(call) do { call; (void)cudaGetLastError(); } while (0)
#define LAUNCH_FILL(p, w) fill2d<<<dim3(w / 16, w / 16), dim3(16, 16)>>>(p, w)

__global__ void fill2d(float *p, int w) { AT(p, w) = 1.0f; }

void run(float *p, int w) {
  CHECK_LAUNCH((fill2d<<<dim3(w / 16, w / 16), dim3(16, 16)>>>(p, w)));
  LAUNCH_FILL(p, w);
}

// CHECK:        "name": "fill2d",
// CHECK:        "blockIdx": {
// CHECK-NEXT:     "used": true,
// CHECK-NEXT:     "direct": false,
// CHECK-NEXT:     "macros": [
// CHECK-NEXT:       "AT"
// CHECK-NEXT:     ],
// CHECK:        "launches": [
// CHECK:            "line": 12,
// CHECK:          "in_macro": true,
// CHECK-NEXT:     "macro": "CHECK_LAUNCH",
// CHECK-NEXT:     "in_macro_definition": false,
// CHECK:            "line": 13,
// CHECK:          "in_macro": true,
// CHECK-NEXT:     "macro": "LAUNCH_FILL",
// CHECK-NEXT:     "in_macro_definition": true,

// The JSON inventory, field by field, for a template kernel that reaches blockIdx through a macro and
// through a device function two calls deep.
// RUN: %ptb-transform --list-kernels --format=json %s -- -std=c++17 | FileCheck %s

#define GID (blockIdx.x * blockDim.x + threadIdx.x)

__device__ unsigned inner() { return gridDim.x; }
__device__ unsigned outer() { return inner() + 1; }

template <typename T, int N>
__global__ void scale(T *out, const T *in, int n) {
  __shared__ T tile[N];
  extern __shared__ float dyn[];
  if (blockIdx.x >= n) return;
  int i = GID;
  tile[threadIdx.x % N] = in[i];
  __syncthreads();
  if (i < n) out[i] = tile[threadIdx.x % N] * outer() + dyn[0];
}

void run(float *o, const float *i, int n) { scale<float, 64><<<n / 64, 64, 4>>>(o, i, n); }

// CHECK:      "version": 1,
// CHECK:      "kernels": [
// CHECK-NEXT:   {
// CHECK-NEXT:     "name": "scale",
// CHECK-NEXT:     "qualified_name": "scale",
// CHECK-NEXT:     "location": {
// CHECK-NEXT:       "file": "{{.*}}json-fields.cu",
// CHECK-NEXT:       "line": 11,
// CHECK-NEXT:       "column": 17
// CHECK-NEXT:     },
// CHECK-NEXT:     "template_parameters": [
// CHECK-NEXT:       "typename T",
// CHECK-NEXT:       "int N"
// CHECK-NEXT:     ],
// CHECK-NEXT:     "instantiations": [
// CHECK-NEXT:       "scale<float, 64>"
// CHECK-NEXT:     ],
// CHECK-NEXT:     "parameters": [
// CHECK-NEXT:       {
// CHECK-NEXT:         "name": "out",
// CHECK-NEXT:         "type": "T *",
// CHECK-NEXT:         "pack": false
// CHECK-NEXT:       },
// CHECK:            "name": "n",
// CHECK-NEXT:         "type": "int",
// CHECK:          "builtins": {
// CHECK-NEXT:       "blockIdx": {
// CHECK-NEXT:         "used": true,
// CHECK-NEXT:         "direct": true,
// CHECK-NEXT:         "macros": [
// CHECK-NEXT:           "GID"
// CHECK-NEXT:         ],
// CHECK-NEXT:         "call_chains": []
// CHECK-NEXT:       },
// CHECK-NEXT:       "gridDim": {
// CHECK-NEXT:         "used": true,
// CHECK-NEXT:         "direct": false,
// CHECK-NEXT:         "macros": [],
// CHECK-NEXT:         "call_chains": [
// CHECK-NEXT:           [
// CHECK-NEXT:             "outer",
// CHECK-NEXT:             "inner"
// CHECK-NEXT:           ]
// CHECK-NEXT:         ]
// CHECK-NEXT:       },
// CHECK-NEXT:       "threadIdx": {
// CHECK-NEXT:         "used": true,
// CHECK-NEXT:         "direct": true,
// CHECK:          "barriers": [
// CHECK-NEXT:       {
// CHECK-NEXT:         "kind": "__syncthreads",
// CHECK-NEXT:         "block_wide": true,
// CHECK-NEXT:         "location": {
// CHECK-NEXT:           "file": "{{.*}}",
// CHECK-NEXT:           "line": 17,
// CHECK:          "returns": [
// CHECK-NEXT:       {
// CHECK-NEXT:         "location": {
// CHECK-NEXT:           "file": "{{.*}}",
// CHECK-NEXT:           "line": 14,
// CHECK-NEXT:           "column": 24
// CHECK-NEXT:         },
// CHECK-NEXT:         "block_uniform": true,
// CHECK-NEXT:         "reason": ""
// CHECK:          "shared_memory": {
// CHECK-NEXT:       "static_bytes": null,
// CHECK-NEXT:       "static": [
// CHECK-NEXT:         {
// CHECK-NEXT:           "name": "tile",
// CHECK-NEXT:           "type": "T[N]",
// CHECK-NEXT:           "bytes": null,
// CHECK:            "dynamic": [
// CHECK-NEXT:         {
// CHECK-NEXT:           "name": "dyn",
// CHECK-NEXT:           "type": "float[]",
// CHECK:          "callees": [
// CHECK-NEXT:       "inner",
// CHECK-NEXT:       "outer"
// CHECK-NEXT:     ],
// CHECK-NEXT:     "tasks_independent": false,
// CHECK-NEXT:     "task_coupling": "__shared__ tile",
// CHECK-NEXT:     "blockers": [],
// CHECK-NEXT:     "ptb_eligible": true,
// CHECK-NEXT:     "launches": [
// CHECK-NEXT:       {
// CHECK-NEXT:         "form": "<<<>>>",
// CHECK-NEXT:         "location": {
// CHECK-NEXT:           "file": "{{.*}}json-fields.cu",
// CHECK-NEXT:           "line": 21,
// CHECK-NEXT:           "column": 45
// CHECK-NEXT:         },
// CHECK-NEXT:         "template_args": "float, 64",
// CHECK-NEXT:         "in_macro": false,
// CHECK-NEXT:         "macro": "",
// CHECK-NEXT:         "in_macro_definition": false,
// CHECK-NEXT:         "function": "run",
// CHECK-NEXT:         "from_device_code": false
// CHECK-NEXT:       }
// CHECK-NEXT:     ],
// CHECK-NEXT:     "parked_returns": []
// CHECK-NEXT:   }
// CHECK-NEXT: ],
// CHECK-NEXT: "other_launches": []

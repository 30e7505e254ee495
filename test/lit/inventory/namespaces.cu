// Kernels in namespaces (named, nested, anonymous) are found with their qualified names.
// RUN: %ptb-transform --list-kernels %s | FileCheck %s
namespace outer {
namespace inner {
__global__ void k1(int *p) { p[blockIdx.x] = 1; }
} // namespace inner
__global__ void k2(int *p) { p[threadIdx.x] = 2; }
} // namespace outer
namespace {
__global__ void k3(int *p) { p[0] = 3; }
}
void run(int *p) {
  outer::inner::k1<<<1, 1>>>(p);
  outer::k2<<<1, 1>>>(p);
  k3<<<1, 1>>>(p);
}
// CHECK: outer::inner::k1  ({{.*}}namespaces.cu:5:17)
// CHECK:   launch: {{.*}}namespaces.cu:13:3 <<<>>> in run
// CHECK: outer::k2  ({{.*}}namespaces.cu:7:17)
// CHECK: (anonymous namespace)::k3  ({{.*}}namespaces.cu:10:17)

// Templates: parameters as written, every instantiation, explicit and deduced template arguments at
// launch sites, non-type and pack parameters.
// RUN: %ptb-transform --list-kernels %s | FileCheck %s

template <typename T, int Block = 128>
__global__ void axpy(T a, const T *x, T *y, int n) {
  int i = blockIdx.x * Block + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}

template <typename... Ts>
__global__ void pack(int *out, Ts... vs) { out[blockIdx.x] = sizeof...(Ts); }

void run(float *fx, float *fy, double *dx, double *dy, int *o, int n) {
  axpy<float><<<n / 128, 128>>>(2.0f, fx, fy, n);
  axpy<<<n / 128, 128>>>(2.0, dx, dy, n);
  axpy<double, 256><<<n / 256, 256>>>(2.0, dx, dy, n);
  pack<<<1, 1>>>(o, 1, 2.0f, 'c');
}

// CHECK:      axpy <typename T, int Block = 128>  ({{.*}}templates.cu:6:17)
// CHECK-NEXT:   parameters: T a, const T * x, T * y, int n
// CHECK-NEXT:   instantiations: axpy<double, 128>, axpy<double, 256>, axpy<float, 128>
// CHECK:        launch: {{.*}}templates.cu:15:3 <<<>>> <float> in run
// CHECK-NEXT:   launch: {{.*}}templates.cu:16:3 <<<>>> in run
// CHECK-NEXT:   launch: {{.*}}templates.cu:17:3 <<<>>> <double, 256> in run
// CHECK:      pack <typename... Ts>  ({{.*}}templates.cu:12:17)
// CHECK-NEXT:   parameters: int * out, Ts... vs
// CHECK-NEXT:   instantiations: pack<int, float, char>
// CHECK:        launch: {{.*}}templates.cu:18:3 <<<>>> in run

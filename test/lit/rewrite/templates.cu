// Template kernels: the twin, task and launcher are templates with the same parameters; explicit
// template arguments stay on the launcher call, deduced ones are deduced by it; packs are forwarded.
// RUN: %ptb-transform %s -o %t.cu
// RUN: %strip-directives %t.cu | FileCheck %s
// RUN: %if nvcc %{ %nvcc -c %t.cu -o %t.o %}

template <typename T, int Unroll = 2>
__global__ void __launch_bounds__(128) scale(T *__restrict__ y, const T *__restrict__ x, T a, int n) {
  for (int u = 0; u < Unroll; ++u) {
    int i = (blockIdx.x * Unroll + u) * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
  }
}

template <typename... Ts>
__global__ void count_args(int *out, Ts... vs) { out[blockIdx.x] = sizeof...(vs); }

void run(float *yf, const float *xf, double *yd, const double *xd, int *o, int n) {
  scale<float><<<n / 256, 128>>>(yf, xf, 2.0f, n);
  scale<<<n / 256, 128>>>(yd, xd, 2.0, n);
  scale<double, 4><<<n / 512, 128>>>(yd, xd, 2.0, n);
  count_args<<<1, 1>>>(o, 1, 2.0f, 'c');
}

// CHECK:      // PTB twin of scale
// CHECK-NEXT: #line 7 "{{.*}}templates.cu"
// CHECK-NEXT: template <typename T, int Unroll = 2>
// CHECK-NEXT: static __device__ __forceinline__ void scale__ptb_task(const uint3 blockIdx, const dim3 gridDim, T *__restrict__ y, const T *__restrict__ x, T a, int n)
// CHECK:      template <typename T, int Unroll = 2>
// CHECK-NEXT: __global__ void __launch_bounds__(128) scale__ptb(T *__restrict__ y, const T *__restrict__ x, T a, int n, const ::ptb::Launch ptb_launch) {
// CHECK-NEXT:   ::ptb::run_tasks<::ptb::TaskSync::none>(ptb_launch, [&](const uint3 ptb_block, const dim3 ptb_grid) {
// CHECK-NEXT:     scale__ptb_task<T, Unroll>(ptb_block, ptb_grid, y, x, a, n);
// CHECK:      static inline void scale__ptb_launch(const ::ptb::LaunchConfig& ptb_config, T *__restrict__ y, const T *__restrict__ x, T a, int n) {
// CHECK-NEXT:   ::ptb::launch(ptb_config, scale<T, Unroll>, scale__ptb<T, Unroll>, y, x, a, n);
// CHECK:      static __device__ __forceinline__ void count_args__ptb_task(const uint3 blockIdx, const dim3 gridDim, int *out, Ts... vs)
// CHECK:      count_args__ptb_task<Ts...>(ptb_block, ptb_grid, out, vs...);
// CHECK:      ::ptb::launch(ptb_config, count_args<Ts...>, count_args__ptb<Ts...>, out, vs...);
// CHECK:      scale__ptb_launch<float>(::ptb::LaunchConfig(n / 256, 128), yf, xf, 2.0f, n);
// CHECK-NEXT: scale__ptb_launch(::ptb::LaunchConfig(n / 256, 128), yd, xd, 2.0, n);
// CHECK-NEXT: scale__ptb_launch<double, 4>(::ptb::LaunchConfig(n / 512, 128), yd, xd, 2.0, n);
// CHECK-NEXT: count_args__ptb_launch(::ptb::LaunchConfig(1, 1), o, 1, 2.0f, 'c');

// Overloaded operators that read blockIdx/gridDim: an operator cannot be renamed in place, so its clone is
// a function with a name (`operatorPlus__ptb` for a member, `freeOperatorStar__ptb` for a non-member, a
// hidden friend staying a friend) and the virtual indices first, and the call is written as a call of it:
// `a + b` -> `(a).operatorPlus__ptb(blockIdx, gridDim, b)`, `s * v` -> `freeOperatorStar__ptb(blockIdx,
// gridDim, s, v)`, `x[i]`, `f(a)`, `f()`, `-a`, `a++`, `a += b`; nested operators, an operator in a macro
// argument, operators on dependent types in a kernel template. Operators that read neither index (Vec's
// built-in copies, float's) stay as written.
// RUN: %ptb-transform %s -o %t.cu
// RUN: %strip-directives %t.cu | FileCheck %s
// RUN: %if nvcc %{ %nvcc -c %s -o %t.orig.o %}
// RUN: %if nvcc %{ %nvcc -c %t.cu -o %t.o %}

struct Vec {
  float x, y;
  __device__ Vec operator+(const Vec &o) const { return {x + o.x + blockIdx.x, y + o.y}; }
  __device__ Vec &operator+=(const Vec &o) { x += o.x * gridDim.x; y += o.y; return *this; }
  __device__ Vec operator-() const { return {-x - blockIdx.x, -y}; }
  __device__ Vec operator++(int) { Vec old = *this; x += blockIdx.x; return old; }
};
__device__ Vec operator*(float s, const Vec &v) { return {s * v.x, s * v.y + blockIdx.y}; }

template <typename T>
struct Row {
  T *p;
  __device__ T &operator[](int i) const { return p[blockIdx.x * 32 + i]; }
};

struct Shift {
  int by;
  __device__ int operator()(int v) const { return v + by * blockIdx.x; }
  __device__ int operator()() const { return by * gridDim.x; }
};

template <typename T>
struct Acc {
  T v;
  friend __device__ Acc operator-(Acc a, Acc b) { return {a.v - b.v + T(gridDim.x)}; }
};

#define TWICE(x) ((x) + (x))

__global__ void ops(Vec *out, float *data, int *ints) {
  Vec a{1, 2}, b{3, 4};
  Vec c = a + b + a;
  c += 2.0f * a;
  Vec d = -c;
  Vec e = d++;
  Row<float> row{data};
  row[threadIdx.x] = row[threadIdx.x + 1] * 2;
  Shift sh{3};
  ints[threadIdx.x] = sh(ints[threadIdx.x]) + sh() + sh(sh(1));
  Acc<int> q{5}, r{2};
  ints[0] = (q - r).v + TWICE(sh(2));
  out[threadIdx.x] = c + d + e;
}

// The same on dependent types: the instantiation says which operator is called.
template <typename V, typename R, typename S>
__global__ void dependent(V *out, R row, S sh) {
  V a = out[0], b = out[1];
  V c = -(a + b);
  row[threadIdx.x] = row[threadIdx.x + 1] * 2 + sh(sh(1));
  out[threadIdx.x] = c++;
}

void run(Vec *o, float *d, int *i, Row<float> r, Shift s) {
  ops<<<4, 32>>>(o, d, i);
  dependent<<<4, 32>>>(o, r, s);
}

// CHECK:      __device__ Vec operator+(const Vec &o) const { return {x + o.x + blockIdx.x, y + o.y}; }
// CHECK-NEXT: // PTB clone of Vec::operator+: blockIdx/gridDim are the virtual block's
// CHECK-NEXT: __device__ Vec operatorPlus__ptb(const uint3 blockIdx, const dim3 gridDim, const Vec &o) const
// CHECK:      __device__ Vec &operatorPlusEqual__ptb(const uint3 blockIdx, const dim3 gridDim, const Vec &o)
// CHECK:      __device__ Vec operatorMinus__ptb(const uint3 blockIdx, const dim3 gridDim) const
// CHECK:      __device__ Vec operatorPlusPlus__ptb(const uint3 blockIdx, const dim3 gridDim, int ptb_param0)
// CHECK:      __device__ Vec operator*(float s, const Vec &v) { return {s * v.x, s * v.y + blockIdx.y}; }
// CHECK-NEXT: // PTB clone of operator*
// CHECK-NEXT: __device__ Vec freeOperatorStar__ptb(const uint3 blockIdx, const dim3 gridDim, float s, const Vec &v)
// CHECK:      __device__ T &operatorSubscript__ptb(const uint3 blockIdx, const dim3 gridDim, int i) const
// CHECK:      __device__ int operatorCall__ptb(const uint3 blockIdx, const dim3 gridDim, int v) const
// CHECK:      __device__ int operatorCall__ptb(const uint3 blockIdx, const dim3 gridDim) const
// CHECK:      friend __device__ Acc operator-(Acc a, Acc b) { return {a.v - b.v + T(gridDim.x)}; }
// CHECK-NEXT: // PTB clone of operator-
// CHECK-NEXT: friend __device__ Acc freeOperatorMinus__ptb(const uint3 blockIdx, const dim3 gridDim, Acc a, Acc b)
// The original kernel is left as written.
// CHECK:        Vec c = a + b + a;
// CHECK-NEXT:   c += 2.0f * a;
// CHECK:      static __device__ __forceinline__ void ops__ptb_task(
// CHECK:        Vec a{1, 2}, b{3, 4};
// CHECK-NEXT:   Vec c = ((a).operatorPlus__ptb(blockIdx, gridDim, b)).operatorPlus__ptb(blockIdx, gridDim, a);
// CHECK-NEXT:   (c).operatorPlusEqual__ptb(blockIdx, gridDim, freeOperatorStar__ptb(blockIdx, gridDim, 2.0f, a));
// CHECK-NEXT:   Vec d = (c).operatorMinus__ptb(blockIdx, gridDim);
// CHECK-NEXT:   Vec e = (d).operatorPlusPlus__ptb(blockIdx, gridDim, 0);
// CHECK-NEXT:   Row<float> row{data};
// CHECK-NEXT:   row.operatorSubscript__ptb(blockIdx, gridDim, threadIdx.x) = row.operatorSubscript__ptb(blockIdx, gridDim, threadIdx.x + 1) * 2;
// CHECK-NEXT:   Shift sh{3};
// CHECK-NEXT:   ints[threadIdx.x] = sh.operatorCall__ptb(blockIdx, gridDim, ints[threadIdx.x]) + sh.operatorCall__ptb(blockIdx, gridDim) + sh.operatorCall__ptb(blockIdx, gridDim, sh.operatorCall__ptb(blockIdx, gridDim, 1));
// CHECK-NEXT:   Acc<int> q{5}, r{2};
// CHECK-NEXT:   ints[0] = (freeOperatorMinus__ptb(blockIdx, gridDim, q, r)).v + TWICE(sh.operatorCall__ptb(blockIdx, gridDim, 2));
// CHECK-NEXT:   out[threadIdx.x] = ((c).operatorPlus__ptb(blockIdx, gridDim, d)).operatorPlus__ptb(blockIdx, gridDim, e);
// CHECK:      static __device__ __forceinline__ void dependent__ptb_task(
// CHECK:        V c = (((a).operatorPlus__ptb(blockIdx, gridDim, b))).operatorMinus__ptb(blockIdx, gridDim);
// CHECK-NEXT:   row.operatorSubscript__ptb(blockIdx, gridDim, threadIdx.x) = row.operatorSubscript__ptb(blockIdx, gridDim, threadIdx.x + 1) * 2 + sh.operatorCall__ptb(blockIdx, gridDim, sh.operatorCall__ptb(blockIdx, gridDim, 1));
// CHECK-NEXT:   out[threadIdx.x] = (c).operatorPlusPlus__ptb(blockIdx, gridDim, 0);

// Constructors that read blockIdx/gridDim, directly, in a member initializer or through what they call:
// a constructor cannot be renamed, so its clone is another constructor of the class whose first parameter
// is a ::ptb::VirtualBlock, followed by the virtual indices. Every written initialization is sent to it:
// `W w(a)`, `W w{a, b}`, `W w = W(a, b)`, `W w = W(a)` (a functional cast), `W w;`, the temporaries `W(a).f()`
// and `W{a}.m`, a member initializer `m(a)`, a delegating constructor; out of the class too, with the
// clone declared in the class after the original.
// RUN: %ptb-transform %s -o %t.cu
// RUN: %strip-directives %t.cu | FileCheck %s
// RUN: %if nvcc %{ %nvcc -c %s -o %t.orig.o %}
// RUN: %if nvcc %{ %nvcc -c %t.cu -o %t.o %}

struct Span {
  int begin, end;
  __device__ Span(int per_block) : begin(blockIdx.x * per_block), end(begin + per_block) {}
  __device__ Span(int per_block, int skip) : Span(per_block + skip) { begin += skip; }
  __device__ Span() : Span(1) {}
  __device__ int size() const { return end - begin; }
};

struct Strided {
  Span span;
  int stride;
  __device__ explicit Strided(int per_block);
};
__device__ Strided::Strided(int per_block) : span(per_block), stride(gridDim.x) {}

template <typename T>
struct Scaled {
  T factor;
  __device__ Scaled(T f) : factor(f * T(blockIdx.y + 1)) {}
  __device__ T apply(T v) const { return v * factor; }
};

__global__ void spans(int *out, int n) {
  Span a(n);
  Span b{n, 1};
  Span c = Span(n, 2);
  Span d = Span(n);
  Span e;
  Strided s(n);
  out[threadIdx.x] = a.size() + b.begin + c.end + d.begin + e.begin + Span(n).size() + s.span.begin + s.stride + Span{n}.end;
}

template <typename T>
__global__ void scaled(T *p) { p[threadIdx.x] = Scaled<T>(p[0]).apply(p[threadIdx.x]); }

void run(int *o, int n, float *f) {
  spans<<<4, 32>>>(o, n);
  scaled<<<2, 32>>>(f);
}

// CHECK:      __device__ Span(int per_block) : begin(blockIdx.x * per_block), end(begin + per_block) {}
// CHECK-NEXT: // PTB clone of Span::Span: blockIdx/gridDim are the virtual block's
// CHECK-NEXT: __device__ Span(::ptb::VirtualBlock, const uint3 blockIdx, const dim3 gridDim, int per_block) : begin(blockIdx.x * per_block), end(begin + per_block)
// CHECK-NEXT: #line 14
// CHECK-NEXT: {}
// Delegating constructors delegate to the clones.
// CHECK:      __device__ Span(::ptb::VirtualBlock, const uint3 blockIdx, const dim3 gridDim, int per_block, int skip) : Span(::ptb::VirtualBlock{}, blockIdx, gridDim, per_block + skip)
// CHECK-NEXT: #line 15
// CHECK-NEXT: { begin += skip; }
// CHECK:      __device__ Span(::ptb::VirtualBlock, const uint3 blockIdx, const dim3 gridDim) : Span(::ptb::VirtualBlock{}, blockIdx, gridDim, 1)
// CHECK:      __device__ int size() const { return end - begin; }
// CHECK-NEXT: };
// Declared in the class, defined out of it; the member initializer span(per_block) goes to Span's clone.
// CHECK:      __device__ explicit Strided(int per_block);
// CHECK-NEXT: __device__ explicit Strided(::ptb::VirtualBlock, const uint3 blockIdx, const dim3 gridDim, int per_block);
// CHECK:      __device__ Strided::Strided(int per_block) : span(per_block), stride(gridDim.x) {}
// CHECK-NEXT: // PTB clone of Strided::Strided
// CHECK-NEXT: __device__ Strided::Strided(::ptb::VirtualBlock, const uint3 blockIdx, const dim3 gridDim, int per_block) : span(::ptb::VirtualBlock{}, blockIdx, gridDim, per_block), stride(gridDim.x)
// CHECK:      __device__ Scaled(T f) : factor(f * T(blockIdx.y + 1)) {}
// CHECK-NEXT: // PTB clone of Scaled::Scaled<T>
// CHECK-NEXT: __device__ Scaled(::ptb::VirtualBlock, const uint3 blockIdx, const dim3 gridDim, T f) : factor(f * T(blockIdx.y + 1))
// The original kernel is left as written; its task calls the clones.
// CHECK:      __global__ void spans(int *out, int n) {
// CHECK-NEXT:   Span a(n);
// CHECK-NEXT:   Span b{n, 1};
// CHECK:      static __device__ __forceinline__ void spans__ptb_task(
// CHECK:        Span a(::ptb::VirtualBlock{}, blockIdx, gridDim, n);
// CHECK-NEXT:   Span b{::ptb::VirtualBlock{}, blockIdx, gridDim, n, 1};
// CHECK-NEXT:   Span c = Span(::ptb::VirtualBlock{}, blockIdx, gridDim, n, 2);
// CHECK-NEXT:   Span d = Span(::ptb::VirtualBlock{}, blockIdx, gridDim, n);
// CHECK-NEXT:   Span e(::ptb::VirtualBlock{}, blockIdx, gridDim);
// CHECK-NEXT:   Strided s(::ptb::VirtualBlock{}, blockIdx, gridDim, n);
// CHECK-NEXT:   out[threadIdx.x] = a.size() + b.begin + c.end + d.begin + e.begin + Span(::ptb::VirtualBlock{}, blockIdx, gridDim, n).size() + s.span.begin + s.stride + Span{::ptb::VirtualBlock{}, blockIdx, gridDim, n}.end;
// CHECK:      { p[threadIdx.x] = Scaled<T>(::ptb::VirtualBlock{}, blockIdx, gridDim, p[0]).apply(p[threadIdx.x]); }

// Member functions that read blockIdx/gridDim get PTB clones in their class: `f__ptb`, with the virtual
// indices as first parameters, defined after the original's definition (in the class, or out of it with
// a declaration added after the one in the class). Static or not, const or not, of a class or a class
// template, member templates too. Calls as obj.f(), p->f(), f() and this->f() in a member, Base::f(),
// W::s() and obj.s() are sent to the clones; the originals stay for the original kernels and other code.
// RUN: %ptb-transform %s -o %t.cu
// RUN: %strip-directives %t.cu | FileCheck %s
// RUN: %if nvcc %{ %nvcc -c %s -o %t.orig.o %}
// RUN: %if nvcc %{ %nvcc -c %t.cu -o %t.o %}

struct Base {
  int scale;
  __device__ int offset() const { return blockIdx.x * scale; }
};

struct Tile : Base {
  int width;
  __device__ int first() const;
  __device__ int last() const { return first() + width - 1; }
  __device__ int both() { return this->last() + Base::offset(); }
  static __device__ int blocks() { return gridDim.x; }
  __device__ int untouched() const { return width; }
};

__device__ int Tile::first() const { return blockIdx.x * width; }

template <typename T>
struct Window {
  T *data;
  int n;
  __device__ T *begin() const { return data + blockIdx.x * n; }
  __device__ T at(int i) const;
  template <typename U> __device__ U sum(U zero) const {
    U s = zero;
    for (int i = 0; i < n; ++i) s += U(at(i));
    return s;
  }
};

template <typename T>
__device__ T Window<T>::at(int i) const { return begin()[i]; }

__global__ void members(int *out, Tile t) {
  Tile *p = &t;
  out[threadIdx.x] = t.first() + p->last() + p->both() + Tile::blocks() + t.blocks() + t.untouched();
}

template <typename T>
__global__ void windows(T *data, int n, T *out) {
  Window<T> w{data, n};
  const Window<T> *pw = &w;
  out[blockIdx.x] = w.sum(T(0)) + pw->at(0);
}

__global__ void host_side_too(int *out, Tile t) { out[0] = t.offset(); }

void run(int *o, Tile t, float *d, int n, float *of) {
  members<<<4, 32>>>(o, t);
  windows<<<8, 1>>>(d, n, of);
  host_side_too<<<1, 1>>>(o, t);
}

// CHECK:      __device__ int offset() const { return blockIdx.x * scale; }
// CHECK-NEXT: // PTB clone of Base::offset: blockIdx/gridDim are the virtual block's
// CHECK-NEXT: __device__ int offset__ptb(const uint3 blockIdx, const dim3 gridDim) const
// CHECK-NEXT: #line 13
// CHECK-NEXT: { return blockIdx.x * scale; }
// The declaration in the class of a clone defined out of it:
// CHECK:      __device__ int first() const;
// CHECK-NEXT: __device__ int first__ptb(const uint3 blockIdx, const dim3 gridDim) const;
// CHECK-NEXT: #line 18
// CHECK:      __device__ int last__ptb(const uint3 blockIdx, const dim3 gridDim) const
// CHECK:      { return first__ptb(blockIdx, gridDim) + width - 1; }
// CHECK:      __device__ int both__ptb(const uint3 blockIdx, const dim3 gridDim)
// CHECK:      { return this->last__ptb(blockIdx, gridDim) + Base::offset__ptb(blockIdx, gridDim); }
// CHECK:      static __device__ int blocks__ptb(const uint3 blockIdx, const dim3 gridDim)
// CHECK:      __device__ int untouched() const { return width; }
// CHECK-NEXT: };
// CHECK:      __device__ int Tile::first() const { return blockIdx.x * width; }
// CHECK-NEXT: // PTB clone of Tile::first
// CHECK-NEXT: __device__ int Tile::first__ptb(const uint3 blockIdx, const dim3 gridDim) const
// CHECK:      __device__ T *begin__ptb(const uint3 blockIdx, const dim3 gridDim) const
// CHECK:      __device__ T at(int i) const;
// CHECK-NEXT: __device__ T at__ptb(const uint3 blockIdx, const dim3 gridDim, int i) const;
// CHECK:      template <typename U> __device__ U sum__ptb(const uint3 blockIdx, const dim3 gridDim, U zero) const
// CHECK:      for (int i = 0; i < n; ++i) s += U(at__ptb(blockIdx, gridDim, i));
// CHECK:      // PTB clone of Window::at
// CHECK-NEXT: template <typename T>
// CHECK-NEXT: __device__ T Window<T>::at__ptb(const uint3 blockIdx, const dim3 gridDim, int i) const
// CHECK:      { return begin__ptb(blockIdx, gridDim)[i]; }
// The original kernels keep calling the originals.
// CHECK:      out[threadIdx.x] = t.first() + p->last() + p->both() + Tile::blocks() + t.blocks() + t.untouched();
// CHECK:      static __device__ __forceinline__ void members__ptb_task(
// CHECK:      out[threadIdx.x] = t.first__ptb(blockIdx, gridDim) + p->last__ptb(blockIdx, gridDim) + p->both__ptb(blockIdx, gridDim) + Tile::blocks__ptb(blockIdx, gridDim) + t.blocks__ptb(blockIdx, gridDim) + t.untouched();
// CHECK:      out[blockIdx.x] = w.sum(T(0)) + pw->at(0);
// CHECK:      static __device__ __forceinline__ void windows__ptb_task(
// CHECK:      out[blockIdx.x] = w.sum__ptb(blockIdx, gridDim, T(0)) + pw->at__ptb(blockIdx, gridDim, 0);
// CHECK:      __global__ void host_side_too(int *out, Tile t) { out[0] = t.offset(); }
// CHECK:      { out[0] = t.offset__ptb(blockIdx, gridDim); }

// What is still refused among members, constructors, operators and the other calls a text edit cannot
// send to a clone: a virtual function, a destructor, a constructor called implicitly (a conversion), a
// member of a class in a file that is not transformed, a member of a local class, a default member
// initializer or a default argument that reads blockIdx (evaluated with the declaration's text), and a
// call that is an overloaded operator in one instantiation of a template and a built-in one in another.
// Each kernel is left byte for byte as it was, with a warning (an error under --strict); the others go on.
// RUN: %ptb-transform %s -o %t.cu 2> %t.err
// RUN: FileCheck %s --check-prefix=DIAG < %t.err
// RUN: %strip-directives %t.cu | FileCheck %s
// RUN: not %ptb-transform --strict %s -o %t.strict.cu 2>&1 | FileCheck %s --check-prefix=STRICT
// RUN: %if nvcc %{ %nvcc -c %s -o %t.orig.o %}
// RUN: %if nvcc %{ %nvcc -I %S -c %t.cu -o %t.o %}
#include "../Inputs/blockidx-class.cuh"

struct Shape {
  __device__ virtual int id() const { return blockIdx.x; }
};
struct Guard {
  int *p;
  __device__ ~Guard() { p[blockIdx.x] = 1; }
};
struct Wrap {
  int v;
  __device__ Wrap(int x) : v(x + blockIdx.x) {}
};
__device__ int use(Wrap w) { return w.v; }
struct Defaults {
  int first = blockIdx.x;
  int second;
};
__device__ int arg(int b = gridDim.x) { return b; }
struct Num {
  int v;
  __device__ Num operator+(Num o) const { return {v + o.v + (int)blockIdx.x}; }
};

__global__ void virtual_call(int *out, Shape *s) { out[0] = s->id(); }
__global__ void destructor(int *out) { Guard g{out}; }
__global__ void conversion(int *out) { out[0] = use(threadIdx.x); }
__global__ void unselected(int *out, Elsewhere e) { out[0] = e.block(); }
__global__ void local_class(int *out) {
  struct Local {
    __device__ int b() const { return blockIdx.x; }
  };
  out[blockIdx.x] = Local().b();
}
__global__ void member_default(int *out) { Defaults d{}; out[0] = d.first; }
__global__ void default_argument(int *out) { out[0] = arg(); }
template <typename T>
__global__ void builtin_elsewhere(T *out, T a, T b) { out[0] = a + b; }
__global__ void fine(int *out, Shape s) { out[0] = blockIdx.x; }

void run(int *o, Shape *s, Elsewhere e, Num *n, float *f) {
  virtual_call<<<1, 1>>>(o, s);
  destructor<<<1, 1>>>(o);
  conversion<<<1, 1>>>(o);
  unselected<<<1, 1>>>(o, e);
  local_class<<<1, 1>>>(o);
  member_default<<<1, 1>>>(o);
  default_argument<<<1, 1>>>(o);
  builtin_elsewhere<<<1, 1>>>(n, Num{1}, Num{2});
  builtin_elsewhere<<<1, 1>>>(f, 1.0f, 2.0f);
}

// DIAG: members-refused.cu:[[#]]:61: warning: kernel 'virtual_call' is left as it is (no PTB twin): blockIdx/gridDim read through a call that cannot be redirected: Shape::id reads blockIdx/gridDim, but it is a virtual function
// DIAG: warning: kernel 'destructor' is left as it is (no PTB twin): blockIdx/gridDim read through a call that cannot be redirected: Guard::~Guard reads blockIdx/gridDim, but it is a destructor, which runs without a call in the text
// DIAG: warning: kernel 'conversion' is left as it is (no PTB twin): blockIdx/gridDim read through a call that cannot be redirected: Wrap::Wrap reads blockIdx/gridDim, but the constructor is called implicitly (a conversion, a copy, or a member or base without a written initializer)
// DIAG: warning: kernel 'unselected' is left as it is (no PTB twin): blockIdx/gridDim read through a call that cannot be redirected: Elsewhere::block reads blockIdx/gridDim, but it is a member of a class in a file that is not transformed ({{.*}}blockidx-class.cuh; --header-filter selects the files that are)
// DIAG: warning: kernel 'local_class' is left as it is (no PTB twin): blockIdx/gridDim read through a call that cannot be redirected: local_class(int *)::Local::b reads blockIdx/gridDim, but it is a member of a class defined inside a function
// DIAG: warning: kernel 'member_default' is left as it is (no PTB twin): blockIdx/gridDim read where the task cannot reach: a default member initializer reads blockIdx/gridDim at {{.*}}members-refused.cu:[[#]]:15: it is evaluated with the text of the declaration, where blockIdx is the hardware's
// DIAG: warning: kernel 'default_argument' is left as it is (no PTB twin): blockIdx/gridDim read where the task cannot reach: a default argument reads blockIdx/gridDim
// DIAG: warning: kernel 'builtin_elsewhere' is left as it is (no PTB twin): blockIdx/gridDim read through a call that cannot be redirected: the call at {{.*}}members-refused.cu:[[#]]:66 is sent to the PTB clone of Num::operator+ in one instantiation of builtin_elsewhere but cannot be in builtin_elsewhere<float> (there it is a built-in operation or another kind of call); the clone's text serves every instantiation
// DIAG: members-refused.cu -> {{.*}}: 1 kernel made PTB, 8 left as they are, 0 launches rewritten
// STRICT: error: kernel 'virtual_call' is left as it is (no PTB twin)
// STRICT: nothing written
// CHECK-NOT: __ptb(
// CHECK:     static __device__ __forceinline__ void fine__ptb_task(
// CHECK-NOT: __ptb(const uint3
// CHECK:     virtual_call<<<1, 1>>>(o, s);

// Member functions, constructors and operators that read blockIdx/gridDim: ptb-transform gives each one a
// PTB clone in its class (docs/user/ptb-transform.md) and sends the twin's calls to the clones, while the
// original kernels keep calling the originals. Covered: a class template of a one-level Haar wavelet
// transform (integer lifting for int, the average for float) whose constructor, members (in the class and
// out of it, static and not, const), called as obj.f(), p->f(), f() and this->f(), locate the block's
// segment from blockIdx/gridDim; a subscript operator of a class template, a call operator, a member and a
// free binary operator and a compound assignment that read them; constructors called as `W w;`, `W w(a)`,
// `W w{a}`, `W w = W(a)`, a temporary `W(a)(b)`, and one that delegates. 2-D grids of random shapes; every
// output checked against a CPU reference, exactly.
#include "common.cuh"

// floor(d / 2) for integers (arithmetic shift), d / 2 for floating point: exact either way.
__host__ __device__ inline int half_of(int d) { return d >> 1; }
__host__ __device__ inline float half_of(float d) { return d * 0.5f; }

// Block (x, y) transforms segment x of signal y: gridDim.x segments of `len` samples per signal.
template <typename T>
class HaarSegment {
 public:
  // Reads blockIdx/gridDim through at().
  __device__ HaarSegment(const T* signals, int len) : half_(len / 2), in_(signals + at(len)) {}
  // The block's place in an array of per_block elements per block.
  static __device__ size_t at(int per_block) { return ((size_t)blockIdx.y * gridDim.x + blockIdx.x) * per_block; }
  __device__ int half() const { return half_; }
  __device__ T operator[](int i) const { return in_[i]; }
  __device__ T detail(int i) const { return (*this)[2 * i + 1] - (*this)[2 * i]; }
  __device__ T approx(int i) const;
  __device__ void forward(T* a, T* d) const;

 private:
  int half_;
  const T* in_;
};

template <typename T>
__device__ T HaarSegment<T>::approx(int i) const {
  return (*this)[2 * i] + half_of(detail(i));
}

template <typename T>
__device__ void HaarSegment<T>::forward(T* a, T* d) const {
  T* ab = a + at(half_);
  T* db = d + at(half());
  for (int i = threadIdx.x; i < half(); i += blockDim.x) {
    ab[i] = approx(i);
    db[i] = this->detail(i);
  }
}

// x: gridDim.y signals of gridDim.x * len samples; a, d: as many coefficients of each kind, half as many.
// block[b] = x + 1000 * y of block b (linear): the static member seen from the kernel.
template <typename T>
__global__ void haar_forward(const T* x, int len, T* a, T* d, int* block) {
  HaarSegment<T> h(x, len);
  const HaarSegment<T>* p = &h;
  p->forward(a, d);
  if (threadIdx.x == 0) block[HaarSegment<T>::at(1)] = (int)blockIdx.x + 1000 * (int)blockIdx.y + 0 * h.half();
}

// Element i of the block's row of n elements: a subscript operator that reads blockIdx (through at()).
template <typename T>
struct BlockRow {
  T* p;
  int n;
  __device__ T& operator[](int i) const { return p[HaarSegment<T>::at(n) + i]; }
};

// A per-block affine map: its constructors and its call operator read blockIdx/gridDim.
struct BlockAffine {
  int scale, shift;
  __device__ BlockAffine() : scale(1 + (int)(blockIdx.x % 5)), shift((int)gridDim.x) {}
  __device__ explicit BlockAffine(int extra) : BlockAffine() { shift += extra * (int)blockIdx.y; }
  __device__ int operator()(int v) const { return v * scale + shift + (int)blockIdx.y; }
};

// A pair of coefficients; its operators read blockIdx/gridDim.
struct Coef {
  int a, d;
  __device__ Coef operator+(const Coef& o) const { return {a + o.a, d + o.d + (int)blockIdx.x}; }
  __device__ Coef& operator+=(int v) {
    a += v * (int)gridDim.y;
    return *this;
  }
};
__device__ Coef operator*(int s, const Coef& c) { return {s * c.a, s * c.d - (int)blockIdx.y}; }

// Per element i of the block's rows of `half`: e = c + 2 * c, e += f(i); out_a/out_d = e; mapped = g(h(i))
// + BlockAffine(i)(1).
__global__ void affine_ops(const int* a, const int* d, int half, int* out_a, int* out_d, int* mapped) {
  BlockAffine f;
  BlockAffine g{3};
  BlockAffine h = BlockAffine(2);
  BlockRow<const int> ra{a, half}, rd{d, half};
  BlockRow<int> oa{out_a, half}, od{out_d, half}, om{mapped, half};
  for (int i = threadIdx.x; i < half; i += blockDim.x) {
    Coef c{ra[i], rd[i]};
    Coef e = c + 2 * c;
    e += f(i);
    oa[i] = e.a;
    od[i] = e.d;
    om[i] = g(h(i)) + BlockAffine(i)(1);
  }
}

template <typename T>
static void check_forward(const char* what, dim3 grid, unsigned bs, int len, T lo, T hi) {
  const size_t nb = (size_t)grid.x * grid.y, half = (size_t)len / 2;
  std::vector<T> x = std::is_integral<T>::value ? tg::random_ints<T>(nb * len, (long long)lo, (long long)hi)
                                                 : tg::random_reals<T>(nb * len, (double)lo, (double)hi);
  tg::DevBuf<T> dx(x.size()), da(nb * half), dd(nb * half);
  tg::DevBuf<int> dblock(nb);
  dx.upload(x);
  da.poison();
  dd.poison();
  dblock.poison();
  haar_forward<T><<<grid, bs>>>(dx, len, da, dd, dblock);
  tg::sync_check(what);
  std::vector<T> wa(nb * half), wd(nb * half);
  std::vector<int> wblock(nb);
  for (size_t b = 0; b < nb; ++b) {
    wblock[b] = (int)(b % grid.x) + 1000 * (int)(b / grid.x);
    for (size_t i = 0; i < half; ++i) {
      const T x0 = x[b * len + 2 * i], x1 = x[b * len + 2 * i + 1];
      const T dv = x1 - x0;
      wd[b * half + i] = dv;
      wa[b * half + i] = x0 + half_of(dv);
    }
  }
  std::string s = what;
  tg::compare_exact(da.download(), wa, (s + ": approximations").c_str());
  tg::compare_exact(dd.download(), wd, (s + ": details").c_str());
  tg::compare_exact(dblock.download(), wblock, (s + ": static member").c_str());
}

static void check_affine(dim3 grid, unsigned bs, int half) {
  const size_t nb = (size_t)grid.x * grid.y, n = nb * half;
  std::vector<int> a = tg::random_ints<int>(n, -1000, 1000), d = tg::random_ints<int>(n, -1000, 1000);
  tg::DevBuf<int> da(n), dd(n), oa(n), od(n), om(n);
  da.upload(a);
  dd.upload(d);
  oa.poison();
  od.poison();
  om.poison();
  affine_ops<<<grid, bs>>>(da, dd, half, oa, od, om);
  tg::sync_check("affine_ops");
  std::vector<int> wa(n), wd(n), wm(n);
  const int gx = (int)grid.x, gy = (int)grid.y;
  for (size_t b = 0; b < nb; ++b) {
    const int bx = (int)(b % grid.x), by = (int)(b / grid.x);
    const int scale = 1 + bx % 5;
    auto affine = [&](int extra, int v) { return v * scale + (gx + extra * by) + by; };
    for (int i = 0; i < half; ++i) {
      const size_t k = b * half + i;
      // c + 2 * c, then += f(i)
      const int ea = a[k] + 2 * a[k], ed = d[k] + (2 * d[k] - by) + bx;
      wa[k] = ea + affine(0, i) * gy;
      wd[k] = ed;
      wm[k] = affine(3, affine(2, i)) + affine(i, 1);
    }
  }
  tg::compare_exact(oa.download(), wa, "affine_ops: a");
  tg::compare_exact(od.download(), wd, "affine_ops: d");
  tg::compare_exact(om.download(), wm, "affine_ops: mapped");
}

int main(int argc, char** argv) {
  tg::init(argc, argv, "member_functions_blockidx");
  if (tg::bench_mode()) {
    dim3 grid(4096, 8);
    const int len = 256;
    const size_t nb = (size_t)grid.x * grid.y;
    tg::DevBuf<float> x(nb * len), a(nb * len / 2), d(nb * len / 2);
    tg::DevBuf<int> block(nb);
    x.upload(tg::random_reals<float>(nb * len, -100, 100));
    return tg::bench("member_functions_blockidx", [&] { haar_forward<float><<<grid, 128>>>(x, len, a, d, block); });
  }
  for (int it = 0; it < 4; ++it) {
    dim3 grid((unsigned)tg::rand_int(1, 40), (unsigned)tg::rand_int(1, 6));
    unsigned bs = (unsigned)tg::rand_int(1, 128);
    int len = 2 * (int)tg::rand_int(1, 48);
    check_forward<int>("haar_forward<int>", grid, bs, len, -1000000, 1000000);
    check_forward<float>("haar_forward<float>", grid, bs, len, -100.0f, 100.0f);
    check_affine(grid, bs, len / 2);
  }
  // Larger grids than the SM count times the workers' occupancy: tasks run several per worker.
  check_forward<int>("haar_forward<int> (large grid)", dim3(3000, 3), 64, 34, -1000000, 1000000);
  check_affine(dim3(2500, 4), 96, 40);
  return tg::finish();
}

// Why a twin's tasks run slower than the same blocks as a grid (issue 13, goal 3; docs/design/runtime.md, "A twin's
// cost per launch, split"). No runtime: stencil2d_chain's two kernels, each written once as a task body,
// run as a plain grid and as persistent workers that differ in one thing at a time:
//
//   grid          the original launch: one block per task, the hardware hands out blocks
//   contig        W = blocks per SM x SMs workers; worker w runs tasks [w c, (w + 1) c), c = ceil(N / W), no atomics
//   cyclic        worker w runs tasks w, w + W, w + 2W, ... (what is in flight at once is consecutive, as in a grid)
//   claim         the leader claims one task at a time with an atomicAdd and publishes it through shared memory
//                 (one barrier per task)
//   claim4        the same, four consecutive tasks per claim
//   cyclic-exit   cyclic, then each worker's leader counts itself out with a fenced atomicAdd and the last one
//                 resets the counter (a close with one round trip)
//
//   loop_shapes [--w 2048] [--h 2048] [--steps 2000] [--reps 5]
// Prints per form the median time of 2 x steps dependent launches in one stream, the cost per launch over
// the grid in us, and checks every form's final array against the grid's (exact).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CK(x)                                                                             \
  do {                                                                                    \
    cudaError_t e_ = (x);                                                                 \
    if (e_ != cudaSuccess) {                                                              \
      std::printf("FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)

struct Flux {
  const uint32_t* __restrict__ a;
  uint32_t* __restrict__ f;
  int w, h;
  __device__ __forceinline__ void operator()(uint3 b) const {
    const int x = b.x * blockDim.x + threadIdx.x, y = b.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    const int xm = x == 0 ? w - 1 : x - 1, xp = x == w - 1 ? 0 : x + 1;
    const int ym = y == 0 ? h - 1 : y - 1, yp = y == h - 1 ? 0 : y + 1;
    const uint32_t c = a[(size_t)y * w + x];
    f[(size_t)y * w + x] = a[(size_t)y * w + xm] + a[(size_t)y * w + xp] + a[(size_t)ym * w + x] + a[(size_t)yp * w + x] - 4u * c;
  }
};
struct Update {
  uint32_t* __restrict__ a;
  const uint32_t* __restrict__ f;
  int w, h;
  uint32_t step;
  __device__ __forceinline__ void operator()(uint3 b) const {
    const int x = b.x * blockDim.x + threadIdx.x, y = b.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    const int xp = x == w - 1 ? 0 : x + 1, yp = y == h - 1 ? 0 : y + 1;
    const size_t i = (size_t)y * w + x;
    a[i] = 5u * a[i] + f[i] + (f[(size_t)y * w + xp] >> 3) + (f[(size_t)yp * w + x] >> 5) + step;
  }
};

enum Form { kGrid, kContig, kCyclic, kClaim, kClaim4, kCyclicExit, kForms };
static const char* kNames[] = {"grid", "contig", "cyclic", "claim", "claim4", "cyclic-exit"};

struct Work {
  unsigned gx, n;           // grid width in blocks, tasks
  unsigned* counter;        // claim counter (claim forms) or exit count (cyclic-exit); zero between launches
};

__device__ __forceinline__ uint3 coords(unsigned t, unsigned gx) { return make_uint3(t % gx, t / gx, 0); }

template <class Body>
__global__ void grid_kernel(Body body) {
  body(blockIdx);
}

template <Form F, class Body>
__global__ void worker_kernel(Body body, Work wk) {
  const unsigned W = gridDim.x, w = blockIdx.x;
  const bool leader = threadIdx.x == 0 && threadIdx.y == 0;
  if constexpr (F == kContig) {
    const unsigned c = (wk.n + W - 1) / W;
    const unsigned end = min(wk.n, (w + 1) * c);
    for (unsigned t = w * c; t < end; ++t) body(coords(t, wk.gx));
  } else if constexpr (F == kCyclic || F == kCyclicExit) {
    for (unsigned t = w; t < wk.n; t += W) body(coords(t, wk.gx));
    if constexpr (F == kCyclicExit) {
      __syncthreads();
      if (leader) {
        __threadfence();
        if (atomicAdd(wk.counter, 1u) == W - 1) atomicExch(wk.counter, 0u);
      }
    }
  } else {
    constexpr unsigned kPer = F == kClaim4 ? 4 : 1;
    __shared__ unsigned next[2];
    for (unsigned r = 0;; ++r) {
      if (leader) next[r & 1] = atomicAdd(wk.counter, kPer);
      __syncthreads();
      const unsigned t0 = next[r & 1];
      if (t0 >= wk.n) {
        // Every worker ends up here once; the last one resets the counter for the next launch.
        if (leader && atomicAdd(wk.counter + 1, 1u) == W - 1) {
          atomicExch(wk.counter, 0u);
          atomicExch(wk.counter + 1, 0u);
        }
        return;
      }
      for (unsigned t = t0; t < t0 + kPer && t < wk.n; ++t) body(coords(t, wk.gx));
    }
  }
}

template <class Body>
static void launch(Form f, Body body, dim3 g, dim3 b, unsigned workers, Work wk) {
  switch (f) {
    case kGrid: grid_kernel<<<g, b>>>(body); break;
    case kContig: worker_kernel<kContig><<<workers, b>>>(body, wk); break;
    case kCyclic: worker_kernel<kCyclic><<<workers, b>>>(body, wk); break;
    case kClaim: worker_kernel<kClaim><<<workers, b>>>(body, wk); break;
    case kClaim4: worker_kernel<kClaim4><<<workers, b>>>(body, wk); break;
    case kCyclicExit: worker_kernel<kCyclicExit><<<workers, b>>>(body, wk); break;
    default: break;
  }
}

static long arg(int argc, char** argv, const char* name, long def) {
  for (int i = 1; i + 1 < argc; ++i)
    if (!std::strcmp(argv[i], name)) return std::strtol(argv[i + 1], nullptr, 10);
  return def;
}

int main(int argc, char** argv) {
  const int w = (int)arg(argc, argv, "--w", 2048), h = (int)arg(argc, argv, "--h", 2048);
  const int steps = (int)arg(argc, argv, "--steps", 2000), reps = (int)arg(argc, argv, "--reps", 5);
  const dim3 block(32, 8), g((w + 31) / 32, (h + 7) / 8);
  const unsigned n = g.x * g.y;
  int dev = 0, sms = 0, per_sm = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, worker_kernel<kClaim, Flux>, 256, 0));
  const unsigned workers = std::min<unsigned>(n, (unsigned)(per_sm * sms));
  const size_t cells = (size_t)w * h;
  std::vector<uint32_t> init(cells), ref, out(cells);
  for (size_t i = 0; i < cells; ++i) init[i] = (uint32_t)(i * 2654435761u) ^ 0x9e3779b9u;
  uint32_t *a, *f;
  unsigned* counter;
  CK(cudaMalloc(&a, cells * 4));
  CK(cudaMalloc(&f, cells * 4));
  CK(cudaMalloc(&counter, 2 * sizeof(unsigned)));
  CK(cudaMemset(counter, 0, 2 * sizeof(unsigned)));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<std::vector<float>> ms(kForms);
  auto run = [&](Form form, int nsteps) {
    CK(cudaMemcpy(a, init.data(), cells * 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(f, 0, cells * 4));
    CK(cudaDeviceSynchronize());
    const Work wk{g.x, n, counter};
    CK(cudaEventRecord(e0));
    for (int s = 0; s < nsteps; ++s) {
      launch(form, Flux{a, f, w, h}, g, block, workers, wk);
      launch(form, Update{a, f, w, h, (uint32_t)s}, g, block, workers, wk);
    }
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    CK(cudaGetLastError());
    float t = 0;
    CK(cudaEventElapsedTime(&t, e0, e1));
    CK(cudaMemcpy(out.data(), a, cells * 4, cudaMemcpyDeviceToHost));
    return t;
  };
  for (int f0 = 0; f0 < kForms; ++f0) run((Form)f0, 20);  // load every kernel
  bool ok = true;
  for (int r = 0; r < reps; ++r)
    for (int k = 0; k < kForms; ++k) {
      const Form form = (Form)(r % 2 ? kForms - 1 - k : k);
      ms[form].push_back(run(form, steps));
      if (form == kGrid) {
        if (ref.empty()) ref = out;
        else if (out != ref) ok = false, std::printf("FAIL grid differs between runs\n");
      } else if (!ref.empty() && out != ref) {
        ok = false;
        std::printf("FAIL %s differs from the grid\n", kNames[form]);
      }
    }
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, dev));
  std::printf("loop_shapes: %s, %dx%d, %u tasks of 32x8, %u workers (%d per SM), %d x 2 launches, median of %d\n", p.name,
              w, h, n, workers, per_sm, steps, reps);
  auto med = [](std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const float g0 = med(ms[kGrid]);
  for (int k = 0; k < kForms; ++k) {
    std::printf("%-12s %9.3f ms  %+7.2f us/launch   runs:", kNames[k], med(ms[k]), (med(ms[k]) - g0) * 1000.f / (2.f * steps));
    for (float t : ms[k]) std::printf(" %.3f", t);
    std::printf("\n");
  }
  std::printf(ok ? "loop_shapes: every form matches the grid\n" : "loop_shapes: FAIL\n");
  return ok ? 0 : 1;
}

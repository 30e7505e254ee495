// The uniform host-side "problem" interface of the fusion corpus.
//
// Every kernel file <name>.cu in this directory has a host-side header <name>_problem.cuh, included after
// the kernel file, that defines one struct (TcGemmProblem, CoulombProblem, MriqProblem, StencilProblem,
// HashProblem) with exactly these members, so that a generic harness can run any kernel, or any pair:
//
//   struct XProblem {
//     static constexpr const char* name = "x";
//     dim3 grid, block; size_t shmem;     // the launch shape of the original kernel (valid after setup)
//     void setup(double scale, unsigned seed);
//         // Allocates device buffers sized by `scale` (work is roughly proportional to scale; 1.0 is meant
//         // to run about 0.5-2 ms on an H100), fills the inputs from a fresh std::mt19937(seed) (raw
//         // 32-bit draws only, so the data are the same with every standard library), and poisons the
//         // outputs. Calling setup again releases the previous buffers first. Problems of GiBs of input
//         // (triad, transpose, histogram) fill it on the device instead, element i from
//         // fusion_input_bits(seed, i), which the host computes alike for its reference.
//     void poison();                      // cudaMemset every output buffer to 0xFF bytes
//     std::vector<unsigned char> outputs() const;   // all outputs, copied to the host, concatenated
//     std::vector<FusionBuffer> device_outputs() const;
//         // The output buffers on the device (pointer, bytes), in the order of outputs(): the pair harness
//         // compares them with a device copy of the reference, which large problems need (GiBs per scale).
//     bool check_cpu() const;
//         // Compares outputs() with a CPU reference (the inputs are kept on the host) on a deterministic
//         // sample of >= 2000 output elements (all of them when there are fewer than 4096), with a
//         // tolerance suited to the kernel; prints the first mismatch to stderr; true when all match.
//     template <class F> void with_args(F&& f) const;
//         // Calls f(grid, block, shmem, args...) with the kernel's exact argument list (same types as
//         // the kernel's parameters), e.g.
//         //   p.with_args([&](dim3 g, dim3 b, size_t s, auto... a) { kernel<<<g, b, s>>>(a...); });
//     void release();                     // cudaFree everything (safe to call twice)
//   };
//
// The problem headers include the standard headers they need themselves; this file includes only
// <random>, <vector> and <utility>.
#ifndef FUSION_CORPUS_PROBLEMS_CUH
#define FUSION_CORPUS_PROBLEMS_CUH

#include <random>
#include <utility>
#include <vector>

// An output buffer on the device: its pointer and its size in bytes.
using FusionBuffer = std::pair<const void*, size_t>;

// Check a CUDA runtime call; on error print file:line and the error string and exit(1).
#define FUSION_CHECK(call)                                                                          \
  do {                                                                                              \
    cudaError_t fusion_check_err_ = (call);                                                         \
    if (fusion_check_err_ != cudaSuccess) {                                                         \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,                          \
              cudaGetErrorString(fusion_check_err_));                                               \
      exit(1);                                                                                      \
    }                                                                                               \
  } while (0)

// The output elements check_cpu compares: all of them up to 4096, else the first, the last and a
// deterministic pseudo-random sample (the same on every run and every standard library).
inline std::vector<size_t> fusion_sample(size_t total)
{
  std::vector<size_t> idx;
  if (total <= 4096) {
    for (size_t i = 0; i < total; ++i) idx.push_back(i);
    return idx;
  }
  std::mt19937 rng(0x5EED1234u);
  idx.push_back(0);
  idx.push_back(total - 1);
  while (idx.size() < 4096) idx.push_back((((size_t)rng() << 32) | rng()) % total);
  return idx;
}

// The input word i of a problem filled on the device (fusion_fill_bits): a counter-based mix of the seed and
// the index (splitmix64's finalizer), the same on the host and the device.
__host__ __device__ inline unsigned fusion_input_bits(unsigned seed, unsigned long long i)
{
  unsigned long long z = i + 0x9E3779B97F4A7C15ull * ((unsigned long long)seed + 1ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (unsigned)((z ^ (z >> 31)) >> 16);
}
// A float in [0, 1) from such a word (24 bits), the same on the host and the device.
__host__ __device__ inline float fusion_unit_float(unsigned bits) { return (float)(bits >> 8) * (1.0f / 16777216.0f); }

__global__ void fusion_fill_bits_kernel(unsigned* p, size_t n, unsigned seed)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    p[i] = fusion_input_bits(seed, i);
}
__global__ void fusion_fill_unit_kernel(float* p, size_t n, unsigned seed)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    p[i] = fusion_unit_float(fusion_input_bits(seed, i));
}
// p[i] = fusion_input_bits(seed, i) for the n words at p (on the device).
inline void fusion_fill_bits(unsigned* p, size_t n, unsigned seed)
{
  fusion_fill_bits_kernel<<<1024, 256>>>(p, n, seed);
  FUSION_CHECK(cudaGetLastError());
}
// p[i] = fusion_unit_float(fusion_input_bits(seed, i)) for the n floats at p (on the device).
inline void fusion_fill_unit(float* p, size_t n, unsigned seed)
{
  fusion_fill_unit_kernel<<<1024, 256>>>(p, n, seed);
  FUSION_CHECK(cudaGetLastError());
}

__global__ void fusion_gather_kernel(const unsigned* src, const size_t* idx, unsigned* dst, size_t n)
{
  const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[idx[i]];
}
// The 32-bit words src[idx[k]] of a device buffer, copied to the host (check_cpu of large problems: no
// copy of the whole output).
inline std::vector<unsigned> fusion_gather_words(const void* src, const std::vector<size_t>& idx)
{
  std::vector<unsigned> out(idx.size());
  if (idx.empty()) return out;
  size_t* dIdx = nullptr;
  unsigned* dDst = nullptr;
  FUSION_CHECK(cudaMalloc(&dIdx, sizeof(size_t) * idx.size()));
  FUSION_CHECK(cudaMalloc(&dDst, sizeof(unsigned) * idx.size()));
  FUSION_CHECK(cudaMemcpy(dIdx, idx.data(), sizeof(size_t) * idx.size(), cudaMemcpyHostToDevice));
  fusion_gather_kernel<<<(unsigned)((idx.size() + 255) / 256), 256>>>((const unsigned*)src, dIdx, dDst, idx.size());
  FUSION_CHECK(cudaGetLastError());
  FUSION_CHECK(cudaMemcpy(out.data(), dDst, sizeof(unsigned) * idx.size(), cudaMemcpyDeviceToHost));
  FUSION_CHECK(cudaFree(dIdx));
  FUSION_CHECK(cudaFree(dDst));
  return out;
}

#endif  // FUSION_CORPUS_PROBLEMS_CUH

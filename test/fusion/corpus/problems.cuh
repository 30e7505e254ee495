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
//         // outputs. Calling setup again releases the previous buffers first.
//     void poison();                      // cudaMemset every output buffer to 0xFF bytes
//     std::vector<unsigned char> outputs() const;   // all outputs, copied to the host, concatenated
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
// The problem headers include the standard headers they need themselves; this file includes nothing.
#ifndef FUSION_CORPUS_PROBLEMS_CUH
#define FUSION_CORPUS_PROBLEMS_CUH

#include <random>
#include <vector>

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

#endif  // FUSION_CORPUS_PROBLEMS_CUH

// Self-check of the fusion corpus: all eight kernel files and their problem headers in one translation unit
// (so they cannot clash), each original kernel launched through its problem's with_args, checked against
// the CPU reference and timed (median of 7 launches, cudaEvents).
//
//   nvcc -arch=sm_90 -std=c++17 -O3 test/fusion/corpus/selfcheck.cu -o selfcheck
//   ./selfcheck [--scale X] [--seed S] [--only NAME]
//
// Prints one line per problem: name  grid  block  shmem  median_ms  PASS/FAIL. Exits 1 if any FAIL.
#include "tc_gemm.cu"
#include "cd_coulomb.cu"
#include "cd_mriq.cu"
#include "cd_stencil.cu"
#include "cd_hash.cu"
#include "cd_triad.cu"
#include "cd_transpose.cu"
#include "cd_histogram.cu"

#include "tc_gemm_problem.cuh"
#include "cd_coulomb_problem.cuh"
#include "cd_mriq_problem.cuh"
#include "cd_stencil_problem.cuh"
#include "cd_hash_problem.cuh"
#include "cd_triad_problem.cuh"
#include "cd_transpose_problem.cuh"
#include "cd_histogram_problem.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

struct Options {
  double scale = 1.0;
  bool have_seed = false;
  unsigned seed = 0;
  std::string only;
};

template <class P, class Launch>
bool run_problem(const Options& opt, std::random_device& rd, Launch launch)
{
  if (!opt.only.empty() && opt.only != P::name) return true;
  const unsigned seed = opt.have_seed ? opt.seed : rd();
  P p;
  p.setup(opt.scale, seed);
  p.poison();
  p.with_args(launch);
  FUSION_CHECK(cudaGetLastError());
  FUSION_CHECK(cudaDeviceSynchronize());
  const bool ok = p.check_cpu();

  cudaEvent_t start, stop;
  FUSION_CHECK(cudaEventCreate(&start));
  FUSION_CHECK(cudaEventCreate(&stop));
  std::vector<float> ms;
  for (int i = 0; i < 7; ++i) {
    FUSION_CHECK(cudaEventRecord(start));
    p.with_args(launch);
    FUSION_CHECK(cudaEventRecord(stop));
    FUSION_CHECK(cudaEventSynchronize(stop));
    FUSION_CHECK(cudaGetLastError());
    float t = 0.0f;
    FUSION_CHECK(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  FUSION_CHECK(cudaEventDestroy(start));
  FUSION_CHECK(cudaEventDestroy(stop));

  char grid[64], block[64];
  snprintf(grid, sizeof grid, "(%u,%u,%u)", p.grid.x, p.grid.y, p.grid.z);
  snprintf(block, sizeof block, "(%u,%u,%u)", p.block.x, p.block.y, p.block.z);
  printf("%-8s  %-16s  %-11s  %6zu  %9.4f  %s  (seed %u)\n", P::name, grid, block, p.shmem, ms[3],
         ok ? "PASS" : "FAIL", seed);
  fflush(stdout);
  p.release();
  return ok;
}

}  // namespace

int main(int argc, char** argv)
{
  Options opt;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--scale") && i + 1 < argc) {
      opt.scale = atof(argv[++i]);
    } else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
      opt.have_seed = true;
      opt.seed = (unsigned)strtoul(argv[++i], nullptr, 0);
    } else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
      opt.only = argv[++i];
    } else {
      fprintf(stderr, "usage: %s [--scale X] [--seed S] [--only tc_gemm|coulomb|mriq|stencil|hash|triad|transpose|histogram]\n", argv[0]);
      return 2;
    }
  }
  if (!(opt.scale > 0.0)) {
    fprintf(stderr, "--scale must be positive\n");
    return 2;
  }

  std::random_device rd;
  printf("%-8s  %-16s  %-11s  %6s  %9s  %s\n", "name", "grid", "block", "shmem", "median_ms", "result");
  bool ok = true;
  ok &= run_problem<TcGemmProblem>(opt, rd, [&](dim3 g, dim3 b, size_t s, auto... a) { tc_gemm_wmma<<<g, b, s>>>(a...); });
  ok &= run_problem<CoulombProblem>(opt, rd, [&](dim3 g, dim3 b, size_t s, auto... a) { coulomb_potential<<<g, b, s>>>(a...); });
  ok &= run_problem<MriqProblem>(opt, rd, [&](dim3 g, dim3 b, size_t s, auto... a) { mriq_compute_q<<<g, b, s>>>(a...); });
  ok &= run_problem<StencilProblem>(opt, rd, [&](dim3 g, dim3 b, size_t s, auto... a) { stencil_5pt<<<g, b, s>>>(a...); });
  ok &= run_problem<HashProblem>(opt, rd, [&](dim3 g, dim3 b, size_t s, auto... a) { hash_mix<<<g, b, s>>>(a...); });
  ok &= run_problem<TriadProblem>(opt, rd, [&](dim3 g, dim3 b, size_t s, auto... a) { triad_stream<<<g, b, s>>>(a...); });
  ok &= run_problem<TransposeProblem>(opt, rd, [&](dim3 g, dim3 b, size_t s, auto... a) { transpose_tiled<<<g, b, s>>>(a...); });
  ok &= run_problem<HistogramProblem>(opt, rd, [&](dim3 g, dim3 b, size_t s, auto... a) { histogram_bytes<<<g, b, s>>>(a...); });
  return ok ? 0 : 1;
}

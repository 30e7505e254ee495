// Checks and times the fused kernels of one pair (test/fusion/README.md). Compiled once per pair with
//   -DFUSED_SOURCE='"<fuse-kernels output>"' -DPROBLEM_A=TcGemmProblem -DPROBLEM_B=StencilProblem
//   -DKERNEL_A=tc_gemm_wmma -DKERNEL_B=stencil_5pt -DPROBLEM_A_HEADER='"tc_gemm_problem.cuh"' ...
// The fused output must name its kernels fused_pair_* (fuse-kernels --name fused_pair --all-ratios).
//
// Check (default): fresh random inputs; the original kernels, one after the other, are the reference (and
// are checked against the CPU); every fused candidate runs on poisoned outputs and must give bit-identical
// outputs; so must a candidate under an SM policy (half the SMs) and the fallback path (launch mode original).
// --bench: also times solo A, solo B, sequential, two streams and every candidate (median of --reps runs,
// all in this one process) and prints the winner: "winner <ratio>" when the best candidate beats both
// sequential and two streams, else "winner none".
#include FUSED_SOURCE
#include PROBLEM_A_HEADER
#include PROBLEM_B_HEADER

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

// CUDA_CHECK: the GPU corpus harness's (it exits with the call, file and line on an error).
#include "../gpu/common.cuh"

static PROBLEM_A pa;
static PROBLEM_B pb;

static void run_original_a(cudaStream_t s) {
  pa.with_args([&](dim3 g, dim3 b, size_t sh, auto... a) { KERNEL_A<<<g, b, sh, s>>>(a...); });
}
static void run_original_b(cudaStream_t s) {
  pb.with_args([&](dim3 g, dim3 b, size_t sh, auto... a) { KERNEL_B<<<g, b, sh, s>>>(a...); });
}
static bool run_fused(const fused_pair_candidate& c, cudaStream_t s) {
  bool fused = false;
  pa.with_args([&](dim3 ga, dim3 ba, size_t sa, auto... a) {
    pb.with_args([&](dim3 gb, dim3 bb, size_t sb, auto... b) {
      fused = c.launch(ptb::LaunchConfig(ga, ba, sa, s), a..., ptb::LaunchConfig(gb, bb, sb, s), b...);
    });
  });
  return fused;
}

template <class F>
static float median_ms(int reps, F&& f) {
  cudaEvent_t e0, e1;
  CUDA_CHECK(cudaEventCreate(&e0));
  CUDA_CHECK(cudaEventCreate(&e1));
  f();  // warm-up
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> t;
  for (int i = 0; i < reps; ++i) {
    CUDA_CHECK(cudaEventRecord(e0, 0));
    f();
    CUDA_CHECK(cudaEventRecord(e1, 0));
    CUDA_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    t.push_back(ms);
  }
  CUDA_CHECK(cudaEventDestroy(e0));
  CUDA_CHECK(cudaEventDestroy(e1));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main(int argc, char** argv) {
  double scale_a = 1.0, scale_b = 1.0;
  bool bench = false;
  int reps = 11;
  unsigned seed = std::random_device{}();
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--scale-a" && i + 1 < argc) scale_a = std::atof(argv[++i]);
    else if (a == "--scale-b" && i + 1 < argc) scale_b = std::atof(argv[++i]);
    else if (a == "--bench") bench = true;
    else if (a == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (a == "--seed" && i + 1 < argc) seed = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 10));
    else {
      std::fprintf(stderr, "usage: %s [--scale-a X] [--scale-b X] [--bench] [--reps N] [--seed S]\n", argv[0]);
      return 2;
    }
  }
  const std::string pair = std::string(PROBLEM_A::name) + "+" + PROBLEM_B::name;
  std::printf("pair %s seed %u scale_a %g scale_b %g\n", pair.c_str(), seed, scale_a, scale_b);
  pa.setup(scale_a, seed);
  pb.setup(scale_b, seed ^ 0x5bd1e995u);
  int failures = 0;

  // Reference: the original kernels, one after the other.
  pa.poison();
  pb.poison();
  run_original_a(0);
  run_original_b(0);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<unsigned char> ref_a = pa.outputs(), ref_b = pb.outputs();
  const bool cpu_a = pa.check_cpu(), cpu_b = pb.check_cpu();
  std::printf("original %s vs CPU: %s; %s vs CPU: %s\n", PROBLEM_A::name, cpu_a ? "PASS" : "FAIL", PROBLEM_B::name,
              cpu_b ? "PASS" : "FAIL");
  failures += !cpu_a + !cpu_b;

  auto compare = [&](const char* what, const fused_pair_candidate& c, bool expect_fused, bool fused) {
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    const bool same_a = pa.outputs() == ref_a, same_b = pb.outputs() == ref_b;
    const bool ok = same_a && same_b && fused == expect_fused;
    std::printf("%-9s ratio %-5s %s: %s=%s %s=%s%s\n", what, c.ratio, ok ? "PASS" : "FAIL", PROBLEM_A::name,
                same_a ? "identical" : "DIFFERS", PROBLEM_B::name, same_b ? "identical" : "DIFFERS",
                fused == expect_fused ? "" : (fused ? " (fused ran, expected the fallback)" : " (fell back to the originals)"));
    failures += !ok;
  };
  const size_t n = sizeof(fused_pair_candidates) / sizeof(fused_pair_candidates[0]);
  for (size_t i = 0; i < n; ++i) {
    const fused_pair_candidate& c = fused_pair_candidates[i];
    cudaFuncAttributes fa;
    CUDA_CHECK(cudaFuncGetAttributes(&fa, c.kernel));
    int occ = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, c.kernel, static_cast<int>(c.threads), 0));
    std::printf("candidate %-5s threads %4u regs %3d static_smem %6zu local %zu blocks/SM %d\n", c.ratio, c.threads,
                fa.numRegs, fa.sharedSizeBytes, fa.localSizeBytes, occ);
    pa.poison();
    pb.poison();
    compare("fused", c, true, run_fused(c, 0));
  }
  // The fused kernel under an SM policy (the first half of the SMs) in its own stream.
  {
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const unsigned sms = ptb::sm_count();
    ptb::set_stream_policy(s, ptb::Policy::create(ptb::SmSet::range(0, sms / 2)));
    pa.poison();
    pb.poison();
    CUDA_CHECK(cudaDeviceSynchronize());  // the poison (legacy default stream) must be done before a non-blocking stream starts
    compare("half-SMs", fused_pair_candidates[0], true, run_fused(fused_pair_candidates[0], s));
    ptb::set_stream_policy(s, ptb::Policy());
    CUDA_CHECK(cudaStreamDestroy(s));
  }
  // The fallback: launch mode original runs the original kernels one after the other.
  ptb::set_launch_mode(ptb::LaunchMode::original);
  pa.poison();
  pb.poison();
  compare("fallback", fused_pair_candidates[n - 1], false, run_fused(fused_pair_candidates[n - 1], 0));
  ptb::set_launch_mode(ptb::LaunchMode::ptb);

  if (bench && failures == 0) {
    cudaStream_t s1, s2;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    cudaEvent_t fork, join1, join2;
    CUDA_CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&join1, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&join2, cudaEventDisableTiming));
    const float t_a = median_ms(reps, [&] { run_original_a(0); });
    const float t_b = median_ms(reps, [&] { run_original_b(0); });
    const float t_seq = median_ms(reps, [&] {
      run_original_a(0);
      run_original_b(0);
    });
    const float t_two = median_ms(reps, [&] {
      CUDA_CHECK(cudaEventRecord(fork, 0));
      CUDA_CHECK(cudaStreamWaitEvent(s1, fork, 0));
      CUDA_CHECK(cudaStreamWaitEvent(s2, fork, 0));
      run_original_a(s1);
      run_original_b(s2);
      CUDA_CHECK(cudaEventRecord(join1, s1));
      CUDA_CHECK(cudaEventRecord(join2, s2));
      CUDA_CHECK(cudaStreamWaitEvent(0, join1, 0));
      CUDA_CHECK(cudaStreamWaitEvent(0, join2, 0));
    });
    std::printf("bench %s solo_a %.4f ms solo_b %.4f ms (b/a %.2f) sequential %.4f ms two_streams %.4f ms (%.3fx seq)\n",
                pair.c_str(), t_a, t_b, t_b / t_a, t_seq, t_two, t_two / t_seq);
    float best = 0;
    const char* best_ratio = nullptr;
    for (size_t i = 0; i < n; ++i) {
      const fused_pair_candidate& c = fused_pair_candidates[i];
      const float t = median_ms(reps, [&] { run_fused(c, 0); });
      std::printf("bench %s ratio %-5s %.4f ms  %.3fx sequential  %.3fx two_streams\n", pair.c_str(), c.ratio, t,
                  t / t_seq, t / t_two);
      if (!best_ratio || t < best) {
        best = t;
        best_ratio = c.ratio;
      }
    }
    std::printf("best %s ratio %s %.4f ms %.3fx sequential %.3fx two_streams\n", pair.c_str(), best_ratio, best,
                best / t_seq, best / t_two);
    if (best < t_seq && best < t_two) std::printf("winner %s\n", best_ratio);
    else std::printf("winner none\n");
  }
  pa.release();
  pb.release();
  std::printf("%s %s\n", pair.c_str(), failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}

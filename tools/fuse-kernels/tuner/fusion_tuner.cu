// The fusion tuner: checks and times the fused kernels of one pair and prints the `decide` lines that
// fuse-kernels --decisions-from reads (docs/user/fuse-kernels.md, "Tuning"). Compiled once per pair with
//   -DFUSED_SOURCE='"<fuse-kernels output>"' -DPROBLEM_A=TcGemmProblem -DPROBLEM_B=StencilProblem
//   -DKERNEL_A=tc_gemm_wmma -DKERNEL_B=stencil_5pt -DPROBLEM_A_HEADER='"tc_gemm_problem.cuh"' ...
// The fused output must name its kernels fused_pair_* (fuse-kernels --name fused_pair --all-ratios, or
// --decisions-from; with the latter also -DFUSED_DECISIONS: the output then has fused_pair_launch and
// fused_pair_decisions, and each scale also runs that decision launcher).
//
// Each problem size (--scales: multipliers of --scale-a/--scale-b, default 1) gets fresh random inputs and:
// Check: the original kernels, one after the other, are the reference (and are checked against the CPU);
// every fused candidate runs on poisoned outputs and must give bit-identical outputs (compared on the
// device with a copy of the reference); so must a candidate under an SM policy (half the SMs), the fallback
// path (launch mode original) and, with FUSED_DECISIONS, the decision launcher.
// --bench: also times solo A, solo B, sequential, two streams and every candidate (median of --reps runs,
// all in this one process) and prints "winner <ratio>" when the best candidate beats both sequential and
// two streams, else "winner none", then the decision for this size (docs/user/fuse-kernels.md, "Decisions"):
//   decide <kernel A>+<kernel B> scale <s> tasks <tasks A> <tasks B>: fused <ratio> (...) | streams (...) | sequential
//   (...)
// A fused candidate is chosen only when it is at least --min-margin percent (default 2) faster than both
// sequential and two streams; two streams only when that much faster than sequential.
// Candidates with register budgets (fuse-kernels --reg-budget, labels like 1:2/2@80:40) are checked and timed
// like the others; whether their setmaxnreg path is compiled in (-arch=sm_90a) is printed once ("setmaxnreg"
// line), and each candidate line gives its resident warps per SM of each kernel.
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

// FUSION_TUNER_CHECK: exits with the call, file and line when a CUDA call fails.
#define FUSION_TUNER_CHECK(expr)                                                                                       \
  do {                                                                                                                 \
    cudaError_t fusion_tuner_e_ = (expr);                                                                              \
    if (fusion_tuner_e_ != cudaSuccess) {                                                                              \
      std::fprintf(stderr, "%s:%d: %s returned %s (%s)\n", __FILE__, __LINE__, #expr,                                  \
                   cudaGetErrorName(fusion_tuner_e_), cudaGetErrorString(fusion_tuner_e_));                            \
      std::exit(1);                                                                                                    \
    }                                                                                                                  \
  } while (0)

#define FUSION_STR2(x) #x
#define FUSION_STR(x) FUSION_STR2(x)

static PROBLEM_A pa;
static PROBLEM_B pb;

static void run_original_a(cudaStream_t s) {
  pa.with_args([&](dim3 g, dim3 b, size_t sh, auto... a) { KERNEL_A<<<g, b, sh, s>>>(a...); });
}
static void run_original_b(cudaStream_t s) {
  pb.with_args([&](dim3 g, dim3 b, size_t sh, auto... a) { KERNEL_B<<<g, b, sh, s>>>(a...); });
}
static bool run_fused(const fused_pair_candidate &c, cudaStream_t s) {
  bool fused = false;
  pa.with_args([&](dim3 ga, dim3 ba, size_t sa, auto... a) {
    pb.with_args([&](dim3 gb, dim3 bb, size_t sb, auto... b) {
      fused = c.launch(ptb::LaunchConfig(ga, ba, sa, s), a..., ptb::LaunchConfig(gb, bb, sb, s), b...);
    });
  });
  return fused;
}
#ifdef FUSED_DECISIONS
static bool run_decided(cudaStream_t s) {
  bool fused = false;
  pa.with_args([&](dim3 ga, dim3 ba, size_t sa, auto... a) {
    pb.with_args([&](dim3 gb, dim3 bb, size_t sb, auto... b) {
      fused = fused_pair_launch(ptb::LaunchConfig(ga, ba, sa, s), a..., ptb::LaunchConfig(gb, bb, sb, s), b...);
    });
  });
  return fused;
}
#endif

// Whether this binary's device code has the setmaxnreg path of budgeted candidates (sm_90a).
__global__ void fusion_pair_setmaxnreg_probe(int *on) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  *on = 1;
#else
  *on = 0;
#endif
}

// The slot counts of a candidate label ("1:2", "1:2/2", "1:2/2@80:40") and its register budgets ("" if none).
static void parse_label(const char *label, unsigned &a, unsigned &b, std::string &budgets) {
  a = b = 0;
  std::sscanf(label, "%u:%u", &a, &b);
  const char *at = std::strchr(label, '@');
  budgets = at ? at + 1 : "";
}

template <class F> static float median_ms(int reps, F &&f) {
  cudaEvent_t e0, e1;
  FUSION_TUNER_CHECK(cudaEventCreate(&e0));
  FUSION_TUNER_CHECK(cudaEventCreate(&e1));
  f(); // warm-up
  FUSION_TUNER_CHECK(cudaDeviceSynchronize());
  std::vector<float> t;
  for (int i = 0; i < reps; ++i) {
    FUSION_TUNER_CHECK(cudaEventRecord(e0, 0));
    f();
    FUSION_TUNER_CHECK(cudaEventRecord(e1, 0));
    FUSION_TUNER_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    FUSION_TUNER_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    t.push_back(ms);
  }
  FUSION_TUNER_CHECK(cudaEventDestroy(e0));
  FUSION_TUNER_CHECK(cudaEventDestroy(e1));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Bit-identity on the device: the words (16 bytes, then the tail bytes) where two buffers differ.
__global__ void fusion_pair_diff(const uint4 *a, const uint4 *b, size_t n16, const unsigned char *ta,
                                 const unsigned char *tb, unsigned tail, unsigned long long *count) {
  unsigned long long c = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n16; i += (size_t)gridDim.x * blockDim.x) {
    const uint4 x = a[i], y = b[i];
    c += (x.x != y.x) + (x.y != y.y) + (x.z != y.z) + (x.w != y.w);
  }
  if (blockIdx.x == 0 && threadIdx.x < tail) c += ta[threadIdx.x] != tb[threadIdx.x];
  if (c) atomicAdd(count, c);
}

// A device copy of a problem's outputs (the reference) and the comparison with them.
struct Reference {
  std::vector<FusionBuffer> copies;
  unsigned long long *count = nullptr;
  void take(const std::vector<FusionBuffer> &outs) {
    release();
    for (const FusionBuffer &o : outs) {
      void *p = nullptr;
      FUSION_TUNER_CHECK(cudaMalloc(&p, o.second));
      FUSION_TUNER_CHECK(cudaMemcpy(p, o.first, o.second, cudaMemcpyDeviceToDevice));
      copies.push_back({p, o.second});
    }
    FUSION_TUNER_CHECK(cudaMalloc(&count, sizeof(unsigned long long)));
  }
  // Whether `outs` hold the same bytes as the reference.
  bool same(const std::vector<FusionBuffer> &outs) const {
    FUSION_TUNER_CHECK(cudaMemset(count, 0, sizeof(unsigned long long)));
    for (size_t i = 0; i < outs.size(); ++i) {
      const size_t bytes = outs[i].second, n16 = bytes / 16;
      const unsigned char *a = static_cast<const unsigned char *>(outs[i].first);
      const unsigned char *b = static_cast<const unsigned char *>(copies[i].first);
      fusion_pair_diff<<<1024, 256>>>(reinterpret_cast<const uint4 *>(a), reinterpret_cast<const uint4 *>(b), n16,
                                      a + n16 * 16, b + n16 * 16, static_cast<unsigned>(bytes % 16), count);
    }
    FUSION_TUNER_CHECK(cudaGetLastError());
    unsigned long long c = 0;
    FUSION_TUNER_CHECK(cudaMemcpy(&c, count, sizeof c, cudaMemcpyDeviceToHost));
    return c == 0;
  }
  void release() {
    for (const FusionBuffer &c : copies) FUSION_TUNER_CHECK(cudaFree(const_cast<void *>(c.first)));
    copies.clear();
    if (count) FUSION_TUNER_CHECK(cudaFree(count));
    count = nullptr;
  }
};

static std::vector<double> parse_list(const char *text) {
  std::vector<double> v;
  std::string s = text;
  size_t at = 0;
  while (at <= s.size()) {
    const size_t comma = std::min(s.find(',', at), s.size());
    const std::string item = s.substr(at, comma - at);
    char *end = nullptr;
    const double x = std::strtod(item.c_str(), &end);
    if (item.empty() || *end || !(x > 0)) return {};
    v.push_back(x);
    at = comma + 1;
  }
  return v;
}

int main(int argc, char **argv) {
  double scale_a = 1.0, scale_b = 1.0, min_margin = 2.0;
  std::vector<double> scales = {1.0};
  bool bench = false;
  int reps = 11;
  unsigned seed = std::random_device{}();
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--scale-a" && i + 1 < argc)
      scale_a = std::atof(argv[++i]);
    else if (a == "--scale-b" && i + 1 < argc)
      scale_b = std::atof(argv[++i]);
    else if (a == "--scales" && i + 1 < argc && !(scales = parse_list(argv[++i])).empty()) {
    } else if (a == "--bench")
      bench = true;
    else if (a == "--reps" && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else if (a == "--min-margin" && i + 1 < argc)
      min_margin = std::atof(argv[++i]);
    else if (a == "--seed" && i + 1 < argc)
      seed = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 10));
    else {
      std::fprintf(stderr,
                   "usage: %s [--scale-a X] [--scale-b X] [--scales S,S,...] [--bench] [--reps N] [--min-margin PCT] "
                   "[--seed S]\n",
                   argv[0]);
      return 2;
    }
  }
  if (reps < 1) reps = 1;
  const std::string pair = std::string(PROBLEM_A::name) + "+" + PROBLEM_B::name;
  const std::string kernels = std::string(FUSION_STR(KERNEL_A)) + "+" + FUSION_STR(KERNEL_B);
  const size_t n = sizeof(fused_pair_candidates) / sizeof(fused_pair_candidates[0]);
  int failures = 0;
  Reference ref_a, ref_b;
  bool any_budgets = false;
  for (size_t i = 0; i < n; ++i) any_budgets |= std::strchr(fused_pair_candidates[i].ratio, '@') != nullptr;
  if (any_budgets) {
    int *d_on = nullptr;
    int on = 0;
    FUSION_TUNER_CHECK(cudaMalloc(&d_on, sizeof(int)));
    fusion_pair_setmaxnreg_probe<<<1, 1>>>(d_on);
    FUSION_TUNER_CHECK(cudaMemcpy(&on, d_on, sizeof(int), cudaMemcpyDeviceToHost));
    FUSION_TUNER_CHECK(cudaFree(d_on));
    std::printf("setmaxnreg %s: %s\n", pair.c_str(),
                on ? "compiled in (sm_90a): budgeted candidates give each kernel's warpgroups their budget"
                   : "not compiled in (not sm_90a): budgeted candidates run every slot at the launch count");
  }

  for (size_t si = 0; si < scales.size(); ++si) {
    const double s = scales[si];
    const unsigned sseed = seed + static_cast<unsigned>(si);
    pa.setup(scale_a * s, sseed);
    pb.setup(scale_b * s, sseed ^ 0x5bd1e995u);
    const unsigned long long tasks_a = ptb::grid_tasks(pa.grid), tasks_b = ptb::grid_tasks(pb.grid);
    std::printf("pair %s seed %u scale %g (scale_a %g scale_b %g) tasks %llu %llu\n", pair.c_str(), sseed, s,
                scale_a * s, scale_b * s, tasks_a, tasks_b);
    std::fflush(stdout);
    int scale_failures = 0;

    // Reference: the original kernels, one after the other.
    pa.poison();
    pb.poison();
    run_original_a(0);
    run_original_b(0);
    FUSION_TUNER_CHECK(cudaGetLastError());
    FUSION_TUNER_CHECK(cudaDeviceSynchronize());
    ref_a.take(pa.device_outputs());
    ref_b.take(pb.device_outputs());
    const bool cpu_a = pa.check_cpu(), cpu_b = pb.check_cpu();
    std::printf("original %s vs CPU: %s; %s vs CPU: %s\n", PROBLEM_A::name, cpu_a ? "PASS" : "FAIL", PROBLEM_B::name,
                cpu_b ? "PASS" : "FAIL");
    scale_failures += !cpu_a + !cpu_b;

    // Every line at the first size; at the others, a count and the failures only.
    const bool verbose = si == 0;
    unsigned identical = 0, checks = 0;
    auto compare = [&](const char *what, const char *label, bool expect_fused, bool fused) {
      FUSION_TUNER_CHECK(cudaGetLastError());
      FUSION_TUNER_CHECK(cudaDeviceSynchronize());
      const bool same_a = ref_a.same(pa.device_outputs()), same_b = ref_b.same(pb.device_outputs());
      const bool ok = same_a && same_b && fused == expect_fused;
      if (verbose || !ok)
        std::printf("%-9s ratio %-5s %s: %s=%s %s=%s%s\n", what, label, ok ? "PASS" : "FAIL", PROBLEM_A::name,
                    same_a ? "identical" : "DIFFERS", PROBLEM_B::name, same_b ? "identical" : "DIFFERS",
                    fused == expect_fused
                        ? ""
                        : (fused ? " (fused ran, expected the fallback)" : " (fell back to the originals)"));
      scale_failures += !ok;
      identical += ok;
      ++checks;
    };
    for (size_t i = 0; i < n; ++i) {
      const fused_pair_candidate &c = fused_pair_candidates[i];
      if (verbose) {
        cudaFuncAttributes fa;
        FUSION_TUNER_CHECK(cudaFuncGetAttributes(&fa, c.kernel));
        int occ = 0;
        FUSION_TUNER_CHECK(
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, c.kernel, static_cast<int>(c.threads), 0));
        unsigned sa = 0, sb = 0;
        std::string budgets;
        parse_label(c.ratio, sa, sb, budgets);
        const unsigned ta = pa.block.x * pa.block.y * pa.block.z, tb = pb.block.x * pb.block.y * pb.block.z;
        std::printf(
            "candidate %-5s threads %4u regs %3d static_smem %6zu local %zu blocks/SM %d warps/SM %s %u %s %u%s%s\n",
            c.ratio, c.threads, fa.numRegs, fa.sharedSizeBytes, fa.localSizeBytes, occ, PROBLEM_A::name,
            occ * sa * ta / 32, PROBLEM_B::name, occ * sb * tb / 32, budgets.empty() ? "" : " budgets ",
            budgets.c_str());
      }
      pa.poison();
      pb.poison();
      compare("fused", c.ratio, true, run_fused(c, 0));
    }
    // The fused kernel under an SM policy (the first half of the SMs) in its own stream.
    {
      cudaStream_t st;
      FUSION_TUNER_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
      const unsigned sms = ptb::sm_count();
      ptb::set_stream_policy(st, ptb::Policy::create(ptb::SmSet::range(0, sms / 2)));
      pa.poison();
      pb.poison();
      FUSION_TUNER_CHECK(cudaDeviceSynchronize()); // the poison (legacy default stream) must be done before a
                                                   // non-blocking stream starts
      compare("half-SMs", fused_pair_candidates[0].ratio, true, run_fused(fused_pair_candidates[0], st));
      ptb::set_stream_policy(st, ptb::Policy());
      FUSION_TUNER_CHECK(cudaStreamDestroy(st));
    }
    // The fallback: launch mode original runs the original kernels one after the other.
    ptb::set_launch_mode(ptb::LaunchMode::original);
    pa.poison();
    pb.poison();
    compare("fallback", fused_pair_candidates[n - 1].ratio, false, run_fused(fused_pair_candidates[n - 1], 0));
    ptb::set_launch_mode(ptb::LaunchMode::ptb);
#ifdef FUSED_DECISIONS
    // The decision launcher: whatever it runs at this size, the outputs are the reference's.
    const unsigned long long tasks[2] = {tasks_a, tasks_b};
    const ptb::FusedDecision<2> &decided = ptb::nearest_decision(fused_pair_decisions, tasks);
    {
      pa.poison();
      pb.poison();
      const bool fused = run_decided(0);
      FUSION_TUNER_CHECK(cudaGetLastError());
      FUSION_TUNER_CHECK(cudaDeviceSynchronize());
      const bool same_a = ref_a.same(pa.device_outputs()), same_b = ref_b.same(pb.device_outputs());
      const bool ok = same_a && same_b && fused == (decided.choice == ptb::FusedChoice::fused);
      std::printf("decided  %s tasks %llu %llu: ran %s %s: %s=%s %s=%s\n", kernels.c_str(), tasks_a, tasks_b,
                  decided.label, ok ? "PASS" : "FAIL", PROBLEM_A::name, same_a ? "identical" : "DIFFERS",
                  PROBLEM_B::name, same_b ? "identical" : "DIFFERS");
      scale_failures += !ok;
      identical += ok;
      ++checks;
    }
#endif
    std::printf("checks %s scale %g: %u of %u identical%s\n", pair.c_str(), s, identical, checks,
                scale_failures ? " FAIL" : "");
    std::fflush(stdout);
    failures += scale_failures;

    if (bench && scale_failures == 0) {
      cudaStream_t s1, s2;
      FUSION_TUNER_CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
      FUSION_TUNER_CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
      cudaEvent_t fork, join1, join2;
      FUSION_TUNER_CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
      FUSION_TUNER_CHECK(cudaEventCreateWithFlags(&join1, cudaEventDisableTiming));
      FUSION_TUNER_CHECK(cudaEventCreateWithFlags(&join2, cudaEventDisableTiming));
      const float t_a = median_ms(reps, [&] { run_original_a(0); });
      const float t_b = median_ms(reps, [&] { run_original_b(0); });
      const float t_seq = median_ms(reps, [&] {
        run_original_a(0);
        run_original_b(0);
      });
      const float t_two = median_ms(reps, [&] {
        FUSION_TUNER_CHECK(cudaEventRecord(fork, 0));
        FUSION_TUNER_CHECK(cudaStreamWaitEvent(s1, fork, 0));
        FUSION_TUNER_CHECK(cudaStreamWaitEvent(s2, fork, 0));
        run_original_a(s1);
        run_original_b(s2);
        FUSION_TUNER_CHECK(cudaEventRecord(join1, s1));
        FUSION_TUNER_CHECK(cudaEventRecord(join2, s2));
        FUSION_TUNER_CHECK(cudaStreamWaitEvent(0, join1, 0));
        FUSION_TUNER_CHECK(cudaStreamWaitEvent(0, join2, 0));
      });
      std::printf(
          "bench %s solo_a %.4f ms solo_b %.4f ms (b/a %.2f) sequential %.4f ms two_streams %.4f ms (%.3fx seq)\n",
          pair.c_str(), t_a, t_b, t_b / t_a, t_seq, t_two, t_two / t_seq);
      float best = 0;
      const char *best_ratio = nullptr;
      for (size_t i = 0; i < n; ++i) {
        const fused_pair_candidate &c = fused_pair_candidates[i];
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
      if (best < t_seq && best < t_two)
        std::printf("winner %s\n", best_ratio);
      else
        std::printf("winner none\n");
      // The decision: fused only when at least min_margin % faster than both others, two streams only when
      // that much faster than sequential. The margin: how much faster the choice is than the fastest other
      // option (negative: that option was faster, by less than min_margin).
      const double keep = 1.0 - min_margin / 100.0;
      const double fb = std::min(t_seq, t_two);
      char text[256];
      if (best <= fb * keep) {
        std::snprintf(text, sizeof text, "fused %s (%.3fx of sequential, %.3fx of two streams, margin %.1f%%)",
                      best_ratio, best / t_seq, best / t_two, 100.0 * (1.0 - best / fb));
      } else if (t_two <= t_seq * keep) {
        std::snprintf(text, sizeof text, "streams (%.3fx of sequential, best fused %s %.3fx, margin %.1f%%)",
                      t_two / t_seq, best_ratio, best / t_seq, 100.0 * (1.0 - t_two / std::min(t_seq, best)));
      } else {
        std::snprintf(text, sizeof text, "sequential (best fused %s %.3fx, two streams %.3fx, margin %.1f%%)",
                      best_ratio, best / t_seq, t_two / t_seq, 100.0 * (1.0 - t_seq / std::min(best, t_two)));
      }
#ifdef FUSED_DECISIONS
      // This build has only the decided candidates: its choice among them is not a decision to record.
      std::printf("decided-build choice %s scale %g tasks %llu %llu: %s\n", kernels.c_str(), s, tasks_a, tasks_b, text);
#else
      std::printf("decide %s scale %g tasks %llu %llu: %s\n", kernels.c_str(), s, tasks_a, tasks_b, text);
#endif
#ifdef FUSED_DECISIONS
      const float t_decided = median_ms(reps, [&] { run_decided(0); });
      std::printf("bench %s decided %s %.4f ms  %.3fx sequential  %.3fx two_streams  %.3fx best fused\n", pair.c_str(),
                  decided.label, t_decided, t_decided / t_seq, t_decided / t_two, t_decided / best);
#endif
      std::fflush(stdout);
      FUSION_TUNER_CHECK(cudaEventDestroy(fork));
      FUSION_TUNER_CHECK(cudaEventDestroy(join1));
      FUSION_TUNER_CHECK(cudaEventDestroy(join2));
      FUSION_TUNER_CHECK(cudaStreamDestroy(s1));
      FUSION_TUNER_CHECK(cudaStreamDestroy(s2));
    }
    ref_a.release();
    ref_b.release();
  }
  pa.release();
  pb.release();
  std::printf("%s %s\n", pair.c_str(), failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}

// Checks one fuse-kernels output of test/fusion/semantics/fusions.json on the GPU (README.md there).
// Compiled once per fusion (test/fusion/semantics/run_on_gpu.sh):
//   nvcc ... -DFUSED='"sem_counts_cg.cu"' -DFUSION=sem_counts_cg -DP0=sem_counts_problem -DP1=sem_cg_problem [-DP2=...]
// P0, P1[, P2] are the problems of the fusion's kernels in slot order (the launcher's argument order).
//
// Per case: fresh random inputs; the original kernels (still in the output, unchanged) run one after the
// other on poisoned (0xFF) outputs and are checked against a CPU reference; then the outputs are poisoned
// again and the fused launcher <FUSION>_launch runs; every output must be byte-identical and the launcher
// must report that the fused kernel ran (the fallback case: that it did not).
//   large     thousands of blocks per kernel: many tasks per slot
//   small     3-4 blocks per kernel: fewer tasks than slots
//   half-SMs  large, in a non-blocking stream confined to the first half of the SMs (set_stream_policy)
//   half-SMs-small  the same with the small grids
//   fallback  launch mode original: the launcher must run the originals (returns false), same outputs
// Exit status 0 when every case passes.
#include FUSED

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#define SEM_CAT2(a, b) a##b
#define SEM_CAT(a, b) SEM_CAT2(a, b)
#define SEM_STR2(a) #a
#define SEM_STR(a) SEM_STR2(a)
#define FUSION_LAUNCH SEM_CAT(FUSION, _launch)

// CUDA_CHECK: the GPU corpus harness's (it exits with the call, file and line on an error).
#include "../../gpu/common.cuh"

// Named (not anonymous) namespace: each binary uses only its fusion's problems, and nvcc warns about
// unused members of internal classes.
namespace semcheck {

enum class Size { large, small };

template <class T>
struct DevBuf {
  T* p = nullptr;
  size_t n = 0;
  void alloc(size_t count) {
    release();
    n = count;
    CUDA_CHECK(cudaMalloc(&p, n * sizeof(T)));
  }
  void put(const std::vector<T>& h) { CUDA_CHECK(cudaMemcpy(p, h.data(), n * sizeof(T), cudaMemcpyHostToDevice)); }
  void poison() { CUDA_CHECK(cudaMemset(p, 0xFF, n * sizeof(T))); }
  std::vector<T> get() const {
    std::vector<T> h(n);
    CUDA_CHECK(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
  void append_bytes(std::vector<unsigned char>& out) const {
    const size_t at = out.size();
    out.resize(at + n * sizeof(T));
    CUDA_CHECK(cudaMemcpy(out.data() + at, p, n * sizeof(T), cudaMemcpyDeviceToHost));
  }
  void release() {
    if (p) CUDA_CHECK(cudaFree(p));
    p = nullptr;
    n = 0;
  }
};

constexpr unsigned kPoison = 0xFFFFFFFFu;

// Compares a device output with the CPU's; prints the first mismatch.
template <class T>
bool same_as_cpu(const char* problem, const char* what, const std::vector<T>& got, const std::vector<T>& want) {
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < want.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0 && bad++ == 0) first = i;
  if (bad) {
    unsigned g = 0, w = 0;
    std::memcpy(&g, &got[first], sizeof(unsigned));
    std::memcpy(&w, &want[first], sizeof(unsigned));
    std::printf("  %s %s vs CPU: %zu of %zu words differ, first [%zu]: 0x%08x, want 0x%08x\n", problem, what, bad,
                want.size(), first, g, w);
  }
  return bad == 0;
}

// ---- sem_counts: 3-D block 8x4x4, 2-D grid ----
struct sem_counts_problem {
  static constexpr const char* name = "sem_counts";
  static constexpr unsigned kThreads = 128;
  dim3 grid;
  std::vector<unsigned> h_in;
  DevBuf<unsigned> in, out_thread, out_block;
  void setup(Size s, std::mt19937& rng) {
    grid = s == Size::large ? dim3(48, 50) : dim3(1, 3);
    const size_t blocks = size_t(grid.x) * grid.y;
    h_in.resize(blocks * kThreads);
    for (auto& v : h_in) v = rng();
    in.alloc(h_in.size());
    in.put(h_in);
    out_thread.alloc(2 * blocks * kThreads);
    out_block.alloc(4 * blocks);
  }
  void poison() {
    out_thread.poison();
    out_block.poison();
  }
  void outputs(std::vector<unsigned char>& o) const {
    out_thread.append_bytes(o);
    out_block.append_bytes(o);
  }
  template <class F>
  void with_args(F&& f) {
    f(grid, dim3(8, 4, 4), size_t(0), static_cast<const unsigned*>(in.p), out_thread.p, out_block.p);
  }
  void launch_original(cudaStream_t st) {
    with_args([&](dim3 g, dim3 b, size_t sh, auto... a) { sem_counts<<<g, b, sh, st>>>(a...); });
  }
  bool check_cpu() const {
    const unsigned nx = 8, ny = 4, nz = 4;
    const size_t blocks = size_t(grid.x) * grid.y;
    std::vector<unsigned> want_t(2 * blocks * kThreads), want_b(4 * blocks);
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx) {
        const size_t block = size_t(by) * grid.x + bx;
        const unsigned* v = &h_in[block * kThreads];
        auto at = [&](unsigned z, unsigned y, unsigned x) { return (z * ny + y) * nx + x; };
        unsigned cnt = 0, all = 1, any = 0;
        for (unsigned t = 0; t < kThreads; ++t) {
          cnt += v[t] & 1u;
          all &= (v[t] & 63u) != 0u;
          any |= (v[t] & 255u) == 0u;
        }
        unsigned s2[kThreads];
        for (unsigned z = 0; z < nz; ++z)
          for (unsigned y = 0; y < ny; ++y)
            for (unsigned x = 0; x < nx; ++x)
              s2[at(z, y, x)] = v[at((z + 1) % nz, (y + 1) % ny, (x + 1) % nx)] * 3u + cnt;
        for (unsigned z = 0; z < nz; ++z)
          for (unsigned y = 0; y < ny; ++y)
            for (unsigned x = 0; x < nx; ++x) {
              const unsigned t = at(z, y, x);
              const unsigned nb2 = s2[at(nz - 1 - z, ny - 1 - y, nx - 1 - x)];
              const size_t g = block * kThreads + t;
              want_t[2 * g] = nb2 * 2654435761u + cnt + (all << 8) + (any << 9);
              want_t[2 * g + 1] = x | (y << 4) | (z << 8) | (nx << 12) | (ny << 16) | (nz << 20) | (t << 24);
              if (t == kThreads - 1) {
                want_b[4 * block + 0] = cnt | (nb2 << 8);
                want_b[4 * block + 1] = all | (any << 1);
                want_b[4 * block + 2] = bx | (by << 16);
                want_b[4 * block + 3] = grid.x | (grid.y << 16) | (1u << 30);
              }
            }
      }
    const bool a = same_as_cpu(name, "out_thread", out_thread.get(), want_t);
    const bool b = same_as_cpu(name, "out_block", out_block.get(), want_b);
    return a && b;
  }
  void release() {
    in.release();
    out_thread.release();
    out_block.release();
  }
};

// ---- sem_cg: cooperative groups, 1-D block 128 ----
struct sem_cg_problem {
  static constexpr const char* name = "sem_cg";
  static constexpr unsigned kThreads = 128;
  int n = 0;
  unsigned blocks = 0;
  std::vector<float> h_in;
  DevBuf<float> in, out_sum, out_val;
  DevBuf<unsigned> out_info;
  void setup(Size s, std::mt19937& rng) {
    n = s == Size::large ? int(kThreads * 3000 - 37) : int(kThreads * 3 - 5);
    blocks = (unsigned(n) + kThreads - 1) / kThreads;
    std::uniform_real_distribution<float> d(-1.f, 1.f);
    h_in.resize(n);
    for (auto& v : h_in) v = d(rng);
    in.alloc(n);
    in.put(h_in);
    out_sum.alloc(blocks);
    out_val.alloc(n);
    out_info.alloc(size_t(blocks) * kThreads);
  }
  void poison() {
    out_sum.poison();
    out_val.poison();
    out_info.poison();
  }
  void outputs(std::vector<unsigned char>& o) const {
    out_sum.append_bytes(o);
    out_val.append_bytes(o);
    out_info.append_bytes(o);
  }
  template <class F>
  void with_args(F&& f) {
    f(dim3(blocks), dim3(kThreads), size_t(0), static_cast<const float*>(in.p), out_sum.p, out_val.p, out_info.p, n);
  }
  void launch_original(cudaStream_t st) {
    with_args([&](dim3 g, dim3 b, size_t sh, auto... a) { sem_cg<<<g, b, sh, st>>>(a...); });
  }
  bool check_cpu() const {
    std::vector<float> want_sum(blocks), want_val(n);
    std::vector<unsigned> want_info(size_t(blocks) * kThreads);
    for (unsigned blk = 0; blk < blocks; ++blk) {
      float v[kThreads], red[kThreads];
      for (unsigned r = 0; r < kThreads; ++r) {
        const size_t i = size_t(blk) * kThreads + r;
        v[r] = i < size_t(n) ? h_in[i] : 0.f;
      }
      for (unsigned r = 0; r < kThreads; ++r) red[r] = v[(r + 1) % kThreads] * 2.f + v[r];  // *2 is exact: fma or not
      for (unsigned w = kThreads / 2; w > 0; w /= 2)
        for (unsigned r = 0; r < w; ++r) red[r] += red[r + w];
      const float total = red[0];
      want_sum[blk] = total;
      for (unsigned r = 0; r < kThreads; ++r) {
        const size_t i = size_t(blk) * kThreads + r;
        if (i < size_t(n)) want_val[i] = total - v[kThreads - 1 - r];
        want_info[i] = r | (r << 8) | (kThreads << 16) | ((kThreads & 0xffu) << 24);
      }
    }
    const bool a = same_as_cpu(name, "out_sum", out_sum.get(), want_sum);
    const bool b = same_as_cpu(name, "out_val", out_val.get(), want_val);
    const bool c = same_as_cpu(name, "out_info", out_info.get(), want_info);
    return a && b && c;
  }
  void release() {
    in.release();
    out_sum.release();
    out_val.release();
    out_info.release();
  }
};

// ---- sem_dyn: 2-D block 32x2, dynamic shared memory, early return ----
struct sem_dyn_problem {
  static constexpr const char* name = "sem_dyn";
  static constexpr unsigned kThreads = 64;
  static constexpr size_t kShmem = 2 * kThreads * sizeof(unsigned);  // 64 + 64 words
  unsigned blocks = 0;
  std::vector<unsigned> h_in;
  DevBuf<unsigned> in, out, out_block;
  void setup(Size s, std::mt19937& rng) {
    blocks = s == Size::large ? 3001 : 4;  // block 3 (and every 5th after it) returns at once
    h_in.resize(size_t(blocks) * 2 * kThreads);
    for (auto& v : h_in) v = rng();
    in.alloc(h_in.size());
    in.put(h_in);
    out.alloc(size_t(blocks) * kThreads);
    out_block.alloc(2 * size_t(blocks));
  }
  void poison() {
    out.poison();
    out_block.poison();
  }
  void outputs(std::vector<unsigned char>& o) const {
    out.append_bytes(o);
    out_block.append_bytes(o);
  }
  template <class F>
  void with_args(F&& f) {
    f(dim3(blocks), dim3(32, 2), kShmem, static_cast<const unsigned*>(in.p), out.p, out_block.p);
  }
  void launch_original(cudaStream_t st) {
    with_args([&](dim3 g, dim3 b, size_t sh, auto... a) { sem_dyn<<<g, b, sh, st>>>(a...); });
  }
  bool check_cpu() const {
    const unsigned nt = kThreads;
    std::vector<unsigned> want(size_t(blocks) * nt, kPoison), want_b(2 * size_t(blocks), kPoison);
    for (unsigned blk = 0; blk < blocks; ++blk) {
      if (blk % 5 == 3) continue;  // returned: the poison stays
      const size_t base = size_t(blk) * nt;
      unsigned buf[2 * kThreads], a[kThreads], buf2[2 * kThreads];
      for (unsigned t = 0; t < nt; ++t) {
        const unsigned x = t % 32, y = t / 32;
        buf[t] = h_in[2 * base + t];
        buf[nt + t] = h_in[2 * base + nt + t] ^ (x << 3) ^ y;
      }
      for (unsigned t = 0; t < nt; ++t) a[t] = buf[(t + 1) % nt] + buf[2 * nt - 1 - t] * 7u;
      for (unsigned t = 0; t < nt; ++t) {
        buf2[t] = a[t] * 3u + t / 32;
        buf2[nt + t] = a[t] ^ 0x9e3779b9u;
      }
      for (unsigned t = 0; t < nt; ++t) want[base + t] = buf2[nt - 1 - t] + buf2[nt + (t + nt / 2) % nt] * 5u;
      want_b[2 * blk] = blk;
      want_b[2 * blk + 1] = blocks ^ (32u << 20) ^ (2u << 28);
    }
    const bool a = same_as_cpu(name, "out", out.get(), want);
    const bool b = same_as_cpu(name, "out_block", out_block.get(), want_b);
    return a && b;
  }
  void release() {
    in.release();
    out.release();
    out_block.release();
  }
};

// ---- sem_warp: 1-D block 96, warp shuffles and ballots ----
struct sem_warp_problem {
  static constexpr const char* name = "sem_warp";
  static constexpr unsigned kThreads = 96, kWarps = kThreads / 32;
  int n = 0;
  unsigned blocks = 0;
  std::vector<int> h_in;
  DevBuf<int> in, out_sum;
  DevBuf<unsigned> out_ballot, out_lane;
  void setup(Size s, std::mt19937& rng) {
    n = s == Size::large ? int(kThreads * 2500 - 50) : int(kThreads * 3 - 17);
    blocks = (unsigned(n) + kThreads - 1) / kThreads;
    h_in.resize(n);
    for (auto& v : h_in) v = static_cast<int>(rng());
    in.alloc(n);
    in.put(h_in);
    out_sum.alloc(size_t(blocks) * kWarps);
    out_ballot.alloc(size_t(blocks) * kWarps);
    out_lane.alloc(2 * size_t(blocks) * kThreads);
  }
  void poison() {
    out_sum.poison();
    out_ballot.poison();
    out_lane.poison();
  }
  void outputs(std::vector<unsigned char>& o) const {
    out_sum.append_bytes(o);
    out_ballot.append_bytes(o);
    out_lane.append_bytes(o);
  }
  template <class F>
  void with_args(F&& f) {
    f(dim3(blocks), dim3(kThreads), size_t(0), static_cast<const int*>(in.p), out_sum.p, out_ballot.p, out_lane.p, n);
  }
  void launch_original(cudaStream_t st) {
    with_args([&](dim3 g, dim3 b, size_t sh, auto... a) { sem_warp<<<g, b, sh, st>>>(a...); });
  }
  bool check_cpu() const {
    std::vector<int> want_sum(size_t(blocks) * kWarps);
    std::vector<unsigned> want_bal(size_t(blocks) * kWarps), want_lane(2 * size_t(blocks) * kThreads);
    for (size_t warp = 0; warp < size_t(blocks) * kWarps; ++warp) {
      int v[32];
      unsigned sum = 0, bal = 0;
      for (unsigned l = 0; l < 32; ++l) {
        const size_t i = warp * 32 + l;
        v[l] = i < size_t(n) ? h_in[i] : 0;
        sum += static_cast<unsigned>(v[l]);
        if ((v[l] & 3) == 0) bal |= 1u << l;
      }
      want_sum[warp] = static_cast<int>(sum);
      want_bal[warp] = bal;
      const unsigned w = unsigned(warp % kWarps);
      for (unsigned l = 0; l < 32; ++l) {
        const size_t i = warp * 32 + l;
        want_lane[2 * i] = static_cast<unsigned>(v[(l + 7) & 31u]);
        want_lane[2 * i + 1] = 1u | (w << 1) | (kWarps << 8) | (unsigned(__builtin_popcount(bal)) << 16);
      }
    }
    const bool a = same_as_cpu(name, "out_sum", out_sum.get(), want_sum);
    const bool b = same_as_cpu(name, "out_ballot", out_ballot.get(), want_bal);
    const bool c = same_as_cpu(name, "out_lane", out_lane.get(), want_lane);
    return a && b && c;
  }
  void release() {
    in.release();
    out_sum.release();
    out_ballot.release();
    out_lane.release();
  }
};

// ---- sem_callee: 1-D block 128, 2-D grid, slot copies of the device functions it calls ----
struct sem_callee_problem {
  static constexpr const char* name = "sem_callee";
  static constexpr unsigned kThreads = 128, kGx = 50;
  int n = 0;
  dim3 grid;
  std::vector<unsigned> h_in;
  DevBuf<unsigned> in, out_sum, out_rot;
  void setup(Size s, std::mt19937& rng) {
    n = s == Size::large ? int(kThreads * 3000 - 77) : int(kThreads * 3 - 9);
    const unsigned blocks = (unsigned(n) + kThreads - 1) / kThreads;
    grid = s == Size::large ? dim3(kGx, (blocks + kGx - 1) / kGx) : dim3(blocks, 1);
    h_in.resize(n);
    for (auto& v : h_in) v = rng();
    in.alloc(n);
    in.put(h_in);
    out_sum.alloc(size_t(grid.x) * grid.y);
    out_rot.alloc(n);
  }
  void poison() {
    out_sum.poison();
    out_rot.poison();
  }
  void outputs(std::vector<unsigned char>& o) const {
    out_sum.append_bytes(o);
    out_rot.append_bytes(o);
  }
  template <class F>
  void with_args(F&& f) {
    f(grid, dim3(kThreads), size_t(0), static_cast<const unsigned*>(in.p), out_sum.p, out_rot.p, n);
  }
  void launch_original(cudaStream_t st) {
    with_args([&](dim3 g, dim3 b, size_t sh, auto... a) { sem_callee<<<g, b, sh, st>>>(a...); });
  }
  bool check_cpu() const {
    const size_t nb = size_t(grid.x) * grid.y;
    std::vector<unsigned> want_sum(nb), want_rot(n);
    for (size_t b = 0; b < nb; ++b) {
      unsigned sum = 0;
      for (unsigned t = 0; t < kThreads; ++t) {
        const size_t i = b * kThreads + t;
        const unsigned v = i < size_t(n) ? h_in[i] : 0u;
        sum += v;
        if (i < size_t(n)) {
          const size_t j = b * kThreads + (t + 5) % kThreads;
          const unsigned w = j < size_t(n) ? h_in[j] : 0u;
          want_rot[i] = w * 3u + unsigned(b);
        }
      }
      want_sum[b] = sum;
    }
    // Blocks past the data (the 2-D grid's last row) still write their (zero) sum.
    const bool a = same_as_cpu(name, "out_sum", out_sum.get(), want_sum);
    const bool c = same_as_cpu(name, "out_rot", out_rot.get(), want_rot);
    return a && c;
  }
  void release() {
    in.release();
    out_sum.release();
    out_rot.release();
  }
};

}  // namespace semcheck

namespace {
using namespace semcheck;

#if defined(P2)
using Problems = std::tuple<P0, P1, P2>;
#else
using Problems = std::tuple<P0, P1>;
#endif
Problems problems;

template <class F>
void for_each_problem(F&& f) {
  std::apply([&](auto&... p) { (f(p), ...); }, problems);
}

// Calls f(LaunchConfig0, args0..., LaunchConfig1, args1..., ...): the fused launcher's argument list.
template <size_t I, class F, class... Acc>
void with_all_args(cudaStream_t st, F& f, Acc... acc) {
  if constexpr (I == std::tuple_size<Problems>::value) {
    f(acc...);
  } else {
    std::get<I>(problems).with_args([&](dim3 g, dim3 b, size_t sh, auto... a) {
      with_all_args<I + 1>(st, f, acc..., ptb::LaunchConfig(g, b, sh, st), a...);
    });
  }
}

bool run_fused(cudaStream_t st) {
  bool fused = false;
  auto call = [&](auto... all) { fused = FUSION_LAUNCH(all...); };
  with_all_args<0>(st, call);
  return fused;
}

std::vector<std::vector<unsigned char>> all_outputs() {
  std::vector<std::vector<unsigned char>> o;
  for_each_problem([&](auto& p) {
    o.emplace_back();
    p.outputs(o.back());
  });
  return o;
}

int run_case(const char* what, Size size, unsigned seed, bool half_sms, bool expect_fused) {
  std::mt19937 rng(seed);
  for_each_problem([&](auto& p) { p.setup(size, rng); });
  // Reference: the originals, one after the other, on poisoned outputs; checked against the CPU.
  for_each_problem([&](auto& p) { p.poison(); });
  for_each_problem([&](auto& p) { p.launch_original(0); });
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  bool cpu_ok = true;
  for_each_problem([&](auto& p) {
    if (!p.check_cpu()) {
      std::printf("  %s: original %s differs from the CPU reference\n", what, p.name);
      cpu_ok = false;
    }
  });
  const auto ref = all_outputs();

  cudaStream_t st = 0;
  if (half_sms) {
    CUDA_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    ptb::set_stream_policy(st, ptb::Policy::create(ptb::SmSet::range(0, ptb::sm_count() / 2)));
  }
  if (!expect_fused) ptb::set_launch_mode(ptb::LaunchMode::original);
  for_each_problem([&](auto& p) { p.poison(); });
  CUDA_CHECK(cudaDeviceSynchronize());  // the poison (legacy default stream) is done before a non-blocking stream starts
  const bool fused = run_fused(st);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  if (!expect_fused) ptb::set_launch_mode(ptb::LaunchMode::ptb);
  if (half_sms) {
    ptb::set_stream_policy(st, ptb::Policy());
    CUDA_CHECK(cudaStreamDestroy(st));
  }

  const auto got = all_outputs();
  bool same = true;
  std::string detail;
  size_t k = 0;
  for_each_problem([&](auto& p) {
    const auto& g = got[k];
    const auto& r = ref[k];
    ++k;
    if (g.size() == r.size() && std::memcmp(g.data(), r.data(), r.size()) == 0) {
      detail += std::string(" ") + p.name + "=identical";
      return;
    }
    same = false;
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < r.size(); i += 4)
      if (std::memcmp(&g[i], &r[i], 4) != 0 && bad++ == 0) first = i / 4;
    unsigned gw = 0, rw = 0;
    std::memcpy(&gw, &g[4 * first], 4);
    std::memcpy(&rw, &r[4 * first], 4);
    char buf[200];
    std::snprintf(buf, sizeof buf, " %s=DIFFERS(%zu of %zu words, first word %zu: 0x%08x, original 0x%08x)", p.name,
                  bad, r.size() / 4, first, gw, rw);
    detail += buf;
  });
  const bool ok = cpu_ok && same && fused == expect_fused;
  std::printf("%s %-14s %s:%s%s%s\n", SEM_STR(FUSION), what, ok ? "PASS" : "FAIL", detail.c_str(),
              cpu_ok ? "" : " (originals differ from the CPU)",
              fused == expect_fused ? "" : (fused ? " (fused ran, expected the fallback)" : " (fell back to the originals)"));
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  unsigned seed = std::random_device{}();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--seed" && i + 1 < argc) {
      seed = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 10));
    } else {
      std::fprintf(stderr, "usage: %s [--seed S]\n", argv[0]);
      return 2;
    }
  }
  std::printf("%s seed %u\n", SEM_STR(FUSION), seed);
  int failures = 0;
  failures += run_case("large", Size::large, seed, false, true);
  failures += run_case("small", Size::small, seed + 1, false, true);
  failures += run_case("half-SMs", Size::large, seed + 2, true, true);
  failures += run_case("half-SMs-small", Size::small, seed + 3, true, true);
  failures += run_case("fallback", Size::large, seed + 4, false, false);
  for_each_problem([](auto& p) { p.release(); });
  std::printf("%s %s\n", SEM_STR(FUSION), failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}

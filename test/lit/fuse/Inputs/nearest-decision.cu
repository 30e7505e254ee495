// The rule of a decision launcher (fuse-kernels --decisions-from): ptb::nearest_decision picks the
// measured size with the least sum over the kernels of |ln(tasks / measured)|, the first of equal ones.
// Host code only (no GPU needed); prints "nearest-decision: PASS" or the first mismatch.
#include "ptb/ptb.cuh"

#include <cstdio>
#include <string>

static const ptb::FusedDecision<2> table[] = {
    {{100ull, 100ull}, ptb::FusedChoice::sequential, -1, "sequential"},
    {{1000ull, 1000ull}, ptb::FusedChoice::fused, 0, "2:2"},
    {{10000ull, 10000ull}, ptb::FusedChoice::streams, -1, "streams"},
};

static int check(unsigned long long a, unsigned long long b, const char* want) {
  const unsigned long long tasks[2] = {a, b};
  const char* got = ptb::nearest_decision(table, tasks).label;
  if (std::string(got) == want) return 0;
  std::printf("nearest-decision: tasks %llu %llu gave %s, expected %s\n", a, b, got, want);
  return 1;
}

int main() {
  int bad = 0;
  bad += check(100, 100, "sequential");       // exact
  bad += check(1, 1, "sequential");           // below every size: the smallest
  bad += check(0, 0, "sequential");           // 0 tasks count as 1
  bad += check(300, 300, "sequential");       // ln 3 < ln (10/3)
  bad += check(400, 400, "2:2");              // ln 4 > ln 2.5
  bad += check(2000, 100000, "streams");      // ln 5 + ln 10 < ln 2 + ln 100: both kernels' sizes count
  bad += check(150, 5000, "2:2");             // ln 6.7 + ln 5 < ln 1.5 + ln 50 and < ln 66.7 + ln 2
  bad += check(1ull << 50, 1ull << 50, "streams");
  bad += check(316, 316, "sequential");       // sqrt(100 * 1000) ~ 316.2: still nearer 100
  const ptb::FusedDecision<2> tie[] = {{{10ull, 1000ull}, ptb::FusedChoice::sequential, -1, "first"},
                                       {{1000ull, 10ull}, ptb::FusedChoice::streams, -1, "second"}};
  const unsigned long long mid[2] = {100, 100};
  if (std::string(ptb::nearest_decision(tie, mid).label) != "first") {
    std::printf("nearest-decision: a tie did not give the first\n");
    ++bad;
  }
  if (ptb::grid_tasks(dim3(3, 5, 7)) != 105ull || ptb::grid_tasks(dim3(65535, 65535, 64)) != 65535ull * 65535ull * 64ull) {
    std::printf("nearest-decision: grid_tasks\n");
    ++bad;
  }
  if (!bad) std::printf("nearest-decision: PASS\n");
  return bad ? 1 : 0;
}

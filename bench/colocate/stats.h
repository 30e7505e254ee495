// bench/colocate/stats.h: the report's statistics: quantiles, medians, and the pooled quantiles of a
// configuration's repetitions with their repeatability (the split). Plain C++, host only, no CUDA: a
// check program can include it alone (with -I runtime/include).
//
// Why pooled: the LS p99 of one 1 s window at 50% load is its ~34th largest request, set by a few Poisson
// bursts that find every LS stream busy, and it did not repeat (docs/design/qos.md, runs 8-14: the solo p99 of 5
// repetitions ranged 292-1027 us while the median stayed near 175 us). Every request of every repetition
// in one sample puts reps x more requests beyond the p99; the split says whether that is enough.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include <ptb/qos/epoch_loop.h>  // ptb::qos::quantile (plain C++): the controllers' quantile, so the same rank

namespace colo {

// The p-th quantile (0..1) of v by the nearest rank; 0 for no samples (ptb::qos::quantile).
inline double quantile(std::vector<double> v, double p) { return ptb::qos::quantile(v, p); }

inline double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// One configuration's samples, one vector per repetition, in repetition order (pointers: the report's
// rows keep them, and a few 10^4 doubles each need not be copied to be looked at).
using RepSamples = std::vector<const std::vector<double>*>;

// Every sample of the repetitions whose index in `reps` has the parity `parity` (0: even, 1: odd), or of
// all of them (parity < 0).
inline std::vector<double> pool(const RepSamples& reps, int parity = -1) {
  std::vector<double> all;
  for (size_t i = 0; i < reps.size(); ++i)
    if (parity < 0 || int(i % 2) == parity) all.insert(all.end(), reps[i]->begin(), reps[i]->end());
  return all;
}

// The p-th quantile of every sample of every repetition together; NAN for no samples.
inline double pooled_quantile(const RepSamples& reps, double p) {
  std::vector<double> all = pool(reps);
  return all.empty() ? NAN : ptb::qos::quantile(all, p);
}

// How well the pooled p-th quantile repeats: the repetitions split into two halves (even- and odd-numbered),
// the pooled quantile of each, max / min of the two (1: the halves agree). NAN with fewer than two
// repetitions, or when a half has no sample or a quantile of 0 (no ratio).
inline double split_spread(const RepSamples& reps, double p) {
  if (reps.size() < 2) return NAN;
  std::vector<double> even = pool(reps, 0), odd = pool(reps, 1);
  if (even.empty() || odd.empty()) return NAN;
  const double a = ptb::qos::quantile(even, p), b = ptb::qos::quantile(odd, p);
  const double lo = std::min(a, b), hi = std::max(a, b);
  return lo > 0 ? hi / lo : NAN;
}

// The same for one window's samples in time order: its first half against its second (what the LS role of
// processes.sh prints, one window a process).
inline double halves_spread(const std::vector<double>& v, double p) {
  const std::vector<double> first(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2)),
      second(v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return split_spread(RepSamples{&first, &second}, p);
}

}  // namespace colo

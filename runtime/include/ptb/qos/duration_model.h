// ptb/qos/duration_model.h: how long a kernel launch will take, learned online from the launches' own
// timings (Tacker's duration predictor; docs/design/qos-duration-model.md). Plain C++, no CUDA, like
// controller.h: the timings come from the caller (%globaltimer stamps or the runtime's trace), and the
// models are tested on the CPU (test/unit/QosDurationModelTest.cpp).
//
// DurationModel: one kernel (one key) on one SM set. observe(tasks, ns) after a launch of `tasks` blocks (the
// original grid's blocks: a PTB twin's tasks) took `ns` on the device; predict(tasks) before one. Tacker fits a
// line, t = a + b * tasks. A GPU runs blocks in waves, so the time of a launch is a staircase in its block count: a
// compute-bound block keeps its SM's pipes busy, so t grows with the blocks per SM, ceil(tasks / sms); a block that
// waits on latency shares its SM for free until the SM's places are full, ceil(tasks / places); a memory-bound kernel
// shares the device's bandwidth and is close to a line; a kernel whose blocks wait on latency takes about the same
// time for any grid up to a knee, where the SMs' pipes or the memory saturate, and grows linearly past it. The model
// fits each of these forms (each a linear regression, up to three coefficients) to the samples it holds and predicts
// with the one whose leave-one-out error is smallest (a simpler one when it is within 5% of the best): the data
// decide, per kernel, and bench/duration_model measured which form wins on the H100. Errors are relative (each
// sample weighted 1/ns^2): a launch of 10 us and one of 10 ms count alike.
//
// FusedDurationModel: a fused kernel (fuse-kernels: slots of part A and part B in one block) as Tacker's
// two-segment model in the load ratio r = x_b / x_a, where x_a and x_b are the parts' own predicted
// durations (their DurationModels at the parts' task counts): t = x_a * f(r), f piecewise linear with one
// break (both parts run together up to the break; past it part B runs alone and f's slope is about 1).
//
// Confidence: each model says how many samples it holds, its leave-one-out error and the range of inputs
// it has seen; trusted() is what a manager asks before it bets an LS request's headroom on a prediction.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <deque>
#include <limits>
#include <map>
#include <vector>

namespace ptb::qos {

namespace detail {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A weighted least-squares fit of y on up to three columns, weights 1/y^2 (relative error).
struct Wls {
  bool ok = false;               // the columns were independent on these samples
  std::array<double, 3> beta{};  // coefficients of the columns
  double loo = kInf;             // RMS of the leave-one-out relative errors (kInf: a sample fixes its own fit)
  double rms = kInf, max = kInf; // RMS and largest relative residual of the fit itself
  double r2 = 0;                 // 1 - SS_res / SS_tot, in the unit of y
};

inline Wls wls(const std::vector<std::array<double, 3>>& x, int cols, const std::vector<double>& y) {
  Wls f;
  const size_t n = y.size();
  if (n < size_t(cols) || cols < 1) return f;
  std::array<double, 3> scale{1, 1, 1}; // columns scaled to at most 1: a well-conditioned system
  for (int __j = 0; __j < cols; ++__j) {
    double __m = 0;
    for (size_t __i = 0; __i < n; ++__i) __m = std::max(__m, std::fabs(x[__i][__j]));
    if (__m > 0) scale[__j] = __m;
  }
  double a[3][6] = {}; // [M | I] -> [I | M^-1], M = Z' W Z
  std::array<double, 3> v{};
  for (size_t __i = 0; __i < n; ++__i) {
    const double w = 1 / (y[__i] * y[__i]);
    for (int __j = 0; __j < cols; ++__j) {
      v[__j] += w * x[__i][__j] / scale[__j] * y[__i];
      for (int __k = 0; __k < cols; ++__k) a[__j][__k] += w * x[__i][__j] / scale[__j] * x[__i][__k] / scale[__k];
    }
  }
  for (int __j = 0; __j < cols; ++__j) a[__j][cols + __j] = 1;
  const double tiny = 1e-10 * std::max({a[0][0], a[1][1], a[2][2]});
  for (int c = 0; c < cols; ++c) { // Gauss-Jordan with partial pivoting
    int p = c;
    for (int __r = c + 1; __r < cols; ++__r)
      if (std::fabs(a[__r][c]) > std::fabs(a[p][c])) p = __r;
    if (!(std::fabs(a[p][c]) > tiny)) return f; // singular: e.g. a line through one task count
    for (int __k = 0; __k < 2 * cols; ++__k) std::swap(a[c][__k], a[p][__k]);
    const double d = a[c][c];
    for (int __k = 0; __k < 2 * cols; ++__k) a[c][__k] /= d;
    for (int __r = 0; __r < cols; ++__r)
      if (__r != c) {
        const double __m = a[__r][c];
        for (int __k = 0; __k < 2 * cols; ++__k) a[__r][__k] -= __m * a[c][__k];
      }
  }
  auto inv = [&](int __j, int __k) { return a[__j][cols + __k]; };
  std::array<double, 3> bz{};
  for (int __j = 0; __j < cols; ++__j)
    for (int __k = 0; __k < cols; ++__k) bz[__j] += inv(__j, __k) * v[__k];
  double loo2 = 0, rms2 = 0, ss_res = 0, ss_tot = 0, mean = 0;
  for (size_t __i = 0; __i < n; ++__i) mean += y[__i] / n;
  f.max = 0;
  for (size_t __i = 0; __i < n; ++__i) {
    double fit = 0, h = 0;
    for (int __j = 0; __j < cols; ++__j) {
      fit += bz[__j] * x[__i][__j] / scale[__j];
      for (int __k = 0; __k < cols; ++__k) h += x[__i][__j] / scale[__j] * inv(__j, __k) * x[__i][__k] / scale[__k];
    }
    h /= y[__i] * y[__i]; // leverage of sample i in the weighted fit
    const double e = (y[__i] - fit) / y[__i];
    rms2 += e * e;
    f.max = std::max(f.max, std::fabs(e));
    ss_res += (y[__i] - fit) * (y[__i] - fit);
    ss_tot += (y[__i] - mean) * (y[__i] - mean);
    loo2 = (h < 1 - 1e-9 && loo2 < kInf) ? loo2 + (e / (1 - h)) * (e / (1 - h)) : kInf;
  }
  for (int __j = 0; __j < cols; ++__j) f.beta[__j] = bz[__j] / scale[__j];
  f.ok = true;
  f.rms = std::sqrt(rms2 / n);
  f.loo = loo2 < kInf ? std::sqrt(loo2 / n) : kInf;
  f.r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : (ss_res <= 0 ? 1 : 0);
  return f;
}

} // namespace detail

// The forms a DurationModel fits (columns of the regression; t in ns, n = tasks):
enum class DurationForm : unsigned {
  constant,    // t = a
  line,        // t = a + b n                          (Tacker)
  sm_waves,    // t = a + c ceil(n / sms)              (each SM's blocks run one after another)
  place_waves, // t = a + c ceil(n / places)           (a wave fills every SM's places)
  mixed,       // t = a + b n + c ceil(n / places)     (a line with a step per wave)
  knee,        // t = a + b max(0, n - k)              (a floor until the SMs or the memory saturate)
};
constexpr unsigned kDurationForms = 6;
inline const char* form_name(DurationForm f) {
  static const char* names[] = {"constant", "line", "sm-waves", "place-waves", "mixed", "knee"};
  return names[unsigned(f)];
}

// How trustworthy a model is: samples held, the chosen form, its leave-one-out relative error (RMS) and
// the fit's own, and the task counts seen.
struct DurationConfidence {
  size_t samples = 0;
  DurationForm form = DurationForm::constant;
  double loo_error = detail::kInf, fit_error = detail::kInf;
  double min_tasks = 0, max_tasks = 0;
};

// One form's fit over the samples held (diagnostics: bench/duration_model prints these).
struct DurationFit {
  DurationForm form = DurationForm::constant;
  bool ok = false;
  double a = 0, b = 0, c = 0; // t = a + b n + c waves (the form's unused coefficients are 0)
  double k = 0;               // knee: the task count where the floor ends
  double r2 = 0, rms_error = detail::kInf, max_error = detail::kInf, loo_error = detail::kInf;
};

class DurationModel {
public:
  // sms: the SMs the kernel's launches may use; places: blocks resident at once on them (occupancy x sms);
  // window: the latest samples kept (older ones are forgotten, so a drift is followed), 0: all.
  explicit DurationModel(unsigned sms = 1, unsigned places = 1, size_t window = 64)
      : sms_(std::max(1u, sms)), places_(std::max(1u, places)), window_(window) {}

  // A launch of `tasks` tasks took `ns` on the device. Non-positive times are ignored.
  void observe(double tasks, double ns) {
    if (!(ns > 0) || !(tasks >= 0)) return;
    samples_.push_back({tasks, ns});
    if (window_ && samples_.size() > window_) samples_.pop_front();
    refit();
  }

  // The predicted duration (ns) of a launch of `tasks` tasks; 0 before any sample. Never below half the
  // fastest launch held: a line extrapolated below the smallest grid seen can fall to zero or below.
  double predict(double tasks) const {
    if (samples_.empty()) return 0;
    return std::max(eval(best_, tasks), 0.5 * min_ns_);
  }

  DurationConfidence confidence() const {
    DurationConfidence c;
    c.samples = samples_.size();
    c.form = best_.form;
    c.loo_error = best_.loo_error;
    c.fit_error = best_.rms_error;
    c.min_tasks = min_tasks_;
    c.max_tasks = max_tasks_;
    return c;
  }
  // Whether to bet on predict(tasks): enough samples, a leave-one-out error within `tolerance`, and
  // `tasks` inside the range of task counts seen (no extrapolation).
  bool trusted(double tasks, double tolerance = 0.10, size_t min_samples = 8) const {
    return samples_.size() >= min_samples && best_.loo_error <= tolerance && tasks >= min_tasks_ && tasks <= max_tasks_;
  }

  // One form fitted to the samples held (whether or not it is the one predicting). The knee form is a
  // line in max(0, n - k) for each k tried (up to 24 of the task counts held, two at least on each side
  // of it, then 16 places between the best one's neighbours); the smallest leave-one-out error wins.
  DurationFit fit(DurationForm form) const {
    if (form != DurationForm::knee) return fit_at(form, 0);
    std::vector<double> ns;
    for (const Sample& s : samples_) ns.push_back(s.tasks);
    std::sort(ns.begin(), ns.end());
    ns.erase(std::unique(ns.begin(), ns.end()), ns.end());
    DurationFit best;
    best.form = form;
    auto keep = [&](double __k) {
      const DurationFit f = fit_at(form, __k);
      if (f.ok && (!best.ok || f.loo_error < best.loo_error)) best = f;
    };
    const size_t tries = ns.size() < 4 ? 0 : ns.size() - 3, __stride = std::max<size_t>(1, tries / 24);
    size_t at = 0;
    for (size_t __i = 1; __i + 2 < ns.size(); __i += __stride) { // k = ns[i]: ns[0..i] flat, two above
      keep(ns[__i]);
      if (best.ok && best.k == ns[__i]) at = __i;
    }
    if (!best.ok) return best;
    // then 16 places between the neighbours of the best one (the knee lies between the task counts seen)
    const double lo = ns[at > __stride ? at - __stride : 1], hi = ns[std::min(at + __stride, ns.size() - 3)];
    for (int __j = 1; __j < 16; ++__j) keep(lo + (hi - lo) * __j / 16);
    return best;
  }

  unsigned sms() const { return sms_; }
  unsigned places() const { return places_; }

private:
  struct Sample {
    double tasks, ns;
  };

  DurationFit fit_at(DurationForm form, double knee) const {
    std::vector<std::array<double, 3>> x;
    std::vector<double> y;
    x.reserve(samples_.size());
    y.reserve(samples_.size());
    for (const Sample& s : samples_) {
      x.push_back(columns(form, s.tasks, knee));
      y.push_back(s.ns);
    }
    const detail::Wls w = detail::wls(x, cols(form), y);
    DurationFit f;
    f.form = form;
    f.ok = w.ok;
    f.r2 = w.r2, f.rms_error = w.rms, f.max_error = w.max, f.loo_error = w.loo;
    f.a = w.beta[0], f.k = knee;
    if (form == DurationForm::line || form == DurationForm::mixed || form == DurationForm::knee) f.b = w.beta[1];
    if (form == DurationForm::sm_waves || form == DurationForm::place_waves) f.c = w.beta[1];
    if (form == DurationForm::mixed) f.c = w.beta[2];
    return f;
  }

  // Coefficients a form chooses: its columns', and the knee's place.
  static int params_of(DurationForm f) { return f == DurationForm::knee ? 3 : cols(f); }
  static int cols(DurationForm f) { return f == DurationForm::constant ? 1 : f == DurationForm::mixed ? 3 : 2; }
  std::array<double, 3> columns(DurationForm f, double n, double knee) const {
    switch (f) {
    case DurationForm::constant: return {1, 0, 0};
    case DurationForm::line: return {1, n, 0};
    case DurationForm::sm_waves: return {1, std::ceil(n / sms_), 0};
    case DurationForm::place_waves: return {1, std::ceil(n / places_), 0};
    case DurationForm::mixed: return {1, n, std::ceil(n / places_)};
    case DurationForm::knee: return {1, std::max(0.0, n - knee), 0};
    }
    return {1, 0, 0};
  }
  double eval(const DurationFit& f, double n) const {
    switch (f.form) {
    case DurationForm::constant: return f.a;
    case DurationForm::line: return f.a + f.b * n;
    case DurationForm::sm_waves: return f.a + f.c * std::ceil(n / sms_);
    case DurationForm::place_waves: return f.a + f.c * std::ceil(n / places_);
    case DurationForm::mixed: return f.a + f.b * n + f.c * std::ceil(n / places_);
    case DurationForm::knee: return f.a + f.b * std::max(0.0, n - f.k);
    }
    return f.a;
  }

  // Every form, fitted again on the samples held; the one with the smallest leave-one-out error
  // predicts, and of forms within 5% of it the one with fewest coefficients (the knee's place counts as
  // one; in enum order among equals).
  void refit() {
    min_ns_ = detail::kInf, min_tasks_ = detail::kInf, max_tasks_ = 0;
    double sum = 0;
    for (const Sample& s : samples_) {
      min_ns_ = std::min(min_ns_, s.ns);
      min_tasks_ = std::min(min_tasks_, s.tasks);
      max_tasks_ = std::max(max_tasks_, s.tasks);
      sum += s.ns;
    }
    std::array<DurationFit, kDurationForms> fits;
    double best_loo = detail::kInf;
    for (unsigned __i = 0; __i < kDurationForms; ++__i) {
      fits[__i] = fit(DurationForm(__i));
      if (fits[__i].ok) best_loo = std::min(best_loo, fits[__i].loo_error);
    }
    if (best_loo == detail::kInf) { // nothing can be judged yet (one sample): their mean
      best_ = DurationFit{};
      best_.a = sum / samples_.size();
      return;
    }
    int pick = -1;
    for (int params = 1; params <= 3 && pick < 0; ++params)
      for (unsigned __i = 0; __i < kDurationForms && pick < 0; ++__i)
        if (params_of(DurationForm(__i)) == params && fits[__i].ok && fits[__i].loo_error <= best_loo * 1.05)
          pick = int(__i);
    best_ = fits[pick];
  }

  unsigned sms_, places_;
  size_t window_;
  std::deque<Sample> samples_;
  DurationFit best_;
  double min_ns_ = 0, min_tasks_ = 0, max_tasks_ = 0;
};

// Duration models by kernel key (e.g. the kernel's function pointer, or its name): one model per key,
// made with the shape given the first time the key is seen.
template <class Key> class DurationModels {
public:
  DurationModel& at(const Key& __k, unsigned sms, unsigned places, size_t window = 64) {
    auto it = models_.find(__k);
    if (it == models_.end()) it = models_.emplace(__k, DurationModel(sms, places, window)).first;
    return it->second;
  }
  const DurationModel* find(const Key& __k) const {
    auto it = models_.find(__k);
    return it == models_.end() ? nullptr : &it->second;
  }
  size_t size() const { return models_.size(); }

private:
  std::map<Key, DurationModel> models_;
};

// Tacker's two-segment model of a fused kernel. x_a, x_b: the durations the two parts would take alone
// (each part's DurationModel at its task count); r = x_b / x_a, the load ratio. t = x_a * f(r) with
// f(r) = c0 + s1 r + (s2 - s1) max(0, r - brk): below the break both parts run together, past it part B
// runs on alone. The break is searched between the ratios seen (two distinct ratios at least on each
// side); a single line is used while no break fits better. Before `kMinSamples` samples (or with fewer
// than two distinct ratios) the prediction is the sequential time x_a + x_b: what running the parts one
// after the other would take, the conservative guess.
class FusedDurationModel {
public:
  static constexpr size_t kMinSamples = 4;
  explicit FusedDurationModel(size_t window = 64) : window_(window) {}

  void observe(double x_a, double x_b, double ns) {
    if (!(x_a > 0) || !(x_b >= 0) || !(ns > 0)) return;
    samples_.push_back({x_b / x_a, ns / x_a});
    if (window_ && samples_.size() > window_) samples_.pop_front();
    refit();
  }
  double predict(double x_a, double x_b) const {
    if (!(x_a > 0)) return std::max(0.0, x_b);
    if (!fitted_) return x_a + x_b;
    const double __r = x_b / x_a;
    return x_a * std::max(0.0, c0_ + s1_ * __r + (s2_ - s1_) * std::max(0.0, __r - brk_));
  }
  // Forgets the samples held and fits these at once (one refit): each {x_a, x_b, ns} as observe() takes it.
  // For a caller whose x_a and x_b come from models that have learned since (ptb/qos/manager.h).
  void assign(const std::vector<std::array<double, 3>>& xs) {
    samples_.clear();
    for (const auto& x : xs)
      if (x[0] > 0 && x[1] >= 0 && x[2] > 0) samples_.push_back({x[1] / x[0], x[2] / x[0]});
    while (window_ && samples_.size() > window_) samples_.pop_front();
    refit();
  }
  // The same in task counts, through the parts' models.
  void observe(double tasks_a, double tasks_b, const DurationModel& a, const DurationModel& b, double ns) {
    observe(a.predict(tasks_a), tasks_b > 0 ? b.predict(tasks_b) : 0, ns);
  }
  double predict(double tasks_a, double tasks_b, const DurationModel& a, const DurationModel& b) const {
    return predict(tasks_a > 0 ? a.predict(tasks_a) : 0, tasks_b > 0 ? b.predict(tasks_b) : 0);
  }

  bool fitted() const { return fitted_; }
  bool has_break() const { return fitted_ && brk_ > 0; }
  double inflection() const { return brk_; }  // the break's load ratio (0: none)
  double slope_before() const { return s1_; } // f's slopes before and after it
  double slope_after() const { return s2_; }
  double intercept() const { return c0_; }
  size_t samples() const { return samples_.size(); }
  double loo_error() const { return loo_; } // RMS leave-one-out relative error of the chosen fit
  bool trusted(double tolerance = 0.10, size_t min_samples = 8) const {
    return fitted_ && samples_.size() >= min_samples && loo_ <= tolerance;
  }

private:
  struct Sample {
    double __r, y; // load ratio, duration / x_a
  };

  // The single line, and a break between each pair of neighbouring ratios seen (two distinct ratios at
  // least on each side); the smallest leave-one-out error wins, and a break must beat the line by 20%
  // (a break chosen among many candidates beats the line by a few percent on noise alone).
  void refit() {
    fitted_ = false, brk_ = 0, loo_ = detail::kInf;
    if (samples_.size() < kMinSamples) return;
    std::vector<double> distinct;
    for (const Sample& s : samples_) distinct.push_back(s.__r);
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    if (distinct.size() < 2) return;
    struct Seg {
      bool ok = false;
      double c0 = 0, s1 = 0, s2 = 0, brk = 0, loo = detail::kInf;
    };
    auto fit_at = [&](double brk) { // brk 0: a single line
      std::vector<std::array<double, 3>> x;
      std::vector<double> y;
      for (const Sample& s : samples_) x.push_back({1, s.__r, std::max(0.0, s.__r - brk)}), y.push_back(s.y);
      const detail::Wls w = detail::wls(x, brk > 0 ? 3 : 2, y);
      Seg __g;
      __g.ok = w.ok, __g.loo = w.loo, __g.brk = brk;
      __g.c0 = w.beta[0], __g.s1 = w.beta[1], __g.s2 = w.beta[1] + (brk > 0 ? w.beta[2] : 0);
      return __g;
    };
    const Seg line = fit_at(0);
    Seg best = line;
    for (size_t __i = 2; __i + 1 < distinct.size(); ++__i)
      for (double at : {0.1, 0.3, 0.5, 0.7, 0.9}) { // the break's place within the interval
        const Seg __g = fit_at(distinct[__i - 1] + at * (distinct[__i] - distinct[__i - 1]));
        if (__g.ok && (!best.ok || __g.loo < best.loo)) best = __g;
      }
    if (best.brk > 0 && line.ok && !(best.loo < 0.8 * line.loo)) best = line;
    if (!best.ok) return;
    fitted_ = true;
    c0_ = best.c0, s1_ = best.s1, s2_ = best.s2, brk_ = best.brk, loo_ = best.loo;
  }

  size_t window_;
  std::deque<Sample> samples_;
  bool fitted_ = false;
  double c0_ = 0, s1_ = 0, s2_ = 0, brk_ = 0, loo_ = detail::kInf;
};

} // namespace ptb::qos

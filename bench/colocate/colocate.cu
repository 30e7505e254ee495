// bench/colocate/colocate.cu: the co-location benchmark of issue 15 (docs/design/qos.md; the contract is
// shared/design/colocation.md). An LS service (ls_client.*: plain CUDA, Poisson arrivals) beside a BE
// program (be_programs.*: made PTB by ptb-transform), in every configuration of the issue's table:
//
//   ls-alone    the LS client alone at the load (its p50/p99/p99.9 are the "solo" of that load)
//   be-alone    the BE program alone, original kernels (its rate is BE's "solo")
//   be-alone-ptb  the same as PTB twins on every SM (what the policies start from; not a ratio's base)
//   plain       both, BE's original kernels (ptb::LaunchMode::original), ordinary streams
//   priority    both, original kernels, LS streams at the highest priority and BE's at the lowest
//   static      BE's twins confined to SMs [k, total); k from a profile (controllers.h)
//   gspace      ptb::qos::GSpaceController in the epoch loop (when its header exists)
//   feedback    ptb::qos::FeedbackController in the epoch loop
//   gate        ptb::qos::RequestGate: BE yields every SM while an LS request is in flight
//   gate-capK   the same gate, but BE keeps K workers on every SM while a request is in flight (K = 1, 2)
//   manager     ptb::qos::ManagerDriver (Tacker) on the `pair` and `pair-memory` BEs only (be_manager.h)
//   manager-hold  the same, but BE holds (and yields) while any LS request is in flight
//   (mps        MPS active-thread percentages: run_on_gpu.sh, with --role, when the MPS daemon works)
// The controllers' LS target: --target-x (1.10) x the LS solo p99 at the same load, measured in this run.
//
// The report pools the LS latencies of every request of a configuration's repetitions (stats.h: a 1 s
// window's p99 did not repeat) and says how well the pooled p99 repeats (the split of the repetitions
// into even- and odd-numbered halves).
//
// Where things are: options (struct Options), one measurement (Bench::measure), the configurations and
// their order (Bench::run_all), the report (Report). Everything measured is appended to <out>/raw.tsv
// as it comes; the markdown table goes to stdout and <out>/colocate.md; one traced run of each twin configuration
// at 50% load gives <out>/sm-<be>-<policy>.png (SMs over time: BE's tasks; the LS kernels are not traced)
// and <out>/alloc-<be>-<policy>.tsv (the controller's allocation per epoch).
#include <cuda.h>
#include <ptb/ptb.cuh>
#include <ptb/qos/apply.cuh>
#include <ptb/qos/request_gate.cuh>
#include <ptb/trace_png.cuh>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "be_manager.h"
#include "be_programs.h"
#include "controllers.h"
#include "green_gate.h"
#include "ls_client.h"
#include "stats.h"
#include "util.h"

namespace colo {
namespace {

// ---- options ------------------------------------------------------------------------------------------
struct Options {
  std::string out = ".";           // --out (default $OUT, else .)
  unsigned reps = 3;               // --reps: every configuration this many times; LS pooled, BE medians
  double secs = 1.0;               // --secs: the measured window
  double settle = 0.25;            // --settle: before the window (BE fills the GPU, controllers converge)
  std::vector<double> loads{0.25, 0.5, 0.75};  // --loads: fractions of the LS solo capacity
  std::vector<std::string> bes{"compute", "memory", "wmma", "pair", "pair-memory"};  // --be
  // --configs; `manager` runs on the `pair` and `pair-memory` BEs only
  std::vector<std::string> configs{"plain", "priority", "static", "gspace", "feedback", "gate", "manager"};
  double budget_s = 400;           // --budget-s: no new repetition that would end after this
  uint64_t seed = 20261123;        // --seed: arrivals of (load i, rep r) use seed + 1000 i + r
  int ls_n = 256, ls_layers = 16, ls_streams = 8;  // --ls-n, --ls-layers, --ls-streams
  bool ls_graph = true;                            // --ls-no-graph: the request's launches one by one
  unsigned ls_spin_us = 1000;      // --ls-spin-us: the LS client sleeps to this long before an arrival, then spins
  std::string pair_fused;          // --pair-fused RATIO: the pairs' fused candidate (default: the fastest alone)
  // --policy-ls-plain: LS in streams of the default priority under our policies too. By default LS's
  // streams have the highest priority under them, as in `priority`: a user who confines BE has no reason
  // not to, and the block dispatcher then serves LS's kernels before BE's workers still waiting for room
  // (the second H100 run: with BE confined to 8 SMs and LS at the default priority, LS's
  // median was still 1.13-1.15x its solo median).
  bool policy_ls_high = true;
  double target_x = 1.10;          // --target-x
  unsigned epoch_us = 4000;        // --epoch-us
  unsigned window = 256;           // --window: the controllers' LS p99 over the last N requests (0: one epoch's)
  int static_k = -1;               // --static-k: the static partition's k as given (no profile)
  unsigned step = 2;               // --step: SMs per controller move
  unsigned profile_step = 8;       // --profile-step: granularity of the static profile's k
  double profile_secs = 0.3;       // --profile-secs: window of one profile probe
  bool trace = true;               // --no-trace
  bool prefer_shared = false;      // --prefer-shared: every kernel prefers the largest shared-memory carveout
  // --pool-min: fewer pooled LS solo requests at a load than this and the table warns: its p99 then rests
  // on fewer than pool_min / 100 requests beyond it (--reps 5 --secs 2 pools ~34,000 at 50% load)
  unsigned long pool_min = 20000;
  // MPS roles (run_on_gpu.sh): --role ls|be|probe|capacity, --rate (LS requests/s), --be-kind
  std::string role;
  double rate = 0;
  std::string be_kind;
  // --be-follow (role be): BE's launches under the process policy in automatic mode, as a program with no
  // policy code of its own runs them: originals, or twins that follow ptb-qosd when PTB_QOSD is set
  // (bench/colocate/processes.sh)
  bool be_follow = false;
  // --green-sms K (roles): the process runs in a green context of at least K SMs (driver API; the count is
  // rounded up to the device's granularity, 8 SMs on Hopper): a vendor-only way to give a program part of
  // the GPU, the peer processes.sh compares with (issue 42)
  unsigned green_sms = 0;
  // --green-gate K (role be, original kernels): the vendor-only gate (green_gate.h): each launch to the whole GPU
  // or to a green context of K SMs, as ptb-qosd's published policy for BE says at that moment
  unsigned green_gate = 0;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "colocate: %s\nusage: colocate [--out DIR] [--reps N] [--secs S] [--settle S] [--loads 0.25,0.5,0.75]\n"
               "  [--be compute,memory,wmma,pair,pair-memory,long,short] [--configs plain,priority,static,gspace,feedback,gate,gate-cap1,gate-cap2,manager,manager-hold,\n"
               "    manager-hold-unfused]\n"
               "    (gate, gate-capK and the manager's take a suffix -bK: BE's workers per SM between requests, e.g. gate-b2)\n"
               "  [--budget-s S]\n"
               "  [--seed N] [--ls-n N] [--ls-layers N] [--ls-streams N] [--ls-no-graph] [--ls-spin-us N] [--pair-fused RATIO] [--policy-ls-plain] [--target-x X] [--epoch-us N] [--window N] [--static-k K]\n"
               "  [--step N] [--profile-step N] [--profile-secs S] [--no-trace] [--prefer-shared] [--pool-min N]\n"
               "  MPS roles: --role probe | --role capacity | --role ls --rate R [--secs S --settle S --seed N] |\n"
               "    --role be --be-kind K [--be-follow | --green-gate K]; any role: --green-sms K (in a green context of >= K SMs)\n",
               why);
  std::exit(2);
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> v;
  std::stringstream ss(s);
  for (std::string x; std::getline(ss, x, ',');)
    if (!x.empty()) v.push_back(x);
  return v;
}

// The cap of a "gate-capK" configuration (BE's workers per SM while an LS request is in flight), 0 otherwise.
unsigned gate_cap(const std::string& c) {
  if (c == "gate-cap1") return 1;
  if (c == "gate-cap2") return 2;
  return 0;
}

// A configuration's name with its "-b<K>" suffix taken off, and K: BE's workers per SM between LS requests
// (gate, gate-capK, manager and manager-hold; no suffix: 0, no cap). Fewer workers per SM make each BE task,
// which an arriving request waits for, shorter.
struct ConfigName {
  std::string base;
  unsigned between_per_sm = 0;
};
ConfigName parse_config(const std::string& c) {
  const size_t at = c.rfind("-b");
  if (at == std::string::npos || at + 2 == c.size() || c.find_first_not_of("0123456789", at + 2) != std::string::npos)
    return {c, 0};
  const unsigned k = unsigned(std::stoul(c.substr(at + 2)));
  if (k == 0 || k > 64) return {c, 0};
  return {c.substr(0, at), k};
}

// What a configuration (the base of its name) runs; one table, read by the option check, the measurement
// and the report. ls-alone and be-alone(-ptb) are the solo runs, not configurations one can ask for.
struct Configuration {
  bool twins = false;        // BE's PTB twins (a ptb::Policy places them), not its original kernels
  bool between_cap = false;  // takes a -bK suffix (a cap on BE's workers per SM between LS requests)
  bool gate = false;         // ptb::qos::RequestGate (during_per_sm: gate_cap)
  bool manager = false;      // BeManager drives a pair's two jobs (the pair BEs only)
  bool reorder = false, fuse = false;  // the manager's: launches into an LS request's headroom; fused kernels
};
const Configuration* configuration(const std::string& base) {
  static const std::map<std::string, Configuration> table = {
      {"plain", {}},
      {"priority", {}},
      {"static", {true}},
      {"gspace", {true}},
      {"feedback", {true}},
      {"gate", {true, true, true}},
      {"gate-cap1", {true, true, true}},
      {"gate-cap2", {true, true, true}},
      {"manager", {true, true, false, true, true, true}},
      {"manager-hold", {true, true, false, true, false, true}},
      {"manager-hold-unfused", {true, true, false, true, false, false}},
      {"be-alone-ptb", {true}},
  };
  const auto it = table.find(base);
  return it == table.end() ? nullptr : &it->second;
}

// A numeric option's value, all of it a number, or usage() says which option and value were wrong: a real
// number, or a whole one (not negative).
double real_number(const std::string& option, const std::string& text) {
  size_t used = 0;
  double x = 0;
  try {
    x = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) usage((option + ": '" + text + "' is not a number").c_str());
  return x;
}

unsigned long long whole_number(const std::string& option, const std::string& text) {
  size_t used = 0;
  unsigned long long x = 0;
  try {
    if (!text.empty() && text[0] != '-') x = std::stoull(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) usage((option + ": '" + text + "' is not a whole number").c_str());
  return x;
}

Options parse(int argc, char** argv) {
  Options o;
  if (const char* e = std::getenv("OUT")) o.out = e;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value of " + a).c_str());
      return argv[++i];
    };
    auto real = [&]() { return real_number(a, val()); };
    auto whole = [&]() { return whole_number(a, val()); };
    if (a == "--out") o.out = val();
    else if (a == "--reps") o.reps = unsigned(whole());
    else if (a == "--secs") o.secs = real();
    else if (a == "--settle") o.settle = real();
    else if (a == "--loads") { o.loads.clear(); for (auto& x : split(val())) o.loads.push_back(real_number(a, x)); }
    else if (a == "--be") o.bes = split(val());
    else if (a == "--configs") o.configs = split(val());
    else if (a == "--budget-s") o.budget_s = real();
    else if (a == "--seed") o.seed = whole();
    else if (a == "--ls-n") o.ls_n = int(whole());
    else if (a == "--ls-layers") o.ls_layers = int(whole());
    else if (a == "--ls-streams") o.ls_streams = int(whole());
    else if (a == "--target-x") o.target_x = real();
    else if (a == "--epoch-us") o.epoch_us = unsigned(whole());
    else if (a == "--window") o.window = unsigned(whole());
    else if (a == "--static-k") o.static_k = int(whole());
    else if (a == "--step") o.step = unsigned(whole());
    else if (a == "--profile-step") o.profile_step = unsigned(whole());
    else if (a == "--profile-secs") o.profile_secs = real();
    else if (a == "--no-trace") o.trace = false;
    else if (a == "--prefer-shared") o.prefer_shared = true;
    else if (a == "--pool-min") o.pool_min = whole();
    else if (a == "--ls-no-graph") o.ls_graph = false;
    else if (a == "--ls-spin-us") o.ls_spin_us = unsigned(whole());
    else if (a == "--pair-fused") o.pair_fused = val();
    else if (a == "--policy-ls-plain") o.policy_ls_high = false;
    else if (a == "--role") o.role = val();
    else if (a == "--rate") o.rate = real();
    else if (a == "--be-kind") o.be_kind = val();
    else if (a == "--be-follow") o.be_follow = true;
    else if (a == "--green-sms") o.green_sms = unsigned(whole());
    else if (a == "--green-gate") o.green_gate = unsigned(whole());
    else usage(("unknown option " + a).c_str());
  }
  if (o.reps == 0 || o.secs <= 0 || o.loads.empty()) usage("reps, secs and loads must be positive");
  for (const auto& name : o.configs) {
    const ConfigName cn = parse_config(name);
    const Configuration* c = configuration(cn.base);
    if (!c || cn.base == "be-alone-ptb") usage(("unknown configuration " + name).c_str());
    if (cn.between_per_sm > 0 && !c->between_cap)
      usage(("a cap between requests (-bK) is for gate, gate-capK and the manager's: " + name).c_str());
  }
  return o;
}

// ---- statistics: stats.h (quantile, median, the pooled quantiles and their split) ----------------------
// The goal counts as met only where the pooled LS p99 repeats: the split (max / min of the two halves'
// pooled p99) of the row and of the solo row at most this.
constexpr double kMaxSplit = 1.10;

// ---- BE: a chain of launches kept two deep in one stream, on a thread of its own ------------------------
class BeFeeder {
 public:
  BeFeeder() {
    for (auto& e : ev_) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  }
  ~BeFeeder() { stop(); }
  // gate (--green-gate): each launch goes to the stream of the context the gate routes it to; at a change of
  // context the feeder first waits for the launches in the other one (BE's chain stays in order).
  void start(BeProgram& be, cudaStream_t s, unsigned* seq, GreenGate* gate = nullptr) {
    launches_ = 0;
    moves_ = 0;
    stop_ = false;
    const CUcontext ctx = current_context();  // util.h
    th_ = std::thread([this, &be, s, seq, ctx, gate] {
      // where launches go now: the caller's stream and context, or the gate's route
      GreenGate::Route at = GreenGate::small;
      cudaStream_t to_stream = gate ? gate->stream(at) : s;
      adopt_context(gate ? gate->context(at) : ctx, "the BE feeder");
      unsigned depth = 0;  // launches made into to_stream since the last change of context
      while (!stop_.load(std::memory_order_relaxed)) {
        if (gate && gate->route() != at) {  // a kernel boundary: the launches in the other context end first
          CK(cudaStreamSynchronize(to_stream));
          at = at == GreenGate::small ? GreenGate::whole : GreenGate::small;
          to_stream = gate->stream(at);
          depth = 0;
          ++moves_;
          adopt_context(gate->context(at), "the BE feeder");
        }
        const cudaEvent_t e = gate ? gate->event(at, depth) : ev_[depth % 2];
        if (depth >= 2) CK(cudaEventSynchronize(e));  // the launch before the previous one has ended
        last_seq_ = ++*seq;
        be.launch(to_stream, last_seq_);
        CK(cudaGetLastError());
        CK(cudaEventRecord(e, to_stream));
        ++depth;
        ++launches_;
      }
      CK(cudaStreamSynchronize(to_stream));
      if (gate) {
        adopt_context(ctx, "the BE feeder");
      } else if (ctx && current_context() != ctx) {
        std::fprintf(stderr, "colocate: the feeder's context changed while it launched (not its starter's any more)\n");
        std::exit(1);
      }
    });
  }
  void stop() {
    stop_ = true;
    if (th_.joinable()) th_.join();
  }
  unsigned launches() const { return launches_; }
  unsigned long long moves() const { return moves_; }
  unsigned last_seq() const { return last_seq_; }

 private:
  cudaEvent_t ev_[2]{};
  std::atomic<bool> stop_{false};
  std::thread th_;
  unsigned launches_ = 0, last_seq_ = 0;
  unsigned long long moves_ = 0;
};

// ---- one measurement ------------------------------------------------------------------------------------
struct Result {
  size_t requests = 0;                          // LS requests that arrived in the window
  double p50 = NAN, p99 = NAN, p999 = NAN;      // LS latency (host lag + device), us
  double lag99 = NAN;                           // LS host lag p99, us
  double dev99 = NAN;                           // LS device time (the request's cudaEvent pair) p99, us
  // every LS request of the window, us: latency (host lag + device), host lag, device, and the host lag's
  // parts (LsResult: wake, slot, begin) and the launch calls' host time; the report pools them over the
  // repetitions
  std::vector<double> lat, lag, dev, wake, slot, begin, launch;
  double be_rate = NAN;                         // BE tasks per second in the window
  double be_sms = NAN;                          // BE's mean SM count over the window's epochs (policies)
  unsigned changes = 0, saturated = 0;          // controller: allocation changes, saturated epochs
  std::string problems;                         // failed checks ("" when all passed)
};

struct Run {                 // what one measurement runs
  std::string config;        // ls-alone, be-alone, be-alone-ptb, plain, priority, static, gspace, feedback
  BeProgram* be = nullptr;   // none for ls-alone
  double load = 0;           // 0: no LS
  double rate = 0;           // LS requests per second
  uint64_t seed = 0;
  double target = 0;         // controllers' LS p99 target, us
  double ls_solo_p99 = 0;    // the manager's expected LS request time, us
  unsigned static_k = 0;
  double settle = 0, secs = 0;
  std::string trace_png, alloc_tsv;  // traced run: where the picture and the allocations go
};

class Bench {
 public:
  Bench(const Options& o, unsigned sms)
      : o_(o), sms_(sms), svc_(o.ls_n, o.ls_layers, o.ls_streams, o.ls_graph),
        client_(svc_, 4096), bes_(make_be_programs()), seq_(bes_.size(), 0) {
    client_.set_spin_us(o.ls_spin_us);
    int lo = 0, hi = 0;
    CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    CK(cudaStreamCreateWithFlags(&be_plain_, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithPriority(&be_low_, cudaStreamNonBlocking, lo));
    CK(cudaStreamCreateWithFlags(&be_ptb_, cudaStreamNonBlocking));
    policy_ = ptb::Policy::create(ptb::SmSet::all());
    ptb::set_stream_policy(be_ptb_, policy_);  // launches into be_ptb_ run as twins under policy_
  }

  LsClient& client() { return client_; }
  LsService& service() { return svc_; }
  BeProgram* be(const std::string& name) {
    for (auto& b : bes_)
      if (name == b->name()) return b.get();
    return nullptr;
  }
  unsigned* seq_of(BeProgram* b) {
    for (size_t i = 0; i < bes_.size(); ++i)
      if (bes_[i].get() == b) return &seq_[i];
    return nullptr;
  }
  // Warm-up: every kernel loaded and run once, the original and the twin of each BE kernel.
  void warm_up() {
    for (int i = 0; i < 3; ++i) svc_.issue(0, svc_.stream(0, false));
    for (auto& b : bes_) {
      b->prepare();
      ptb::set_launch_mode(ptb::LaunchMode::original);
      b->launch(be_plain_, ++*seq_of(b.get()));
      CK(cudaGetLastError());
      CK(cudaStreamSynchronize(be_plain_));
      ptb::set_launch_mode(ptb::LaunchMode::automatic);
      b->launch(be_ptb_, ++*seq_of(b.get()));
      CK(cudaGetLastError());
      CK(cudaStreamSynchronize(be_ptb_));
      const std::string bad = b->check(2, *seq_of(b.get()));
      if (!bad.empty()) {
        std::printf("FAIL warm-up of BE %s: %s\n", b->name(), bad.c_str());
        std::exit(1);
      }
      if (auto* pair = dynamic_cast<BePair*>(b.get())) {  // the fused candidate the manager will use
        std::string log;
        if (!pair->choose_fused(be_ptb_, seq_of(b.get()), &log, o_.pair_fused)) {
          std::fprintf(stderr, "colocate: --pair-fused %s: BE %s has no fused candidate of that ratio\n",
                       o_.pair_fused.c_str(), b->name());
          std::exit(2);
        }
        std::printf("== BE %s, fused candidates (twins and the fused kernel on every SM, medians of 3):\n%s", b->name(),
                    log.c_str());
        if (log.find("CHECK FAILED") != std::string::npos) std::exit(1);
      }
    }
    CK(cudaDeviceSynchronize());
  }

  Result measure(const Run& r);
  void set_green_gate(GreenGate* gate) { green_gate_ = gate; }
  unsigned long long green_gate_moves() const { return feeder_.moves(); }

 private:
  const Options& o_;
  unsigned sms_;
  LsService svc_;
  LsClient client_;
  std::vector<std::unique_ptr<BeProgram>> bes_;
  std::vector<unsigned> seq_;  // per BE program: the last launch's sequence number (never reused)
  cudaStream_t be_plain_ = nullptr, be_low_ = nullptr, be_ptb_ = nullptr;
  GreenGate* green_gate_ = nullptr;  // --green-gate: BE's launches routed by it (the BE role only)
  ptb::Policy policy_;
  BeFeeder feeder_;
};

bool uses_twins(const std::string& name) {
  const Configuration* c = configuration(parse_config(name).base);
  return c && c->twins;
}

// Whether configuration `config` runs with BE program `be`: the manager's configurations run the pairs only.
bool runs_on(const std::string& config, const std::string& be) {
  const Configuration* c = configuration(parse_config(config).base);
  return !(c && c->manager) || be == "pair" || be == "pair-memory";
}

// The request gate behind the LS client's hooks.
class GateHooks : public RequestHooks {
 public:
  explicit GateHooks(ptb::qos::RequestGate& g) : g_(g) {}
  void begin() override {  // called by the LS client's one issuing thread
    const auto t = Clock::now();
    g_.begin();
    begin_us_.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t).count());
  }
  cudaError_t end(cudaStream_t s) override { return g_.end(s); }
  // How long the LS client waited in begin() (the gate's Policy::set when it was the first request in
  // flight), in microseconds: "p50 / p99 / max".
  std::string begin_wait() const {
    if (begin_us_.empty()) return "none";
    char b[96];
    std::snprintf(b, sizeof b, "p50 %.0f / p99 %.0f / max %.0f us", quantile(begin_us_, 0.5), quantile(begin_us_, 0.99),
                  *std::max_element(begin_us_.begin(), begin_us_.end()));
    return b;
  }

 private:
  ptb::qos::RequestGate& g_;
  std::vector<double> begin_us_;
};

Result Bench::measure(const Run& r) {
  Result res;
  const bool with_ls = r.load > 0, with_be = r.be != nullptr, twins = uses_twins(r.config);
  const ConfigName cn = parse_config(r.config);
  // BE's form: twins in the policy's stream (automatic mode), else the original kernels; be-follow: a plain
  // stream in automatic mode (the process policy decides: PTB_QOSD links it to ptb-qosd)
  const bool follow = r.config == "be-follow";
  ptb::set_launch_mode(twins || follow ? ptb::LaunchMode::automatic : ptb::LaunchMode::original);
  const cudaStream_t bs = twins ? be_ptb_ : (r.config == "priority" ? be_low_ : be_plain_);
  const bool ls_high = r.config == "priority" || (twins && o_.policy_ls_high);
  policy_.set(r.config == "static" ? ptb::SmSet::range(r.static_k, sms_) : ptb::SmSet::all(), cn.between_per_sm);

  svc_.poison_outputs();
  if (with_be) r.be->prepare();
  std::vector<double> arrivals;
  if (with_ls) arrivals = poisson_arrivals(r.rate, r.settle + r.secs, r.seed);

  // manager: the pair's jobs launched by ptb::qos::FuseOrReorderManager instead of the feeder
  std::unique_ptr<BeManager> manager;
  const Configuration* kind = configuration(cn.base);
  if (with_be && kind && kind->manager) {
    auto* pair = dynamic_cast<BePair*>(r.be);
    if (!pair) {
      res.problems = "the manager runs on the pair BEs only; ";
      return res;
    }
    manager = std::make_unique<BeManager>(*pair, bs, policy_, seq_of(r.be), r.target, r.ls_solo_p99,
                                          kind->reorder, cn.between_per_sm, kind->fuse);
  }
  if (with_be) {
    if (manager) manager->start();
    else feeder_.start(*r.be, bs, seq_of(r.be), green_gate_);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // BE fills the GPU before LS comes
  }
  ptb::qos::LatencyLog log;
  std::unique_ptr<Loop> loop;
  if (with_be && with_ls && twins) {
    LoopParams p;
    p.total = sms_;
    p.target = r.target;
    p.step = o_.step;
    p.static_k = r.static_k;
    p.max_cap = r.be->blocks_per_sm();
    p.epoch = std::chrono::microseconds(o_.epoch_us);
    p.window = o_.window;
    ptb::qos::EpochLoop::Hooks hooks{[be = r.be] { return be->progress(); }, ptb::qos::apply_to_be(policy_),
                                     [this, &log] { client_.poll(&log); },
                                     [this] { return double(policy_.launches()); }};  // BE not PTB: said
    loop = make_loop(r.config, p, log, hooks);
    if (loop) loop->start();
  }
  // gate: BE yields every SM while an LS request is in flight (ptb/qos/request_gate.cuh); gate-capK: BE keeps K
  // workers on every SM meanwhile
  std::unique_ptr<ptb::qos::RequestGate> gate;
  std::unique_ptr<GateHooks> gate_hooks;
  if (with_be && with_ls && kind && kind->gate) {
    const unsigned k = gate_cap(cn.base);
    ptb::qos::RequestGateOptions o;
    o.during = k > 0 ? ptb::SmSet::all() : ptb::SmSet::none();
    o.during_per_sm = k;
    o.between_per_sm = cn.between_per_sm;
    gate = std::make_unique<ptb::qos::RequestGate>(policy_, o);
    gate_hooks = std::make_unique<GateHooks>(*gate);
  }
  RequestHooks* hooks = gate_hooks ? static_cast<RequestHooks*>(gate_hooks.get()) : manager.get();
  const auto t0 = Clock::now();
  if (with_ls) client_.start(arrivals, ls_high, hooks);
  // the window: BE's progress at its start and end
  std::this_thread::sleep_until(t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(r.settle)));
  const bool tracing = with_be && twins && !r.trace_png.empty();
  if (tracing) CK(ptb::trace_start(size_t(4) << 20));
  const double p0 = with_be ? r.be->progress() : 0;
  const auto w0 = Clock::now();
  if (tracing) {  // trace the first 150 ms of the window only (every task is an event)
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    ptb::trace_stop();
  }
  std::this_thread::sleep_until(w0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(r.secs)));
  const double p1 = with_be ? r.be->progress() : 0;
  const double wsecs = seconds_since(w0);
  if (with_ls)  // every LS request finished, BE still running beside them
    client_.drain(10, [&] {
      std::fprintf(stderr, "  config %s: BE policy %u SMs, per_sm %u; BE launches %llu%s\n", r.config.c_str(),
                   policy_.sms().count(), policy_.per_sm(),
                   manager ? manager->stats().launches() : (unsigned long long)feeder_.launches(),
                   gate ? (", gate in flight " + std::to_string(gate->in_flight()) + ", yields " +
                           std::to_string(gate->yields())).c_str()
                        : "");
    });
  if (gate) {
    std::printf("    gate: BE yielded %llu times, the hold limit released it %llu times; the LS client waited in "
                "begin() %s\n",
                gate->yields(), gate->releases(), gate_hooks->begin_wait().c_str());
    gate.reset();  // BE gets every SM back
  }
  std::vector<ptb::qos::EpochRecord> hist;
  if (loop) {
    loop->stop();
    hist = loop->history();
  }
  policy_.set(ptb::SmSet::all());  // BE's launches in flight finish on every SM
  unsigned long long be_launches = 0;
  if (manager) {
    manager->stop();
    be_launches = manager->stats().launches();
    std::printf("    %s\n", manager->summary().c_str());
  } else if (with_be) {
    feeder_.stop();
    be_launches = feeder_.launches();
  }
  CK(cudaDeviceSynchronize());

  // checks
  if (with_be) {
    const std::string bad = r.be->check(unsigned(be_launches), feeder_.last_seq());
    if (!bad.empty()) res.problems += "BE " + std::string(r.be->name()) + ": " + bad + "; ";
    res.be_rate = (p1 - p0) / wsecs;
  }
  if (with_ls) {
    const std::string bad = svc_.check_outputs(client_.slots_used());
    if (!bad.empty()) res.problems += bad + "; ";
    for (const LsResult& x : client_.results())
      if (x.arrival_s >= r.settle && x.arrival_s < r.settle + r.secs) {
        res.lat.push_back(x.latency_us());
        res.lag.push_back(x.lag_us);
        res.dev.push_back(x.device_us);
        res.wake.push_back(x.wake_us);
        res.slot.push_back(x.slot_us);
        res.begin.push_back(x.begin_us);
        res.launch.push_back(x.launch_us);
      }
    res.requests = res.lat.size();
    if (res.lat.empty()) res.problems += "no LS request in the window; ";
    res.p50 = quantile(res.lat, 0.50);
    res.p99 = quantile(res.lat, 0.99);
    res.p999 = quantile(res.lat, 0.999);
    res.lag99 = quantile(res.lag, 0.99);
    res.dev99 = quantile(res.dev, 0.99);
  }
  // the allocation: BE's mean SM count over the window's epochs
  if (twins && with_be) {
    if (!hist.empty()) {
      double sum = 0;
      unsigned n = 0;
      ptb::qos::Allocation prev = hist.front().decided;
      for (const auto& e : hist) {
        if (e.decided != prev) ++res.changes;
        prev = e.decided;
        if (e.saturated) ++res.saturated;
        if (e.t >= r.settle) sum += e.decided.be, ++n;
      }
      res.be_sms = n ? sum / n : NAN;
    } else {
      res.be_sms = r.config == "static" ? double(sms_ - r.static_k) : double(sms_);
    }
  }
  if (!r.alloc_tsv.empty() && !hist.empty()) {
    if (FILE* f = std::fopen(r.alloc_tsv.c_str(), "w")) {
      std::fprintf(f, "t_s\tls_sms\tbe_sms\tidle_sms\tshared_sms\tshared_cap\tls_p99_us\tls_requests\tbe_rate\tsaturated\n");
      for (const auto& e : hist) {
        const unsigned shared = e.decided.shared, cap = e.decided.shared_cap;  // G-Space's capped SMs
        std::fprintf(f, "%.4f\t%u\t%u\t%u\t%u\t%u\t%.1f\t%zu\t%.0f\t%d\n", e.t, e.decided.ls, e.decided.be,
                     e.decided.idle, shared, cap, e.sample.ls_latency, e.ls_requests, e.sample.be_rate, int(e.saturated));
      }
      std::fclose(f);
    }
  }
  if (tracing) {
    const std::vector<ptb::TraceEvent> ev = ptb::trace_collect();
    const bool ok = !ev.empty() && ptb::trace_write_png(r.trace_png, ev, 1600, 4);
    std::printf("  trace: %zu BE tasks traced -> %s%s\n", ev.size(), r.trace_png.c_str(), ok ? "" : " (NOT WRITTEN)");
    // How long BE's tasks took (the task a request waits for when it arrives): tasks per power-of-two
    // bucket of microseconds, and the quantiles of those of 8 us and more (a pair's Tensor-Core tiles).
    unsigned buckets[16] = {};
    std::vector<double> long_us;
    for (const ptb::TraceEvent& e : ev) {
      const double us = e.end_ns > e.start_ns ? 1e-3 * double(e.end_ns - e.start_ns) : 0;
      unsigned b = 0;
      while (b < 15 && us >= double(2u << b)) ++b;
      ++buckets[b];
      if (us >= 8) long_us.push_back(us);
    }
    std::printf("  trace: task durations, us: <2 %u", buckets[0]);
    for (unsigned b = 1; b < 16; ++b)
      if (buckets[b]) std::printf(", %u-%u %u", 1u << b, 2u << b, buckets[b]);
    std::printf("; tasks of 8 us and more: %zu, p50 %.1f, p90 %.1f, p99 %.1f us\n", long_us.size(),
                quantile(long_us, 0.5), quantile(long_us, 0.9), quantile(long_us, 0.99));
  }
  return res;
}

// ---- the report -----------------------------------------------------------------------------------------
struct Row {
  std::string be;  // "" for ls-alone
  double load;     // 0 for be-alone
  std::string config;
  unsigned rep;
  Result r;
};

class Report {
 public:
  explicit Report(const std::string& out) : out_(out) {
    raw_ = std::fopen((out + "/raw.tsv").c_str(), "w");
    if (!raw_) {
      std::fprintf(stderr, "colocate: cannot write %s/raw.tsv\n", out.c_str());
      std::exit(2);
    }
    // columns added later go at the end (scripts read the columns by position)
    std::fprintf(raw_, "be\tload\tconfig\trep\trequests\tp50_us\tp99_us\tp999_us\tlag99_us\tbe_tasks_per_s\tbe_sms\t"
                       "changes\tsaturated\tproblems\tdev99_us\twake99_us\tslot99_us\tbegin99_us\tlaunch99_us\n");
    std::fflush(raw_);
  }
  ~Report() {
    if (raw_) std::fclose(raw_);
  }
  void add(const Row& row) {
    rows_.push_back(row);
    const Result& r = row.r;
    // the host lag's parts and the launch calls, p99 of this repetition (the raw line and the log line)
    const double wake99 = quantile(r.wake, 0.99), slot99 = quantile(r.slot, 0.99), begin99 = quantile(r.begin, 0.99),
                 launch99 = quantile(r.launch, 0.99);
    std::fprintf(raw_, "%s\t%.2f\t%s\t%u\t%zu\t%.1f\t%.1f\t%.1f\t%.1f\t%.0f\t%.1f\t%u\t%u\t%s\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\n",
                 row.be.empty() ? "-" : row.be.c_str(), row.load, row.config.c_str(), row.rep, r.requests, r.p50, r.p99,
                 r.p999, r.lag99, r.be_rate, r.be_sms, r.changes, r.saturated,
                 r.problems.empty() ? "ok" : r.problems.c_str(), r.dev99, wake99, slot99, begin99, launch99);
    std::fflush(raw_);
    std::printf("  %-8s load %.2f %-12s rep %u: ", row.be.empty() ? "-" : row.be.c_str(), row.load,
                row.config.c_str(), row.rep);
    if (row.load > 0)
      std::printf("LS %zu req p50 %.1f p99 %.1f p99.9 %.1f us (lag p99 %.1f [wake %.1f, slot %.1f, begin %.1f], "
                  "device p99 %.1f, launch calls p99 %.1f) ",
                  r.requests, r.p50, r.p99, r.p999, r.lag99, wake99, slot99, begin99, r.dev99, launch99);
    if (!std::isnan(r.be_rate)) std::printf("BE %.4g tasks/s ", r.be_rate);
    if (!std::isnan(r.be_sms)) std::printf("BE SMs %.1f (%u changes, %u saturated) ", r.be_sms, r.changes, r.saturated);
    std::printf("%s\n", r.problems.empty() ? "ok" : ("CHECK FAILED: " + r.problems).c_str());
  }
  // median over repetitions of one metric of (be, load, config)
  double med(const std::string& be, double load, const std::string& config, double Result::*m) const {
    std::vector<double> v;
    for (const auto& x : rows_)
      if (x.be == be && std::fabs(x.load - load) < 1e-9 && x.config == config && !std::isnan(x.r.*m)) v.push_back(x.r.*m);
    return median(v);
  }
  // the p-th quantile of one per-request metric (Result::lat, lag, dev) of (be, load, config), every request
  // of every repetition together
  double pooled(const std::string& be, double load, const std::string& config, std::vector<double> Result::*m,
                double p) const {
    return pooled_quantile(samples(be, load, config, m), p);
  }
  // how well the pooled LS p99 (host lag + device) of (be, load, config) repeats: split_spread, NAN with
  // one repetition
  double split(const std::string& be, double load, const std::string& config) const {
    return split_spread(samples(be, load, config, &Result::lat), 0.99);
  }
  // LS requests of (be, load, config), every repetition together
  size_t pooled_requests(const std::string& be, double load, const std::string& config) const {
    size_t n = 0;
    for (const auto* v : samples(be, load, config, &Result::lat)) n += v->size();
    return n;
  }
  unsigned count(const std::string& be, double load, const std::string& config, bool failed_only = false) const {
    unsigned n = 0;
    for (const auto& x : rows_)
      if (x.be == be && std::fabs(x.load - load) < 1e-9 && x.config == config && (!failed_only || !x.r.problems.empty()))
        ++n;
    return n;
  }
  bool any_failed() const {
    for (const auto& x : rows_)
      if (!x.r.problems.empty()) return true;
    return false;
  }

 private:
  // one per-request metric of (be, load, config), a vector per repetition in repetition order (rows are
  // added in that order); the pointers are good until the next add()
  RepSamples samples(const std::string& be, double load, const std::string& config,
                     std::vector<double> Result::*m) const {
    RepSamples v;
    for (const auto& x : rows_)
      if (x.be == be && std::fabs(x.load - load) < 1e-9 && x.config == config) v.push_back(&(x.r.*m));
    return v;
  }
  std::string out_;
  FILE* raw_ = nullptr;
  std::vector<Row> rows_;
};

std::string fmt(const char* f, double v) {
  if (std::isnan(v)) return "n/a";
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}
// a split (Report::split), "-" where there is none (one repetition)
std::string fmt_split(double s) { return std::isnan(s) ? "-" : fmt("%.2f", s); }

// ---- the whole benchmark --------------------------------------------------------------------------------
int run_all(const Options& o) {
  const auto T0 = Clock::now();
  int dev = 0;
  CK(cudaGetDevice(&dev));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, dev));
  const unsigned sms = unsigned(prop.multiProcessorCount);
  std::printf("== colocate: device %s, %u SMs; CUDA_MODULE_LOADING=%s, CUDA_DEVICE_MAX_CONNECTIONS=%s\n", prop.name,
              sms, std::getenv("CUDA_MODULE_LOADING") ? std::getenv("CUDA_MODULE_LOADING") : "(unset)",
              std::getenv("CUDA_DEVICE_MAX_CONNECTIONS") ? std::getenv("CUDA_DEVICE_MAX_CONNECTIONS") : "(unset)");
  std::printf("== LS: %d x (GEMM %dx%dx%d + bias/ReLU) + residual add = %d kernels a request (%s), %d streams; seed %llu\n",
              o.ls_layers, o.ls_n, o.ls_n, o.ls_n, 2 * o.ls_layers + 1, o.ls_graph ? "one CUDA graph" : "launched one by one",
              o.ls_streams, (unsigned long long)o.seed);
  std::printf("== static k from %s; the controllers' epoch %u us, step %u SMs; target %.2fx LS solo p99 over %s\n",
              o.static_k >= 0 ? "--static-k" : "ptb::qos::static_partition_k", o.epoch_us, o.step, o.target_x,
              o.window ? ("the last " + std::to_string(o.window) + " requests").c_str() : "one epoch's requests");
  std::fflush(stdout);

  Bench bench(o, sms);
  for (const auto& n : o.bes)
    if (!bench.be(n)) usage(("unknown BE program " + n).c_str());
  bench.warm_up();
  for (const auto& n : o.bes)
    std::printf("== BE %s: %s; %u blocks per SM\n", n.c_str(), bench.be(n)->describe(), bench.be(n)->blocks_per_sm());

  // LS solo capacity: back-to-back requests in one stream (after 20 to warm up)
  bench.client().back_to_back_us(20);
  const double b2b_us = bench.client().back_to_back_us(200);
  const double capacity = 1e6 / b2b_us;
  std::printf("== LS solo, back to back: %.1f us a request -> capacity %.0f requests/s\n", b2b_us, capacity);
  {
    std::vector<bool> used(size_t(o.ls_streams), false);
    used[0] = true;
    const std::string bad = bench.service().check_outputs(used);
    if (!bad.empty()) {
      std::printf("FAIL LS result: %s\n", bad.c_str());
      return 1;
    }
  }
  Report rep(o.out);
  if (FILE* f = std::fopen((o.out + "/solo.tsv").c_str(), "w")) {  // for run_on_gpu.sh's MPS rows
    std::fprintf(f, "capacity\t%.3f\n", capacity);
    for (double L : o.loads) std::fprintf(f, "rate\t%.2f\t%.3f\n", L, L * capacity);
    std::fclose(f);
  }

  auto make_run = [&](const std::string& config, const std::string& be, double load, unsigned r) {
    Run x;
    x.config = config;
    x.be = be.empty() ? nullptr : bench.be(be);
    x.load = load;
    x.rate = load * capacity;
    size_t li = 0;
    for (size_t i = 0; i < o.loads.size(); ++i)
      if (std::fabs(o.loads[i] - load) < 1e-9) li = i;
    x.seed = o.seed + 1000 * li + r;  // the same arrivals for every configuration of (load, rep)
    x.settle = o.settle;
    x.secs = o.secs;
    return x;
  };
  auto solo_p99 = [&](double load) { return rep.med("", load, "ls-alone", &Result::p99); };
  std::map<std::pair<std::string, double>, unsigned> static_k;  // (be, load) -> k

  // the static partition's profile: LS p99 with BE's twins on SMs [k, total), a few k (short windows)
  auto profile = [&](const std::string& be, double load) {
    if (o.static_k >= 0) {
      static_k[{be, load}] = unsigned(std::min(o.static_k, int(sms)));
      std::printf("  static %s load %.2f: k = %d as given (--static-k)\n", be.c_str(), load, o.static_k);
      return;
    }
    const double target = o.target_x * solo_p99(load);
    std::printf("  static profile %s load %.2f (target %.1f us):", be.c_str(), load, target);
    auto ls_p99_at = [&](unsigned k) {
      Run x = make_run("static", be, load, 0);
      x.static_k = k;
      x.settle = 0.15;
      x.secs = o.profile_secs;
      const Result res = bench.measure(x);
      std::printf(" k=%u:%.0fus%s", k, res.p99, res.problems.empty() ? "" : "(CHECK FAILED)");
      std::fflush(stdout);
      return res.problems.empty() ? res.p99 : INFINITY;
    };
    const unsigned k = static_partition_k(sms, target, ls_p99_at, o.profile_step);
    std::printf(" -> k = %u\n", k);
    static_k[{be, load}] = k;
  };

  auto coloc = [&](const std::string& config, const std::string& be, double load, unsigned r, bool traced) {
    Run x = make_run(config, be, load, r);
    x.target = o.target_x * solo_p99(load);
    x.ls_solo_p99 = solo_p99(load);
    x.static_k = static_k.count({be, load}) ? static_k[{be, load}] : 0;
    if (traced) {
      x.trace_png = o.out + "/sm-" + be + "-" + config + ".png";
      x.alloc_tsv = o.out + "/alloc-" + be + "-" + config + ".tsv";
    }
    return bench.measure(x);
  };
  double rep_secs = 0;
  unsigned reps_done = 0;
  for (unsigned r = 0; r < o.reps; ++r) {
    const double el = seconds_since(T0);
    if (r > 0 && el + rep_secs > o.budget_s) {
      std::printf("== NOTE: stopped after %u repetitions (%.0f s elapsed, one takes %.0f s, budget %.0f s)\n", r, el,
                  rep_secs, o.budget_s);
      break;
    }
    const auto R0 = Clock::now();
    std::printf("== repetition %u\n", r + 1);
    for (double L : o.loads) {
      Run x = make_run("ls-alone", "", L, r);
      rep.add({"", L, "ls-alone", r, bench.measure(x)});
    }
    for (const auto& be : o.bes)
      for (const char* c : {"be-alone", "be-alone-ptb"}) {
        Run x = make_run(c, be, 0, r);
        rep.add({be, 0, c, r, bench.measure(x)});
      }
    if (r == 0 && std::find(o.configs.begin(), o.configs.end(), "static") != o.configs.end())
      for (const auto& be : o.bes)
        for (double L : o.loads) profile(be, L);
    for (const auto& be : o.bes)
      for (double L : o.loads)
        for (const auto& c : o.configs)
          if (runs_on(c, be)) rep.add({be, L, c, r, coloc(c, be, L, r, false)});
    rep_secs = seconds_since(R0);
    ++reps_done;
    if (r == 0 && o.trace) {  // one traced run of each twin configuration at 50% load (not in the table: tracing slows BE)
      const double L = std::find(o.loads.begin(), o.loads.end(), 0.5) != o.loads.end() ? 0.5 : o.loads[0];
      std::printf("== traced runs (load %.2f; not in the table)\n", L);
      for (const auto& be : o.bes)
        for (const auto& c : o.configs)
          if (uses_twins(c) && runs_on(c, be)) {
            const Result res = coloc(c, be, L, 0, true);
            std::printf("  traced %s %s: LS p99 %.1f us, BE SMs %.1f%s\n", be.c_str(), c.c_str(), res.p99, res.be_sms,
                        res.problems.empty() ? "" : (" CHECK FAILED: " + res.problems).c_str());
          }
    }
  }

  // ---- the table. LS: quantiles pooled over every request of every repetition (a 1 s window's p99 did
  // not repeat: stats.h), with their split; BE: medians of the repetitions.
  using PerRequest = std::vector<double> Result::*;  // Result::lat, lag or dev
  auto pooled = [&](const std::string& be, double L, const std::string& c, PerRequest m, double p) {
    return rep.pooled(be, L, c, m, p);
  };
  auto solo = [&](double L, PerRequest m, double p) { return pooled("", L, "ls-alone", m, p); };
  std::ostringstream md;
  md << "# Co-location benchmark (bench/colocate)\n\n";
  md << "Device: " << prop.name << " (" << sms << " SMs). LS: " << o.ls_layers << " x (GEMM " << o.ls_n << "^3 + bias/ReLU)"
     << " + residual add (" << (o.ls_graph ? "one CUDA graph a request" : "launched one by one") << "; LS streams at the "
     << (o.policy_ls_high ? "highest priority under priority, static, gspace and feedback" : "highest priority under priority only")
     << "), Poisson arrivals (seed " << o.seed << "), capacity " << fmt("%.0f", capacity)
     << " requests/s (back to back: " << fmt("%.1f", b2b_us) << " us a request). " << reps_done << " repetition(s), "
     << o.secs << " s windows. LS latency = host lag + device (cudaEvent pair); LS quantiles pooled over every request "
     << "of every repetition; split = max/min of the pooled LS p99 of the even- and the odd-numbered repetitions "
     << "(- with one); BE: medians of the repetitions. Controllers' target: " << o.target_x
     << " x LS solo p99 of the load (median of the repetitions so far).\n\n";
  md << "LS solo:\n\n| load | requests/s | requests (pooled) | p50 us | p99 us | p99.9 us | device p99 us "
        "| host lag p99 us | split | p99 us, median of reps |\n"
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (double L : o.loads)
    md << "| " << fmt("%.0f%%", 100 * L) << " | " << fmt("%.0f", L * capacity) << " | "
       << rep.pooled_requests("", L, "ls-alone") << " | " << fmt("%.1f", solo(L, &Result::lat, 0.50)) << " | "
       << fmt("%.1f", solo(L, &Result::lat, 0.99)) << " | " << fmt("%.1f", solo(L, &Result::lat, 0.999)) << " | "
       << fmt("%.1f", solo(L, &Result::dev, 0.99)) << " | " << fmt("%.1f", solo(L, &Result::lag, 0.99)) << " | "
       << fmt_split(rep.split("", L, "ls-alone")) << " | " << fmt("%.1f", solo_p99(L)) << " |\n";
  md << "\nBE solo (original kernels, all SMs; twins on all SMs for comparison):\n\n"
        "| BE | tasks/s | rate | twins: x original |\n| --- | --- | --- | --- |\n";
  for (const auto& be : o.bes) {
    BeProgram* b = bench.be(be);
    const double t = rep.med(be, 0, "be-alone", &Result::be_rate), tp = rep.med(be, 0, "be-alone-ptb", &Result::be_rate);
    const bool flop = std::string(b->work_unit()) == "flop";
    md << "| " << be << " | " << fmt("%.4g", t) << " | " << fmt("%.1f", t * b->work_per_task() * 1e-12)
       << (flop ? " TFLOP/s" : " TB/s") << " | " << fmt("%.3f", tp / t) << " |\n";
  }
  md << "\n| BE | load | configuration | LS p50 x solo | LS p99 x solo | LS p99.9 x solo | LS p99 us | device p99 us "
        "| host lag p99 us | split | LS p99 us, median of reps | BE x solo | BE SMs (mean) | runs | checks |\n"
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const auto& be : o.bes) {
    const double be_solo = rep.med(be, 0, "be-alone", &Result::be_rate);
    for (double L : o.loads)
      for (const auto& c : o.configs) {
        if (!runs_on(c, be)) continue;
        const unsigned n = rep.count(be, L, c), bad = rep.count(be, L, c, true);
        md << "| " << be << " | " << fmt("%.0f%%", 100 * L) << " | " << c
           << (c == "static" && static_k.count({be, L}) ? " (k=" + std::to_string(static_k[{be, L}]) + ")" : "") << " | "
           << fmt("%.2f", pooled(be, L, c, &Result::lat, 0.50) / solo(L, &Result::lat, 0.50)) << " | "
           << fmt("%.2f", pooled(be, L, c, &Result::lat, 0.99) / solo(L, &Result::lat, 0.99)) << " | "
           << fmt("%.2f", pooled(be, L, c, &Result::lat, 0.999) / solo(L, &Result::lat, 0.999)) << " | "
           << fmt("%.1f", pooled(be, L, c, &Result::lat, 0.99)) << " | "
           << fmt("%.1f", pooled(be, L, c, &Result::dev, 0.99)) << " | "
           << fmt("%.1f", pooled(be, L, c, &Result::lag, 0.99)) << " | " << fmt_split(rep.split(be, L, c)) << " | "
           << fmt("%.1f", rep.med(be, L, c, &Result::p99)) << " | "
           << fmt("%.2f", rep.med(be, L, c, &Result::be_rate) / be_solo) << " | "
           << fmt("%.1f", rep.med(be, L, c, &Result::be_sms)) << " | " << n << " | "
           << (bad ? std::to_string(bad) + " FAILED" : std::string("ok")) << " |\n";
      }
  }
  // too few pooled solo requests: the p99 rests on few requests beyond it, and neither it nor the ratios to
  // it repeat (docs/design/qos.md, runs 8-14)
  for (double L : o.loads) {
    const size_t n = rep.pooled_requests("", L, "ls-alone");
    if (n < o.pool_min)
      md << "\nWARNING: at " << fmt("%.0f%%", 100 * L) << " load the LS solo p99 rests on " << n / 100
         << " requests beyond it (" << n << " pooled), fewer than " << o.pool_min / 100 << " (--pool-min "
         << o.pool_min << "): raise --secs or --reps.\n";
  }
  // where the host lag comes from: the pooled p99 of each of its parts (LsResult), and of the launch calls
  md << "\nLS host lag by part (pooled p99 us; the LS client sleeps to " << o.ls_spin_us
     << " us before an arrival, then spins): wake = how late the issuing thread saw the arrival, slot = its search "
        "for an idle stream, begin = the policy's begin() hook; launch calls = the host time of the request's "
        "event records and graph launch (inside the device time when its stream was idle).\n\n"
        "| BE | load | configuration | host lag | wake | slot | begin | launch calls |\n"
        "| --- | --- | --- | --- | --- | --- | --- | --- |\n";
  auto lag_parts = [&](const std::string& be, double L, const std::string& c) {
    md << "| " << (be.empty() ? "-" : be) << " | " << fmt("%.0f%%", 100 * L) << " | " << c;
    for (PerRequest m : {&Result::lag, &Result::wake, &Result::slot, &Result::begin, &Result::launch})
      md << " | " << fmt("%.1f", pooled(be, L, c, m, 0.99));
    md << " |\n";
  };
  for (double L : o.loads) lag_parts("", L, "ls-alone");
  for (const auto& be : o.bes)
    for (double L : o.loads)
      for (const auto& c : o.configs)
        if (runs_on(c, be)) lag_parts(be, L, c);
  // the issue's goal at 50% load, from the pooled p99s, counted only where the tail repeats
  md << "\nGoal (issue 15): at 50% load, LS p99 <= " << o.target_x << "x solo while BE >= 60% of solo (pooled LS p99s; "
     << "MET only when the split of the row and of the solo row are both <= " << fmt("%.2f", kMaxSplit) << ").\n\n";
  const bool have50 = std::find(o.loads.begin(), o.loads.end(), 0.5) != o.loads.end();
  const double split_solo = have50 ? rep.split("", 0.5, "ls-alone") : NAN;
  for (const auto& be : o.bes)
    for (const auto& c : o.configs) {
      if (!runs_on(c, be)) continue;
      if (!have50) {
        md << "- " << be << " / " << c << ": 50% load not measured\n";
        continue;
      }
      const double x = pooled(be, 0.5, c, &Result::lat, 0.99) / solo(0.5, &Result::lat, 0.99);
      const double b = rep.med(be, 0.5, c, &Result::be_rate) / rep.med(be, 0, "be-alone", &Result::be_rate);
      const double split_row = rep.split(be, 0.5, c);
      const bool ok_ls = x <= o.target_x, ok_be = b >= 0.60, failed = rep.count(be, 0.5, c, true) > 0;
      // NAN (one repetition) is not <= anything: unknown is not repeated
      const bool repeated = split_row <= kMaxSplit && split_solo <= kMaxSplit;
      // the verdicts other than MET avoid the word: a grep for MET finds the rows that met the goal
      const char* verdict =
          !(ok_ls && ok_be) ? "MISSED"
          : repeated        ? "MET"
          : std::isnan(split_row) || std::isnan(split_solo)
              ? "TAIL NOT TESTED (one repetition; the pooled numbers meet it, not counted as met)"
              : "TAIL DID NOT REPEAT (a split over the limit; the pooled numbers meet it, not counted as met)";
      char line[512];
      std::snprintf(line, sizeof line,
                    "- %s / %s: LS p99 %.2fx solo (%s by %.2f), BE %.0f%% of solo (%s by %.0f points), "
                    "split %s (solo %s): %s%s\n",
                    be.c_str(), c.c_str(), x, ok_ls ? "met" : "missed", std::fabs(x - o.target_x), 100 * b,
                    ok_be ? "met" : "missed", std::fabs(100 * b - 60), fmt_split(split_row).c_str(),
                    fmt_split(split_solo).c_str(), verdict, failed ? " (a check FAILED in some run)" : "");
      md << line;
    }
  std::printf("\n%s", md.str().c_str());
  if (FILE* f = std::fopen((o.out + "/colocate.md").c_str(), "w")) {
    std::fputs(md.str().c_str(), f);
    std::fclose(f);
  }
  std::printf("\n== done in %.0f s; results in %s (colocate.md, raw.tsv, solo.tsv%s)\n", seconds_since(T0), o.out.c_str(),
              o.trace ? ", sm-*.png, alloc-*.tsv" : "");
  if (rep.any_failed()) {
    std::printf("== SOME CHECKS FAILED (column 'checks'; raw.tsv has the messages)\n");
    return 1;
  }
  return 0;
}

// ---- a green context (--green-sms): the process's work confined to part of the GPU by the driver -----------
__global__ void green_seen(unsigned* seen) {
  const unsigned sm = ptb::detail::smid();
  if (threadIdx.x == 0 && sm < 1024) atomicOr(&seen[sm / 32], 1u << (sm % 32));
}

// Makes a green context of at least `want` SMs of device 0 current to this thread, before any runtime call,
// so that the runtime's calls and launches run in it; prints what it got and how many SMs a wide grid
// reached there. False (after a message) when the driver refuses.
bool enter_green_sms(unsigned want) {
  unsigned got = 0, total = 0;
  if (!colo::enter_green_context("colocate", want, &got, &total)) return false;  // green_context.h
  unsigned* seen = nullptr;
  unsigned host[32] = {};
  CK(cudaMalloc(&seen, sizeof host));
  CK(cudaMemset(seen, 0, sizeof host));
  green_seen<<<4 * total, 64>>>(seen);
  CK(cudaMemcpy(host, seen, sizeof host, cudaMemcpyDeviceToHost));
  CK(cudaFree(seen));
  unsigned reached = 0;
  for (unsigned w : host) reached += unsigned(__builtin_popcount(w));
  std::printf("GREEN sms %u (asked %u of %u), a grid of %u blocks reached %u SMs\n", got, want,
              total, 4 * total, reached);
  if (reached > got) {
    std::fprintf(stderr, "colocate: --green-sms: work reached %u SMs, more than the green context's %u\n", reached,
                 got);
    return false;
  }
  return true;
}

// ---- MPS roles: one side of a measurement in a process of its own (run_on_gpu.sh starts both) ----------
int run_role(const Options& o) {
  if (o.role == "probe") {
    CK(cudaFree(nullptr));
    std::printf("ROLE probe ok\n");
    return 0;
  }
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  Bench bench(o, unsigned(sms));
  bench.warm_up();
  // processes.sh starts the LS and BE processes together: each says it is ready (COLO_READY names a file to
  // create) and waits for the go (the file COLO_GO) before it measures, so that their windows coincide.
  if (const char* ready = std::getenv("COLO_READY")) {
    if (FILE* f = std::fopen(ready, "w")) std::fclose(f);
  }
  if (const char* go = std::getenv("COLO_GO")) {
    const auto t0 = std::chrono::steady_clock::now();
    while (access(go, F_OK) != 0) {
      if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(120)) {
        std::fprintf(stderr, "colocate: no go (%s) within 120 s\n", go);
        return 1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  Run x;
  x.settle = o.settle;
  x.secs = o.secs;
  if (o.role == "capacity") { // LS alone, back to back: what processes.sh sets its rates from
    bench.client().back_to_back_us(20);
    const double b2b_us = bench.client().back_to_back_us(200);
    std::printf("ROLE capacity %.3f us %.1f\n", 1e6 / b2b_us, b2b_us);
    return 0;
  }
  if (o.role == "ls") {
    if (o.rate <= 0) usage("--role ls needs --rate");
    x.config = "mps";
    x.load = 1;  // any value > 0: LS present
    x.rate = o.rate;
    x.seed = o.seed;
    const Result r = bench.measure(x);
    std::printf("ROLE ls requests %zu p50 %.1f p99 %.1f p999 %.1f lag99 %.1f split %.3f check %s\n", r.requests, r.p50,
                r.p99, r.p999, r.lag99, halves_spread(r.lat, 0.99), r.problems.empty() ? "ok" : "FAILED");
    if (!r.problems.empty()) std::printf("  %s\n", r.problems.c_str());
    return r.problems.empty() ? 0 : 1;
  }
  if (o.role == "be") {
    x.config = o.be_follow ? "be-follow" : "be-alone";
    x.be = bench.be(o.be_kind);
    if (!x.be) usage("--role be needs --be-kind compute|memory|wmma|long|short");
    GreenGate gate;
    if (o.green_gate) {
      if (o.be_follow || o.green_sms) usage("--green-gate runs BE's original kernels: not with --be-follow or --green-sms");
      if (!gate.open(o.green_gate)) return 1;
      bench.set_green_gate(&gate);
    }
    const Result r = bench.measure(x);
    if (o.green_gate) std::printf("GREEN gate moves %llu\n", bench.green_gate_moves());
    std::printf("ROLE be %s tasks_per_s %.0f check %s twin_launches %llu\n", o.be_kind.c_str(), r.be_rate,
                r.problems.empty() ? "ok" : "FAILED", ptb::process_policy().launches());
    if (!r.problems.empty()) std::printf("  %s\n", r.problems.c_str());
    return r.problems.empty() ? 0 : 1;
  }
  usage(("unknown role " + o.role).c_str());
}

}  // namespace
}  // namespace colo

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  // Module loading: eager, decided here (README.md, "Process start"): a kernel loaded lazily on its first
  // launch waits for every kernel running then (docs/design/facts.md, fact 19), so an LS kernel first launched
  // beside BE would wait for BE. CUDA reads the variable when it initializes: before any CUDA call.
  // A value given by the caller wins (CUDA_MODULE_LOADING=LAZY to see the difference).
  setenv("CUDA_MODULE_LOADING", "EAGER", 0);
  // Hardware work queues: one per stream (CUDA_DEVICE_MAX_CONNECTIONS, default 8, at most 32). With 8, the
  // LS pool's 8 streams, BE's stream and the runtime's own share queues, and an LS request queued behind
  // a BE launch that waits in the same queue waits for it: seen on the H100 as an LS request
  // that never started while BE was paused by the request gate (docs/design/qos.md). A value given by the caller wins.
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
  const colo::Options o = colo::parse(argc, argv);
  if (o.green_sms && (o.role.empty() || !colo::enter_green_sms(o.green_sms))) {
    std::fprintf(stderr, "colocate: --green-sms needs --role and a green context of that size\n");
    return 1;
  }
  // One shared-memory carveout for every kernel (LS's GEMMs use shared memory, BE's compute and memory
  // programs none): blocks of kernels that want different carveouts cannot share an SM until it drains.
  if (o.prefer_shared && cudaDeviceSetCacheConfig(cudaFuncCachePreferShared) != cudaSuccess) {
    std::fprintf(stderr, "colocate: cudaDeviceSetCacheConfig failed\n");
    return 1;
  }
  return o.role.empty() ? colo::run_all(o) : colo::run_role(o);
}

#include "Daemon.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "ptb/qos/feedback.h"
#include "ptb/qos/gspace.h"
#include "ptb/qos/static_partition.h"

namespace ptb::qosd {

namespace shm = qos::shm;

LsLook LsWatch::look(const shm::Segment &seg, std::uint64_t now) {
  LsLook out;
  bool usesApi = false;
  for (unsigned client = 0; client < shm::kLsClients; ++client) {
    const shm::LsClient &entry = seg.ls[client];
    const std::uint64_t pid = entry.pid.load(std::memory_order_acquire);
    if (pid == 0) {
      seenPid[client] = 0;
      continue;
    }
    ++out.clients;
    const std::uint64_t begun = entry.requests_begun.load(std::memory_order_acquire);
    const std::uint64_t done = entry.requests_done.load(std::memory_order_acquire);
    if (pid != seenPid[client]) { // a new process in this entry
      seenPid[client] = pid;
      seenDone[client] = done;
      for (Stream &st : seenStreams[client]) st = Stream{};
    }
    for (unsigned index = 0; index < shm::kLsStreams; ++index) {
      const shm::LsStream &words = entry.streams[index];
      const std::uint64_t submitted = words.submitted.load(std::memory_order_acquire);
      const std::uint64_t completed = words.completed.load(std::memory_order_acquire);
      Stream &st = seenStreams[client][index];
      if (submitted == completed) {
        st.busy = false;
        continue;
      }
      out.busy = true;
      if (!st.busy || completed != st.completed) st.since = now; // busy from now, or progress since the last look
      st.busy = true;
      st.completed = completed;
      out.stuckNs = std::max(out.stuckNs, now - st.since);
    }
    if (begun > 0) usesApi = true;
    if (begun != done) out.busy = true;
    // Requests that finished since the last look (the ring holds the last kRequestRing begins).
    const std::uint64_t first = std::max(seenDone[client], done > shm::kRequestRing ? done - shm::kRequestRing : 0);
    for (std::uint64_t n = first + 1; n <= done && n <= begun; ++n) {
      const std::uint64_t began = entry.request_begin_ns[n % shm::kRequestRing].load(std::memory_order_relaxed);
      if (began != 0 && began <= now) out.latencyUs.push_back(static_cast<double>(now - began) / 1000.0);
    }
    seenDone[client] = std::max(seenDone[client], done);
  }
  if (out.busy && !wasBusy) busySince = now;
  if (!out.busy && wasBusy && !usesApi) out.latencyUs.push_back(static_cast<double>(now - busySince) / 1000.0);
  if (out.busy) out.openUs = static_cast<double>(now - busySince) / 1000.0;
  wasBusy = out.busy;
  return out;
}

bool processAlive(std::uint64_t pid) {
  if (pid == 0 || pid > static_cast<std::uint64_t>(INT32_MAX)) return false;
  return kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH;
}

std::vector<std::string> reap(shm::Segment &seg, const std::function<bool(std::uint64_t)> &alive) {
  std::vector<std::string> lines;
  for (shm::LsClient &entry : seg.ls) {
    const std::uint64_t pid = entry.pid.load(std::memory_order_acquire);
    if (pid == 0 || alive(pid)) continue;
    for (shm::LsStream &st : entry.streams) {
      st.key.store(0);
      st.submitted.store(0);
      st.completed.store(0);
    }
    entry.launches.store(0);
    entry.overflow.store(0);
    entry.requests_begun.store(0);
    entry.requests_done.store(0);
    entry.pid.store(0, std::memory_order_release); // last: the entry is free once it is clean
    lines.push_back("LS process " + std::to_string(pid) + " is gone: its entry is freed");
  }
  const std::uint64_t now = shm::now_ns(), lease = seg.controller.lease_ns.load();
  for (shm::BeClient &entry : seg.be) {
    const std::uint64_t pid = entry.pid.load(std::memory_order_acquire);
    if (pid == 0 || alive(pid)) continue;
    // A BE process beats: one whose pid this controller cannot see (another pid namespace) but whose
    // heartbeat is fresh is alive.
    const std::uint64_t beat = entry.heartbeat_ns.load();
    if (beat != 0 && now > beat && now - beat < lease) continue;
    entry.heartbeat_ns.store(0);
    entry.applied_seq.store(0);
    entry.launches.store(0);
    entry.safe.store(0);
    entry.pid.store(0, std::memory_order_release);
    lines.push_back("BE process " + std::to_string(pid) + " is gone: its entry is freed");
  }
  return lines;
}

namespace {

constexpr std::uint64_t kMs = 1'000'000;

double quantile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

// The GPU's SMs only ("all" is every SM id the runtime knows: 0-255).
std::string describe(const shm::PolicyValue &v, unsigned smCount) {
  const ptb::SmSet gpu = ptb::SmSet::first(smCount);
  std::string s = "SMs " + (v.sms & gpu).str();
  if (v.per_sm != 0) s += ", " + std::to_string(v.per_sm) + " per SM";
  if (v.per_sm != 0 && (v.capped & gpu) != gpu) s += " on " + (v.capped & gpu).str();
  return s;
}

} // namespace

Daemon::Daemon(const Config &config, shm::Segment &seg, unsigned smCount, Log log)
    : config(config), seg(seg), smCount(smCount), log(std::move(log)),
      gate(static_cast<std::uint64_t>(config.stuckLimitUs) * 1000,
           static_cast<std::uint64_t>(config.holdLimitUs) * 1000,
           static_cast<std::uint64_t>(config.betweenAfterUs) * 1000) {
  const ptb::SmSet all = ptb::SmSet::first(smCount);
  safe.sms = parseSms(config.safeSms, shm::default_safe(smCount).sms) & all;
  safe.per_sm = config.safePerSm;
  during.sms = parseSms(config.duringSms, ptb::SmSet::none()) & all;
  during.per_sm = config.duringPerSm;
  // between_sms "all" (the default) stays the set of every SM, whatever the GPU's count, as before it existed
  between.sms = config.betweenSms == "all" ? ptb::SmSet::all() : parseSms(config.betweenSms, ptb::SmSet::all()) & all;
  between.per_sm = config.betweenPerSm;
  if (config.policy == "static") {
    const unsigned be = std::min(config.beSms, smCount);
    controller = std::make_unique<qos::StaticPartition>(smCount, smCount - be);
  } else if (config.policy == "feedback") {
    qos::FeedbackConfig fc;
    fc.total = smCount;
    fc.target = config.targetP99Us;
    fc.step = config.step;
    fc.be_floor = config.floor;
    controller = std::make_unique<qos::FeedbackController>(fc);
  } else if (config.policy == "gspace") {
    qos::GSpaceConfig gc;
    gc.total = smCount;
    gc.target = config.targetP99Us;
    gc.max_cap = config.maxCap;
    gc.n_step = config.step;
    gc.start_k = config.maxCap;
    controller = std::make_unique<qos::GSpaceController>(gc);
  }
}

Daemon::~Daemon() {
  if (decisions) std::fclose(decisions);
}

void Daemon::recordDecisions(std::FILE *file, const std::string &path) {
  decisions = file;
  decisionsPath = path;
  std::fprintf(decisions,
               "# ptb-qosd %d: one line per published policy: CLOCK_MONOTONIC ns, sequence, BE's SMs, "
               "cap per SM (0: none), why\n",
               static_cast<int>(getpid()));
}

// One line of the decisions file. A failed write is said once, and recording stops.
void Daemon::record(std::uint64_t now, const shm::PolicyValue &value, const char *why) {
  if (!decisions) return;
  const int written = std::fprintf(decisions, "%llu\t%llu\t%s\t%u\t%s\n", static_cast<unsigned long long>(now),
                                   static_cast<unsigned long long>(seg.controller.seq.load()),
                                   (value.sms & ptb::SmSet::first(smCount)).str().c_str(), value.per_sm, why);
  if (written < 0 || std::ferror(decisions)) {
    if (log) log("decisions_file " + decisionsPath + ": a write failed; no more decisions are recorded");
    std::fclose(decisions);
    decisions = nullptr;
  }
}

shm::PolicyValue Daemon::placement(const qos::Allocation &a) const {
  const qos::BePlacement p = qos::be_placement(a);
  shm::PolicyValue v;
  v.sms = p.sms;
  v.per_sm = p.per_sm;
  v.capped = p.capped;
  return v;
}

// `why` null: not logged (the gate's yield and give-back come with every LS request; they are counted).
void Daemon::publish(std::uint64_t now, const shm::PolicyValue &value, const char *why, bool logged) {
  if (published && value == current) return;
  shm::publish(seg, value, safe);
  current = value;
  if (published) ++changes;
  published = true;
  if (log && why && logged) log(std::string("BE: ") + describe(value, smCount) + " (" + why + ")");
  // The gate's yields and give-backs are not logged (one a request), only recorded.
  record(now, value, why ? why : gate.want() == qos::GateState::Want::during ? "LS busy" : "LS idle");
}

void Daemon::sayUnlogged(std::uint64_t now) {
  if (log)
    log(std::to_string(limitUnlogged) + " more release" + (limitUnlogged == 1 ? "" : "s") +
        " by the gate's limits since the last such line, not logged (at most one line a second)");
  limitLoggedAt = now;
  limitUnlogged = 0;
}

void Daemon::start(std::uint64_t now) {
  shm::StatsWords &st = seg.stats;
  for (shm::Word *w : {&st.ls_requests, &st.ls_p50_ns, &st.ls_p99_ns, &st.ls_max_ns, &st.yields, &st.releases,
                       &st.policy_changes, &st.ls_busy})
    w->store(0);
  seg.controller.lease_ns.store(static_cast<std::uint64_t>(config.leaseMs) * kMs);
  shm::put_text(seg.stats.policy_name, config.policy);
  seg.stats.sm_count.store(smCount);
  seg.stats.ls_target_ns.store(static_cast<std::uint64_t>(config.targetP99Us * 1000.0));
  seg.controller.heartbeat_ns.store(now, std::memory_order_release);
  epochStart = now;
  nextEpoch = now + static_cast<std::uint64_t>(config.epochMs) * kMs;
  if (controller)
    publish(now, placement(controller->allocation()), "start");
  else
    publish(now, config.policy == "gate" ? between : everything, "start"); // gate: LS idle until marked busy
  if (log) log("safe state: " + describe(safe, smCount) + "; lease " + std::to_string(config.leaseMs) + " ms");
  updateStats();
}

shm::PolicyValue Daemon::decide(std::uint64_t now, const LsLook &look) {
  if (config.policy == "gate")
    return gate.step(now, look.busy, look.stuckNs) == qos::GateState::Want::during ? during : between;
  if (!controller) return everything; // off
  if (now >= nextEpoch) {
    double launches = 0;
    for (const shm::BeClient &entry : seg.be)
      if (entry.pid.load() != 0) launches += static_cast<double>(entry.launches.load());
    // LS still busy at the epoch's end: its latency so far is a latency too (at least that long). Without it
    // an LS starved for the whole epoch (BE on every SM, under MPS) would give no sample and look idle.
    if (look.busy) epochLatency.push_back(look.openUs);
    qos::EpochSample sample;
    sample.ls_active = !epochLatency.empty();
    sample.ls_latency = quantile(epochLatency, 0.99);
    const double secs = static_cast<double>(now - epochStart) / 1e9;
    sample.be_rate = secs > 0 ? std::max(0.0, launches - epochLaunches) / secs : 0;
    epochLaunches = launches;
    epochLatency.clear();
    epochStart = now;
    nextEpoch = now + static_cast<std::uint64_t>(config.epochMs) * kMs;
    return placement(controller->epoch(sample));
  }
  return current;
}

void Daemon::step(std::uint64_t now) {
  seg.controller.heartbeat_ns.store(now, std::memory_order_release);
  if (now >= nextReap) {
    nextReap = now + 100 * kMs;
    for (const std::string &line : reap(seg, processAlive))
      if (log) log(line);
  }
  divide();
  const LsLook look = watch.look(seg, now);
  for (const double us : look.latencyUs) {
    epochLatency.push_back(us);
    window.push_back(us);
    if (window.size() > 1000) window.pop_front();
    ++samples;
  }
  const std::uint64_t releases = gate.releases();
  const shm::PolicyValue want = decide(now, look);
  const char *why = nullptr;
  bool logged = true;
  if (config.policy != "gate") {
    why = "policy";
  } else if (gate.releases() != releases) {
    why = gate.last_release() == qos::GateState::Release::stuck
              ? "the gate's stuck limit: an LS stream made no progress"
              : "the gate's hold limit: BE held that long without a break";
    if (limitLoggedAt != 0 && now - limitLoggedAt < 1000 * kMs) {
      logged = false;
      ++limitUnlogged;
    } else {
      limitLoggedAt = now;
    }
  }
  publish(now, want, why, logged);
  if (limitUnlogged != 0 && now - limitLoggedAt >= 1000 * kMs) sayUnlogged(now);
  seg.stats.ls_busy.store(look.busy ? 1 : 0);
  seg.stats.ls_clients.store(look.clients);
  if (now >= nextStats) {
    nextStats = now + 10 * kMs;
    updateStats();
    if (decisions) std::fflush(decisions);
  }
}

// be_share split: the live BE entries, in entry order, get the parts of BE's SMs (shm::slice_of); shared,
// or a single BE process: the whole. A process that claims an entry between two polls applies the whole
// policy until the next poll divides again.
void Daemon::divide() {
  unsigned live = 0;
  for (const shm::BeClient &entry : seg.be)
    if (entry.pid.load() != 0) ++live;
  const unsigned parts = config.beShare == "split" && live > 1 ? live : 0;
  unsigned part = 0;
  for (shm::BeClient &entry : seg.be) {
    if (entry.pid.load() == 0) continue;
    const std::uint64_t word = parts != 0 ? shm::slice_word(part, parts) : 0;
    ++part;
    if (entry.slice.load(std::memory_order_relaxed) != word) entry.slice.store(word, std::memory_order_release);
  }
  seg.stats.be_parts.store(parts);
}

void Daemon::updateStats() {
  shm::StatsWords &st = seg.stats;
  std::vector<double> v(window.begin(), window.end());
  st.ls_requests.store(samples);
  st.ls_p50_ns.store(static_cast<std::uint64_t>(quantile(v, 0.5) * 1000.0));
  st.ls_p99_ns.store(static_cast<std::uint64_t>(quantile(v, 0.99) * 1000.0));
  st.ls_max_ns.store(static_cast<std::uint64_t>(quantile(v, 1.0) * 1000.0));
  st.be_sms.store((current.sms & ptb::SmSet::first(smCount)).count());
  st.be_per_sm.store(current.per_sm);
  st.yields.store(gate.yields());
  st.releases.store(gate.releases());
  st.policy_changes.store(changes);
  std::uint64_t be = 0, launches = 0, safe = 0;
  for (const shm::BeClient &entry : seg.be) {
    if (entry.pid.load() == 0) continue;
    ++be;
    launches += entry.launches.load();
    safe += entry.safe.load() != 0 ? 1 : 0;
  }
  st.be_clients.store(be);
  st.be_launches.store(launches);
  st.be_safe.store(safe);
}

void Daemon::stop() {
  seg.controller.stopped.store(1, std::memory_order_release);
  if (limitUnlogged != 0) sayUnlogged(shm::now_ns());
  if (log) log("stopped: BE takes its safe state (" + describe(safe, smCount) + ")");
  record(shm::now_ns(), safe, "stopped: the safe state");
  if (decisions) std::fflush(decisions);
}

} // namespace ptb::qosd

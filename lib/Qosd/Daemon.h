// lib/Qosd/Daemon.h: ptb-qosd's controller of one GPU, one poll at a time (docs/design/qos-controller.md).
// Each step() reads what the LS processes marked in the segment (LsWatch), frees the entries of processes
// that are gone, decides BE's policy by the configured policy (the request gate, a static split, the
// feedback or G-Space controller, or none) and publishes it with the safe state, beats, and keeps the
// statistics current. The caller owns the clock and the loop (tools/ptb-qosd), so the tests drive it with a
// fake clock (test/unit/QosdTest.cpp). Plain C++: no LLVM, no CUDA.
#pragma once

#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "QosdConfig.h"
#include "ptb/qos/controller.h"
#include "ptb/qos/gate_state.h"
#include "ptb/qos/segment.h"

namespace ptb::qosd {

// What one look at the LS entries found.
struct LsLook {
  bool busy = false;             // some LS launch or C-API request is in flight
  std::uint64_t stuckNs = 0;     // the longest time a stream in flight has gone without progress
  std::vector<double> latencyUs; // latencies that ended since the last look
  double openUs = 0;             // while busy: how long LS has been busy so far (a latency not yet ended)
  unsigned clients = 0;
};

// Follows the LS entries from poll to poll. A latency is a C-API request's (its begin to the poll that saw
// it done) for a process that uses the API, else a busy period's (from the poll that first saw LS work in
// flight to the poll that saw none): for an LS service that runs one request at a time, its request's.
class LsWatch {
public:
  LsLook look(const qos::shm::Segment &seg, std::uint64_t now);

private:
  struct Stream {
    std::uint64_t completed = 0, since = 0;
    bool busy = false;
  };
  Stream seenStreams[qos::shm::kLsClients][qos::shm::kLsStreams];
  std::uint64_t seenPid[qos::shm::kLsClients] = {};
  std::uint64_t seenDone[qos::shm::kLsClients] = {};
  bool wasBusy = false;
  std::uint64_t busySince = 0;
};

// Frees the entries (LS and BE) whose process is gone (kill(pid, 0) says ESRCH); returns one line per entry
// freed. `alive` is the check (tests give their own).
std::vector<std::string> reap(qos::shm::Segment &seg, const std::function<bool(std::uint64_t)> &alive);
bool processAlive(std::uint64_t pid);

class Daemon {
public:
  using Log = std::function<void(const std::string &)>;
  Daemon(const Config &config, qos::shm::Segment &seg, unsigned smCount, Log log);
  ~Daemon();
  void start(std::uint64_t now); // the first publish and heartbeat
  void step(std::uint64_t now);  // one poll
  void stop();                   // a clean stop: BE takes its safe state at once
  // Appends one line per published policy to `file`, opened for appending at `path` (decisions_file;
  // docs/reference/ptb-qosd.md); the daemon closes it. Before start().
  void recordDecisions(std::FILE *file, const std::string &path);

  const qos::shm::PolicyValue &publishedPolicy() const { return current; }
  const qos::shm::PolicyValue &safeState() const { return safe; }

private:
  qos::shm::PolicyValue decide(std::uint64_t now, const LsLook &look);
  // `logged` false: recorded (decisions_file) but not logged.
  void publish(std::uint64_t now, const qos::shm::PolicyValue &value, const char *why, bool logged = true);
  void record(std::uint64_t now, const qos::shm::PolicyValue &value, const char *why);
  void updateStats();
  void sayUnlogged(std::uint64_t now); // the count of the limits' releases not logged
  void divide();                       // each live BE entry's slice word (be_share)
  qos::shm::PolicyValue placement(const qos::Allocation &a) const;

  Config config;
  qos::shm::Segment &seg;
  unsigned smCount;
  Log log;
  LsWatch watch;
  qos::GateState gate;
  std::unique_ptr<qos::Controller> controller; // static, feedback, gspace
  qos::shm::PolicyValue during, between, safe, current;
  qos::shm::PolicyValue everything; // off: every SM, no cap (whatever between_per_sm says)
  bool published = false;
  std::uint64_t nextReap = 0, nextStats = 0, nextEpoch = 0, epochStart = 0;
  double epochLaunches = 0;
  std::vector<double> epochLatency;
  std::deque<double> window; // the last 1000 latencies, for the statistics
  std::uint64_t samples = 0;
  std::uint64_t changes = 0;
  // The gate's releases by a limit are logged at most once a second (a stream stuck for good is released about
  // 45 times a second); the line after a quiet second says how many were not logged.
  std::uint64_t limitLoggedAt = 0, limitUnlogged = 0;
  std::FILE *decisions = nullptr; // decisions_file, while it can be written
  std::string decisionsPath;
};

} // namespace ptb::qosd

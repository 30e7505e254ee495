// lib/Qosd/QosdConfig.h: ptb-qosd's configuration: one set of keys, read from a file (`key = value` lines,
// `#` comments) and from the command line (`--key value`, dashes for underscores), the command line last.
// docs/reference/ptb-qosd.md lists every key. Plain C++: no LLVM, no CUDA.
#pragma once

#include <string>
#include <vector>

#include "ptb/smset.cuh"

namespace ptb::qosd {

struct Config {
  std::string policy = "gate";    // gate | static | feedback | gspace | off
  double targetP99Us = 0;         // feedback and gspace: the LS p99 target (required there)
  unsigned pollUs = 20;           // how often the controller looks at LS
  unsigned leaseMs = 50;          // BE takes its safe state when the heartbeat is older
  unsigned epochMs = 2;           // feedback, gspace: one decision per epoch
  std::string duringSms = "none"; // gate: BE's SMs while LS has work in flight
  unsigned duringPerSm = 0;       // gate: BE's cap there (0: none)
  std::string betweenSms = "all"; // gate: BE's SMs while LS is idle (SMs left out: LS's first blocks start there)
  unsigned betweenPerSm = 0;      // gate: BE's cap on them (0: none)
  unsigned stuckLimitUs = 20000;  // gate: an LS stream without progress this long gives BE its SMs back
  unsigned holdLimitUs = 200000;  // gate: BE held this long without a break gets its SMs back (qos/gate_state.h)
  unsigned betweenAfterUs = 0;    // gate: LS idle this long before BE gets `between` (0: at once)
  unsigned beSms = 0;             // static: BE's SMs, the highest ones (required there)
  unsigned floor = 1;             // feedback: BE's fewest SMs
  unsigned step = 2;              // feedback: SMs moved at a time; gspace: n's step
  unsigned maxCap = 8;            // gspace: BE's workers per SM at full occupancy
  std::string safeSms;            // the safe state's SMs ("" : the highest quarter)
  unsigned safePerSm = 0;         // the safe state's cap (0: none)
  std::string metricsFile;        // "" : none
  std::string decisionsFile;      // "" : none; else one line per published policy (Daemon::recordDecisions)
  std::string mps = "use";        // use | start | off
  std::string beShare = "shared"; // shared (every BE process applies BE's policy) | split (equal, disjoint parts)
};

// Where a value came from, for messages: "FILE:LINE:COL" or "command line".
struct Origin {
  std::string where;
};

// Every key, in order, each with its values when it takes a name: "be_share (shared|split)", "be_sms", ...
// (ptb-qosd's usage text; the reference page's test).
std::vector<std::string> configKeys();

// A whole number (digits only, at most UINT_MAX) into `out`: "" or what is wrong ("'x' is not a whole number").
std::string parseWhole(const std::string &value, unsigned &out);

// An SM-set value of the configuration (during_sms, between_sms, safe_sms): `otherwise` when empty or unreadable.
ptb::SmSet parseSms(const std::string &text, const ptb::SmSet &otherwise);

// Sets key (underscores) to value; "" on success, else the message (without the origin).
std::string setKey(Config &config, const std::string &key, const std::string &value);

// Reads `text` (the file's contents) into config. On the first error returns false with `error` as
// "FILE:LINE:COL: error: ..." (the column of the key or of the value at fault).
bool parseConfigText(const std::string &text, const std::string &file, Config &config, std::string &error);

// After every source: the checks that need the whole configuration (a policy's required keys); "" when fine.
std::string checkConfig(const Config &config);

// Settings that parse and run but that measurements found harmful: one sentence each, said by `run` and
// `check-config` (neither refuses them).
std::vector<std::string> configWarnings(const Config &config);

} // namespace ptb::qosd

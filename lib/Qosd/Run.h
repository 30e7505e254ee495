// lib/Qosd/Run.h: ptb-qosd's commands, for tools/ptb-qosd/main.cpp: the controller's loop (the configuration
// read and checked, the GPU found, the segment made or taken, MPS checked, Daemon::step every poll_us until
// SIGTERM or SIGINT, the metrics file rewritten), `status` and `check-config`. docs/reference/ptb-qosd.md.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ptb::qosd {

// Exit codes (docs/reference/ptb-qosd.md).
constexpr int kExitOk = 0, kExitFailure = 1, kExitUsage = 2, kExitHeld = 3;

struct RunOptions {
  std::string configFile; // "" : none
  std::string gpuKey;     // --gpu (then sms is required)
  int device = -1;        // --device
  unsigned sms = 0;       // --sms
  struct Override {
    std::string key; // with underscores, as the configuration file names it
    std::string value;
    std::string written; // the option as the user wrote it (--during-sms), for its error
  };
  std::vector<Override> overrides; // --key value
};

// `run`: the usage text is the caller's; errors are printed here.
int runController(const RunOptions &options);
// `status [--gpu KEY | --all] [--prometheus]` and `check-config FILE`, their arguments after the verb.
int printStatus(const std::vector<std::string> &args);
int checkConfig(const std::vector<std::string> &args);
// "ptb-qosd: error: <what>" on stderr; returns code.
int fail(int code, const std::string &what);

} // namespace ptb::qosd

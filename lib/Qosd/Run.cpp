#include "Run.h"

#include <dirent.h>
#include <linux/magic.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "Daemon.h"
#include "GpuInfo.h"
#include "QosdConfig.h"
#include "Report.h"

namespace ptb::qosd {

namespace shm = ptb::qos::shm;

int fail(int code, const std::string &what) {
  std::fprintf(stderr, "ptb-qosd: error: %s\n", what.c_str());
  return code;
}

namespace {

std::atomic<bool> gStop{false};
void onSignal(int) { gStop.store(true); }

void logLine(const std::string &line) {
  const std::time_t now = std::time(nullptr);
  char when[32];
  std::strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", std::gmtime(&now));
  std::fprintf(stderr, "%sZ ptb-qosd: %s\n", when, line.c_str());
}

bool readFile(const std::string &path, std::string &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

// Written whole or not at all: a temporary file beside it, renamed over it.
void writeMetrics(const std::string &path, const std::string &text) {
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return;
    out << text;
    if (!out) return;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) std::remove(tmp.c_str());
}

int checkMps(const std::string &mode) {
  if (mode == "off") {
    logLine("mps = off: LS and BE processes on this GPU time-slice unless an MPS daemon runs (no concurrency: "
            "an LS request waits for BE's time slice; measured on an H200, LS p99 356x its solo p99)");
    return kExitOk;
  }
  const char *dir = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
  const std::string pipe = std::string(dir && *dir ? dir : "/tmp/nvidia-mps") + "/control";
  struct stat st{};
  if (stat(pipe.c_str(), &st) == 0) {
    logLine("MPS control daemon found (" + pipe + ")");
    return kExitOk;
  }
  if (mode == "start") {
    // The daemon serves every GPU of the node, so it starts without this process's CUDA_VISIBLE_DEVICES: a
    // daemon serves only the GPUs it sees, and its clients' CUDA_VISIBLE_DEVICES then count those GPUs, not
    // the node's (seen on an H200 x2, 2026-11-29: a daemon started for GPU 1 alone left clients that named
    // device 1 with no GPU; NVIDIA's MPS guide says clients should not set it).
    const char *visible = std::getenv("CUDA_VISIBLE_DEVICES");
    if (std::system("env -u CUDA_VISIBLE_DEVICES nvidia-cuda-mps-control -d") != 0)
      return fail(kExitFailure, "mps = start: nvidia-cuda-mps-control -d failed");
    logLine("MPS control daemon started (pipe directory " + pipe.substr(0, pipe.size() - 8) + ")" +
            (visible ? std::string(" for every GPU of the node, without this process's CUDA_VISIBLE_DEVICES=") + visible
                     : std::string()));
    return kExitOk;
  }
  logLine("warning: no MPS control daemon (" + pipe +
          " missing): LS and BE processes will time-slice; start one "
          "(nvidia-cuda-mps-control -d) or run with --mps start");
  return kExitOk;
}

} // namespace

int runController(const RunOptions &options) {
  Config config;
  const std::string &configFile = options.configFile;
  const std::string &gpuKey = options.gpuKey;
  const int device = options.device;
  const unsigned sms = options.sms;
  const auto &overrides = options.overrides;
  if (!configFile.empty()) {
    std::string text, error;
    if (!readFile(configFile, text)) return fail(kExitUsage, "cannot read " + configFile);
    if (!parseConfigText(text, configFile, config, error)) {
      std::fprintf(stderr, "%s\n", error.c_str());
      return kExitUsage;
    }
  }
  for (const auto &o : overrides) {
    const std::string err = setKey(config, o.key, o.value);
    if (!err.empty()) return fail(kExitUsage, o.written + ": " + err);
  }
  if (const std::string err = checkConfig(config); !err.empty()) return fail(kExitUsage, err);
  for (const std::string &warning : configWarnings(config)) logLine("warning: " + warning);

  GpuInfo gpu;
  if (!gpuKey.empty()) {
    if (!shm::valid_key(gpuKey)) return fail(kExitUsage, "--gpu " + gpuKey + ": not a GPU key (letters, digits, -_.)");
    if (sms == 0 || sms > ptb::kMaxSms) return fail(kExitUsage, "--gpu needs --sms N (1 to 256)");
    gpu.key = gpuKey;
    gpu.sms = sms;
  } else if (device >= 0) {
    std::string error;
    if (!gpuOfDevice(device, gpu, error)) return fail(kExitFailure, error);
    if (sms != 0) gpu.sms = sms;
  } else {
    return fail(kExitUsage, "which GPU? --device N, or --gpu KEY --sms N");
  }
  // Before the segment: a file that cannot be opened changes nothing. Closed here until the daemon takes it.
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> decisions(nullptr, &std::fclose);
  if (!config.decisionsFile.empty()) {
    decisions.reset(std::fopen(config.decisionsFile.c_str(), "a"));
    if (!decisions) return fail(kExitFailure, "decisions_file " + config.decisionsFile + ": " + std::strerror(errno));
  }
  const std::string path = shm::segment_path(shm::segment_dir(), gpu.key);
  struct statfs fs{};
  if (statfs(shm::segment_dir().c_str(), &fs) == 0 && fs.f_type != TMPFS_MAGIC)
    logLine("warning: " + shm::segment_dir() +
            " is not on tmpfs: the LS library cannot register the segment with "
            "CUDA there (it pins no other file-backed pages), so LS work will not be marked; use /dev/shm");
  shm::Mapping map;
  bool taken = false;
  const shm::Status st = shm::create_or_take(path, gpu.sms, gpu.key, map, taken);
  if (st == shm::Status::held)
    return fail(kExitHeld, path + ": held by another controller of this GPU; nothing changed");
  if (st != shm::Status::ok) {
    std::string what = path + ": " + shm::describe(st);
    if (map.errno_value() != 0) what += std::string(" (") + std::strerror(map.errno_value()) + ")";
    return fail(kExitFailure, what);
  }
  if (const int rc = checkMps(config.mps); rc != kExitOk) return rc; // after the refusals: they change nothing
  struct sigaction sa{};
  sa.sa_handler = onSignal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  logLine((taken ? "took over " : "created ") + path + " for " + gpu.key + " (" + std::to_string(gpu.sms) +
          " SMs), policy " + config.policy);
  Daemon daemon(config, *map, gpu.sms, logLine);
  if (decisions) daemon.recordDecisions(decisions.release(), config.decisionsFile);
  daemon.start(shm::now_ns());
  std::uint64_t nextMetrics = 0;
  // Linux lets a sleep run 50 us late by default (the timer slack): a 20 us poll would be a 70 us one.
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  while (!gStop.load()) {
    const std::uint64_t now = shm::now_ns();
    daemon.step(now);
    if (!config.metricsFile.empty() && now >= nextMetrics) {
      nextMetrics = now + 500'000'000ull;
      writeMetrics(config.metricsFile, prometheus(*map, now));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(config.pollUs));
  }
  daemon.stop();
  if (!config.metricsFile.empty()) writeMetrics(config.metricsFile, prometheus(*map, shm::now_ns()));
  return kExitOk;
}

int printStatus(const std::vector<std::string> &args) {
  std::string gpuKey;
  bool all = false, prom = false;
  for (size_t at = 0; at < args.size(); ++at) {
    if (args[at] == "--gpu" && at + 1 < args.size())
      gpuKey = args[++at];
    else if (args[at] == "--all")
      all = true;
    else if (args[at] == "--prometheus")
      prom = true;
    else
      return fail(kExitUsage, "status: unexpected argument '" + args[at] + "'");
  }
  std::vector<std::string> keys;
  const std::string dir = shm::segment_dir();
  if (!gpuKey.empty()) {
    if (!shm::valid_key(gpuKey)) return fail(kExitUsage, "--gpu " + gpuKey + ": not a GPU key");
    keys.push_back(gpuKey);
  } else {
    (void)all; // the default: every segment in the folder
    if (DIR *d = opendir(dir.c_str())) {
      while (const dirent *e = readdir(d)) {
        const std::string name = e->d_name;
        if (name.rfind("ptb-qos.", 0) == 0 && shm::valid_key(name.substr(8))) keys.push_back(name.substr(8));
      }
      closedir(d);
    }
    if (keys.empty()) {
      std::printf("no controller segment in %s: no ptb-qosd has run here (PTB_QOSD_DIR)\n", dir.c_str());
      return kExitFailure;
    }
  }
  int rc = kExitOk;
  bool headers = true;
  for (const std::string &key : keys) {
    shm::Mapping map;
    const std::string path = shm::segment_path(dir, key);
    const shm::Status st = shm::attach(path, map);
    if (st != shm::Status::ok) {
      std::fprintf(stderr, "ptb-qosd: %s: %s\n", path.c_str(), shm::describe(st));
      rc = kExitFailure;
      continue;
    }
    const std::uint64_t now = shm::now_ns();
    std::fputs(prom ? prometheus(*map, now, headers).c_str() : statusText(*map, now).c_str(), stdout);
    if (!controllerUp(*map, now)) rc = kExitFailure; // a health check: 0 only when every controller listed is up
    headers = false;
  }
  return rc;
}

int checkConfig(const std::vector<std::string> &args) {
  if (args.size() != 1) return fail(kExitUsage, "check-config FILE");
  std::string text, error;
  Config config;
  if (!readFile(args[0], text)) return fail(kExitUsage, "cannot read " + args[0]);
  if (!parseConfigText(text, args[0], config, error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return kExitUsage;
  }
  if (const std::string err = checkConfig(config); !err.empty()) return fail(kExitUsage, args[0] + ": " + err);
  for (const std::string &warning : configWarnings(config))
    std::fprintf(stderr, "%s: warning: %s\n", args[0].c_str(), warning.c_str());
  std::printf("%s: ok (policy %s)\n", args[0].c_str(), config.policy.c_str());
  return kExitOk;
}

} // namespace ptb::qosd

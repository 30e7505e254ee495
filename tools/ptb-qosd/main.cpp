// ptb-qosd: the controller of one GPU for LS and BE programs that are separate processes
// (docs/reference/ptb-qosd.md). Options and output only; the commands are lib/Qosd/Run.cpp.
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "QosdConfig.h"
#include "Run.h"
#include "ptb/qos/segment.h"

namespace {

namespace shm = ptb::qos::shm;
using ptb::qosd::fail;
using ptb::qosd::kExitOk;
using ptb::qosd::kExitUsage;

// The usage text; the configuration keys come from the configuration's own table.
std::string usage() {
  std::string text = R"(usage: ptb-qosd run [--config FILE] (--device N | --gpu KEY --sms N) [--KEY VALUE ...]
       ptb-qosd status [--gpu KEY | --all] [--prometheus]
       ptb-qosd check-config FILE
       ptb-qosd --help | --version
run: the controller of one GPU, until SIGTERM or SIGINT. Every configuration key can be given as --key-name
  (dashes for underscores) and wins over the file:
)";
  // The keys, wrapped at 110 columns.
  std::string line = " ";
  const std::vector<std::string> keys = ptb::qosd::configKeys();
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::string item = " " + keys[i] + (i + 1 < keys.size() ? "," : ".");
    if (line.size() + item.size() > 110) {
      text += line + "\n";
      line = " ";
    }
    line += item;
  }
  text += line + "\n";
  text += "Segments live in PTB_QOSD_DIR (default /dev/shm). Exit: 0 done, 1 failure, 2 bad usage or configuration,\n"
          "3 another controller holds the GPU.\n";
  return text;
}

int run(const std::vector<std::string> &args) {
  ptb::qosd::RunOptions options;
  for (size_t at = 0; at < args.size(); ++at) {
    const std::string &a = args[at];
    if (a == "--help" || a == "-h") {
      std::fputs(usage().c_str(), stdout);
      return kExitOk;
    }
    if (a.rfind("--", 0) != 0) return fail(kExitUsage, "unexpected argument '" + a + "'\n" + usage());
    if (at + 1 >= args.size()) return fail(kExitUsage, a + " needs a value");
    const std::string value = args[++at];
    unsigned number = 0;
    if (a == "--device" || a == "--sms") {
      const std::string wrong = ptb::qosd::parseWhole(value, number);
      if (!wrong.empty() || number > INT_MAX) return fail(kExitUsage, a + ": " + (wrong.empty() ? "too large" : wrong));
    }
    if (a == "--config")
      options.configFile = value;
    else if (a == "--gpu")
      options.gpuKey = value;
    else if (a == "--device")
      options.device = static_cast<int>(number);
    else if (a == "--sms")
      options.sms = number;
    else {
      std::string key = a.substr(2);
      for (char &ch : key)
        if (ch == '-') ch = '_';
      options.overrides.push_back({key, value, a});
    }
  }
  return ptb::qosd::runController(options);
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::fputs(usage().c_str(), stderr);
    return kExitUsage;
  }
  const std::string verb = args[0];
  if (verb == "--help" || verb == "-h") {
    std::fputs(usage().c_str(), stdout);
    return kExitOk;
  }
  if (verb == "--version") {
    std::printf("ptb-qosd (segment version %llu)\n", static_cast<unsigned long long>(shm::kVersion));
    return kExitOk;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (verb == "run") return run(rest);
  if (verb == "status") return ptb::qosd::printStatus(rest);
  if (verb == "check-config") return ptb::qosd::checkConfig(rest);
  return fail(kExitUsage, "unknown command '" + verb + "'\n" + usage());
}

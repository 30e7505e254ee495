#include "QosdConfig.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <functional>
#include <map>

#include "ptb/smset.cuh"

namespace ptb::qosd {

ptb::SmSet parseSms(const std::string &text, const ptb::SmSet &otherwise) {
  if (text.empty()) return otherwise;
  if (text == "none") return ptb::SmSet::none();
  ptb::SmSet out;
  return ptb::SmSet::parse(text, out) ? out : otherwise;
}

std::string parseWhole(const std::string &value, unsigned &out) {
  if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos)
    return "'" + value + "' is not a whole number";
  errno = 0;
  const unsigned long parsed = std::strtoul(value.c_str(), nullptr, 10);
  if (errno != 0 || parsed > UINT_MAX) return "'" + value + "' is too large";
  out = static_cast<unsigned>(parsed);
  return "";
}

namespace {

std::string positive(const std::string &value, unsigned &out) {
  std::string err = parseWhole(value, out);
  if (err.empty() && out == 0) err = "must be at least 1";
  return err;
}
std::string real(const std::string &value, double &out) {
  char *end = nullptr;
  errno = 0;
  out = std::strtod(value.c_str(), &end);
  if (value.empty() || end != value.c_str() + value.size() || errno != 0 || out < 0)
    return "'" + value + "' is not a number >= 0";
  return "";
}
std::string sms(const std::string &value, std::string &out) {
  ptb::SmSet parsed;
  if (value != "none" && !ptb::SmSet::parse(value, parsed))
    return "'" + value + "' is not an SM set (none, all, or ids and ranges like 0-65,70)";
  out = value;
  return "";
}
// The values of the keys that take a name (also listed by configKeys).
const std::vector<const char *> kPolicies = {"gate", "static", "feedback", "gspace", "off"};
const std::vector<const char *> kMpsModes = {"use", "start", "off"};
const std::vector<const char *> kBeShares = {"shared", "split"};
const std::map<std::string, const std::vector<const char *> *> kNamedValues = {
    {"policy", &kPolicies}, {"mps", &kMpsModes}, {"be_share", &kBeShares}};

std::string oneOf(const std::string &value, const std::vector<const char *> &names, std::string &out) {
  std::string list;
  for (const char *name : names) {
    if (value == name) {
      out = value;
      return "";
    }
    list += (list.empty() ? "" : ", ") + std::string(name);
  }
  return "'" + value + "' is not one of " + list;
}

using Setter = std::function<std::string(Config &, const std::string &)>;
const std::map<std::string, Setter> &setters() {
  static const std::map<std::string, Setter> table = {
      {"policy",
       [](Config &c, const std::string &v) {
         // The in-process controllers' fifth, the fuse-or-reorder manager, picks which of the BE program's own
         // launches to make: it lives in that program, not in a controller (docs/design/qos-controller.md).
         if (v == "manager")
           return std::string("'manager' is not a controller's policy: the fuse-or-reorder manager runs inside "
                              "the BE program (ptb::qos::ManagerDriver); across processes its yield is the "
                              "gate's (policy = gate)");
         return oneOf(v, kPolicies, c.policy);
       }},
      {"target_p99_us", [](Config &c, const std::string &v) { return real(v, c.targetP99Us); }},
      {"poll_us", [](Config &c, const std::string &v) { return positive(v, c.pollUs); }},
      {"lease_ms", [](Config &c, const std::string &v) { return positive(v, c.leaseMs); }},
      {"epoch_ms", [](Config &c, const std::string &v) { return positive(v, c.epochMs); }},
      {"during_sms", [](Config &c, const std::string &v) { return sms(v, c.duringSms); }},
      {"during_per_sm", [](Config &c, const std::string &v) { return parseWhole(v, c.duringPerSm); }},
      {"between_sms", [](Config &c, const std::string &v) { return sms(v, c.betweenSms); }},
      {"between_per_sm", [](Config &c, const std::string &v) { return parseWhole(v, c.betweenPerSm); }},
      {"stuck_limit_us", [](Config &c, const std::string &v) { return positive(v, c.stuckLimitUs); }},
      {"hold_limit_us", [](Config &c, const std::string &v) { return positive(v, c.holdLimitUs); }},
      {"between_after_us", [](Config &c, const std::string &v) { return parseWhole(v, c.betweenAfterUs); }},
      {"be_sms", [](Config &c, const std::string &v) { return parseWhole(v, c.beSms); }},
      {"floor", [](Config &c, const std::string &v) { return parseWhole(v, c.floor); }},
      {"step", [](Config &c, const std::string &v) { return positive(v, c.step); }},
      {"max_cap", [](Config &c, const std::string &v) { return positive(v, c.maxCap); }},
      {"safe_sms", [](Config &c, const std::string &v) { return sms(v, c.safeSms); }},
      {"safe_per_sm", [](Config &c, const std::string &v) { return parseWhole(v, c.safePerSm); }},
      {"metrics_file",
       [](Config &c, const std::string &v) {
         c.metricsFile = v;
         return std::string();
       }},
      {"decisions_file",
       [](Config &c, const std::string &v) {
         c.decisionsFile = v;
         return std::string();
       }},
      {"mps", [](Config &c, const std::string &v) { return oneOf(v, kMpsModes, c.mps); }},
      {"be_share", [](Config &c, const std::string &v) { return oneOf(v, kBeShares, c.beShare); }},
  };
  return table;
}

} // namespace

std::vector<std::string> configKeys() {
  std::vector<std::string> keys;
  for (const auto &[key, setter] : setters()) {
    std::string item = key;
    const auto named = kNamedValues.find(key);
    if (named != kNamedValues.end()) {
      const char *sep = " (";
      for (const char *name : *named->second) {
        item += sep + std::string(name);
        sep = "|";
      }
      item += ")";
    }
    keys.push_back(item);
  }
  return keys;
}

std::string setKey(Config &config, const std::string &key, const std::string &value) {
  const auto it = setters().find(key);
  if (it == setters().end()) return "unknown key '" + key + "'";
  const std::string err = it->second(config, value);
  return err.empty() ? err : key + ": " + err;
}

bool parseConfigText(const std::string &text, const std::string &file, Config &config, std::string &error) {
  size_t begin = 0;
  unsigned line = 0;
  auto blank = [](char ch) { return ch == ' ' || ch == '\t' || ch == '\r'; };
  while (begin <= text.size()) {
    ++line;
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    std::string row = text.substr(begin, end - begin);
    begin = end + 1;
    const size_t hash = row.find('#');
    if (hash != std::string::npos) row.resize(hash);
    size_t at = 0;
    while (at < row.size() && blank(row[at])) ++at;
    if (at == row.size()) {
      if (end == text.size()) break;
      continue;
    }
    auto fail = [&](size_t col, const std::string &what) {
      error = file + ":" + std::to_string(line) + ":" + std::to_string(col + 1) + ": error: " + what;
      return false;
    };
    const size_t eq = row.find('=');
    if (eq == std::string::npos) return fail(at, "expected 'key = value'");
    size_t keyEnd = eq;
    while (keyEnd > at && blank(row[keyEnd - 1])) --keyEnd;
    const std::string key = row.substr(at, keyEnd - at);
    if (key.empty()) return fail(at, "expected a key before '='");
    size_t valueAt = eq + 1;
    while (valueAt < row.size() && blank(row[valueAt])) ++valueAt;
    size_t valueEnd = row.size();
    while (valueEnd > valueAt && blank(row[valueEnd - 1])) --valueEnd;
    const std::string value = row.substr(valueAt, valueEnd - valueAt);
    if (setters().find(key) == setters().end()) return fail(at, "unknown key '" + key + "'");
    if (value.empty() && key != "metrics_file" && key != "decisions_file" && key != "safe_sms")
      return fail(valueAt, "'" + key + "' has no value");
    const std::string err = setKey(config, key, value);
    if (!err.empty()) return fail(valueAt, err);
    if (end == text.size()) break;
  }
  return true;
}

std::string checkConfig(const Config &config) {
  if ((config.policy == "feedback" || config.policy == "gspace") && config.targetP99Us <= 0)
    return "policy " + config.policy + " needs target_p99_us";
  if (config.policy == "static" && config.beSms == 0) return "policy static needs be_sms (BE's SMs, at least 1)";
  return "";
}

std::vector<std::string> configWarnings(const Config &config) {
  std::vector<std::string> out;
  if (config.policy == "gate" && config.duringPerSm != 0 && !parseSms(config.duringSms, ptb::SmSet::none()).empty())
    out.push_back("during_per_sm caps BE on its SMs while LS has work in flight: on the H200 (2026-11-29) every "
                  "such cap starved a PyTorch service (LS p99 213x its solo p99 with during_sms 99-131 at 2 per "
                  "SM, 1447x with every SM at 1 per SM; 1.45x with 99-131 and no cap); leave during_per_sm at 0 "
                  "(docs/reference/ptb-qosd.md)");
  if (config.policy == "gate" && parseSms(config.betweenSms, ptb::SmSet::all()).empty())
    out.push_back("between_sms is none: BE gets no SM while LS is idle, only when a limit releases it "
                  "(stuck_limit_us, hold_limit_us)");
  return out;
}

} // namespace ptb::qosd

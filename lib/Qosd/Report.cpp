#include "Report.h"

#include <signal.h>

#include <cerrno>
#include <cstdio>

namespace ptb::qosd {

namespace shm = qos::shm;

namespace {

struct Metric {
  const char *name;
  const char *type;
  const char *help;
};

std::string number(double x) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.9g", x);
  return buf;
}

} // namespace

bool controllerUp(const shm::Segment &seg, std::uint64_t now) {
  if (shm::controller_gone(seg, now)) return false;
  const auto pid = seg.controller.pid.load();
  return pid != 0 && (kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH);
}

std::string prometheus(const shm::Segment &seg, std::uint64_t now, bool headers) {
  const shm::StatsWords &st = seg.stats;
  const std::string gpu = "{gpu=\"" + shm::get_text(seg.gpu) + "\"}";
  std::string out;
  auto put = [&](const Metric &m, double value, const std::string &labels) {
    if (headers) {
      out += std::string("# HELP ") + m.name + " " + m.help + "\n";
      out += std::string("# TYPE ") + m.name + " " + m.type + "\n";
    }
    out += std::string(m.name) + labels + " " + number(value) + "\n";
  };
  put({"ptb_qosd_controller_up", "gauge", "1 while the GPU's controller beats within its lease"},
      controllerUp(seg, now) ? 1 : 0, gpu);
  put({"ptb_qosd_sms", "gauge", "SMs of the GPU"}, static_cast<double>(st.sm_count.load()), gpu);
  put({"ptb_qosd_be_sms", "gauge", "SMs BE may use now"}, static_cast<double>(st.be_sms.load()), gpu);
  put({"ptb_qosd_be_per_sm", "gauge", "BE's cap of workers per SM now (0: none)"},
      static_cast<double>(st.be_per_sm.load()), gpu);
  put({"ptb_qosd_ls_busy", "gauge", "1 while LS work is in flight"}, static_cast<double>(st.ls_busy.load()), gpu);
  const std::string q = "{gpu=\"" + shm::get_text(seg.gpu) + "\",quantile=";
  if (headers) {
    out += "# HELP ptb_qosd_ls_latency_seconds LS latency over the last 1000 requests or busy periods\n";
    out += "# TYPE ptb_qosd_ls_latency_seconds summary\n";
  }
  out +=
      "ptb_qosd_ls_latency_seconds" + q + "\"0.5\"} " + number(static_cast<double>(st.ls_p50_ns.load()) / 1e9) + "\n";
  out +=
      "ptb_qosd_ls_latency_seconds" + q + "\"0.99\"} " + number(static_cast<double>(st.ls_p99_ns.load()) / 1e9) + "\n";
  out += "ptb_qosd_ls_latency_seconds" + q + "\"1\"} " + number(static_cast<double>(st.ls_max_ns.load()) / 1e9) + "\n";
  put({"ptb_qosd_ls_target_seconds", "gauge", "the LS p99 target (0: none)"},
      static_cast<double>(st.ls_target_ns.load()) / 1e9, gpu);
  put({"ptb_qosd_ls_requests_total", "counter", "LS latencies measured"}, static_cast<double>(st.ls_requests.load()),
      gpu);
  put({"ptb_qosd_yields_total", "counter", "times BE was told to leave its SMs for LS"},
      static_cast<double>(st.yields.load()), gpu);
  put({"ptb_qosd_releases_total", "counter", "times the gate's stuck or hold limit gave BE its SMs back"},
      static_cast<double>(st.releases.load()), gpu);
  put({"ptb_qosd_policy_changes_total", "counter", "times BE's policy was rewritten"},
      static_cast<double>(st.policy_changes.load()), gpu);
  put({"ptb_qosd_ls_clients", "gauge", "LS processes marking their work"}, static_cast<double>(st.ls_clients.load()),
      gpu);
  put({"ptb_qosd_be_clients", "gauge", "BE processes following the controller"},
      static_cast<double>(st.be_clients.load()), gpu);
  put({"ptb_qosd_be_safe_clients", "gauge", "BE processes in their safe state"}, static_cast<double>(st.be_safe.load()),
      gpu);
  put({"ptb_qosd_be_parts", "gauge", "BE processes BE's SMs are divided among (be_share split; 0: shared)"},
      static_cast<double>(st.be_parts.load()), gpu);
  put({"ptb_qosd_be_launches_total", "counter", "twin launches of the BE processes (0: BE is not PTB)"},
      static_cast<double>(st.be_launches.load()), gpu);
  return out;
}

std::string statusText(const shm::Segment &seg, std::uint64_t now) {
  const shm::StatsWords &st = seg.stats;
  const shm::ControllerWords &ctl = seg.controller;
  char buf[512];
  std::string out = shm::get_text(seg.gpu) + ": ";
  const std::uint64_t beat = ctl.heartbeat_ns.load();
  if (ctl.stopped.load() != 0)
    out += "controller stopped (BE in its safe state)\n";
  else if (beat == 0)
    out += "no controller has run\n";
  else if (shm::controller_gone(seg, now)) {
    std::snprintf(buf, sizeof(buf), "controller gone: heartbeat %.0f ms old, lease %.0f ms (pid %llu)\n",
                  static_cast<double>(now - beat) / 1e6, static_cast<double>(ctl.lease_ns.load()) / 1e6,
                  static_cast<unsigned long long>(ctl.pid.load()));
    out += buf;
  } else {
    std::snprintf(buf, sizeof(buf), "controller pid %llu (incarnation %llu), policy %s\n",
                  static_cast<unsigned long long>(ctl.pid.load()),
                  static_cast<unsigned long long>(ctl.incarnation.load()), shm::get_text(st.policy_name).c_str());
    out += buf;
  }
  std::snprintf(
      buf, sizeof(buf),
      "  BE: %llu of %llu SMs, cap %llu per SM%s; %llu processes (%llu in their safe state), %llu twin launches\n",
      static_cast<unsigned long long>(st.be_sms.load()), static_cast<unsigned long long>(st.sm_count.load()),
      static_cast<unsigned long long>(st.be_per_sm.load()),
      st.be_parts.load() > 1 ? (", split in " + std::to_string(st.be_parts.load()) + " parts").c_str() : "",
      static_cast<unsigned long long>(st.be_clients.load()), static_cast<unsigned long long>(st.be_safe.load()),
      static_cast<unsigned long long>(st.be_launches.load()));
  out += buf;
  // Each BE process: the SMs it applies (its part when divided), its launches, following or safe.
  shm::PolicyValue policy, safe;
  std::uint64_t seq = 0;
  const bool published = shm::read_published(seg, policy, safe, seq);
  const unsigned smCount = static_cast<unsigned>(st.sm_count.load());
  const ptb::SmSet gpuSms = ptb::SmSet::first(smCount);
  for (const shm::BeClient &entry : seg.be) {
    const std::uint64_t pid = entry.pid.load();
    if (pid == 0) continue;
    const std::uint64_t slice = entry.slice.load();
    std::string sms = "?";
    if (entry.safe.load() != 0)
      sms = (safe.sms & gpuSms).str() + " (its safe state)";
    else if (published)
      sms = (shm::slice_of(policy, slice, smCount).sms & gpuSms).str();
    if (entry.safe.load() == 0 && shm::slice_parts(slice) > 1)
      sms += " (part " + std::to_string(shm::slice_part(slice) + 1) + " of " + std::to_string(shm::slice_parts(slice)) +
             ")";
    std::snprintf(buf, sizeof(buf), "    BE pid %llu: SMs %s; %llu twin launches\n",
                  static_cast<unsigned long long>(pid), sms.c_str(),
                  static_cast<unsigned long long>(entry.launches.load()));
    out += buf;
  }
  std::snprintf(buf, sizeof(buf),
                "  LS: %s; %llu processes; p50 %.0f us, p99 %.0f us, max %.0f us over the last %llu latencies\n",
                st.ls_busy.load() ? "busy" : "idle", static_cast<unsigned long long>(st.ls_clients.load()),
                static_cast<double>(st.ls_p50_ns.load()) / 1e3, static_cast<double>(st.ls_p99_ns.load()) / 1e3,
                static_cast<double>(st.ls_max_ns.load()) / 1e3,
                static_cast<unsigned long long>(st.ls_requests.load() < 1000 ? st.ls_requests.load() : 1000));
  out += buf;
  // Each LS process: busy (some stream or C-API request in flight) or idle, its launches.
  for (const shm::LsClient &entry : seg.ls) {
    const std::uint64_t pid = entry.pid.load();
    if (pid == 0) continue;
    std::snprintf(buf, sizeof(buf), "    LS pid %llu: %s; %llu launches marked\n", static_cast<unsigned long long>(pid),
                  shm::busy(entry) ? "busy" : "idle", static_cast<unsigned long long>(entry.launches.load()));
    out += buf;
  }
  std::snprintf(buf, sizeof(buf), "  yields %llu, releases %llu, policy changes %llu\n",
                static_cast<unsigned long long>(st.yields.load()), static_cast<unsigned long long>(st.releases.load()),
                static_cast<unsigned long long>(st.policy_changes.load()));
  out += buf;
  return out;
}

} // namespace ptb::qosd

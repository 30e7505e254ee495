// The controller dies while LS and BE run (issue 40's fault goal): kills ptb-qosd (SIGKILL: no clean stop),
// measures from the segment how long the BE processes take to reach their safe state, starts the
// controller again and measures how long until every BE process follows it. Plain C++ on the segment
// (runtime/include/ptb/qos/segment.h); run by test/gpu/qosd/run.sh on the GPU machine.
//
//   controller_fault SEGMENT_PATH KILL_AFTER_MS -- RESTART_COMMAND...
//
// Prints "FAULT killed pid P; BE safe after X ms (N clients); restarted pid Q; followed after Y ms" and
// exits 0 when X <= 100 and Y <= 1000, else 1. The restarted controller is left running (the caller stops it).
#include <ptb/qos/segment.h>

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace shm = ptb::qos::shm;

namespace {

std::vector<shm::BeClient*> live_be(shm::Segment& seg) {
  std::vector<shm::BeClient*> out;
  for (auto& c : seg.be) {
    const auto pid = static_cast<pid_t>(c.pid.load());
    if (pid > 0 && kill(pid, 0) == 0) out.push_back(&c);
  }
  return out;
}
double ms_since(std::uint64_t t0) { return (shm::now_ns() - t0) / 1e6; }

} // namespace

int main(int argc, char** argv) {
  if (argc < 5 || std::string(argv[3]) != "--") {
    std::fprintf(stderr, "usage: controller_fault SEGMENT_PATH KILL_AFTER_MS -- RESTART_COMMAND...\n");
    return 2;
  }
  shm::Mapping map;
  const shm::Status st = shm::attach(argv[1], map);
  if (st != shm::Status::ok) {
    std::fprintf(stderr, "controller_fault: %s: %s\n", argv[1], shm::describe(st));
    return 2;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(std::stoul(argv[2])));
  shm::Segment& seg = *map;
  const auto pid = static_cast<pid_t>(seg.controller.pid.load());
  const auto be = live_be(seg);
  if (pid <= 0 || be.empty()) {
    std::printf("FAULT no controller (pid %d) or no BE client (%zu)\n", pid, be.size());
    return 1;
  }
  for (auto* c : be)
    if (c->safe.load() != 0) {
      std::printf("FAULT a BE client is in its safe state before the kill\n");
      return 1;
    }
  const std::uint64_t killed = shm::now_ns();
  kill(pid, SIGKILL);
  double safe_ms = -1;
  while (ms_since(killed) < 2000) {
    bool all = true;
    for (auto* c : be) all = all && c->safe.load() == 1;
    if (all) {
      safe_ms = ms_since(killed);
      break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  // Restart.
  const std::uint64_t incarnation = seg.controller.incarnation.load();
  const std::uint64_t restarted = shm::now_ns();
  const pid_t child = fork();
  if (child == 0) {
    execvp(argv[4], argv + 4);
    _exit(127);
  }
  double follow_ms = -1;
  while (ms_since(restarted) < 5000) {
    if (seg.controller.incarnation.load() != incarnation && !shm::controller_gone(seg, shm::now_ns())) {
      const std::uint64_t seq = seg.controller.seq.load();
      bool all = seq % 2 == 0;
      for (auto* c : be) all = all && c->safe.load() == 0 && c->applied_seq.load() == seq;
      if (all) {
        follow_ms = ms_since(restarted);
        break;
      }
    }
    int status = 0;
    if (waitpid(child, &status, WNOHANG) == child) {
      std::printf("FAULT the restarted controller exited (status %d)\n", status);
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  std::printf("FAULT killed pid %d; BE safe after %.1f ms (%zu clients); restarted pid %d; followed after %.1f ms\n",
              pid, safe_ms, be.size(), child, follow_ms);
  return safe_ms >= 0 && safe_ms <= 100 && follow_ms >= 0 && follow_ms <= 1000 ? 0 : 1;
}

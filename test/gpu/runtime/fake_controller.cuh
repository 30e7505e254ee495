// The controller's side for the runtime's GPU tests of a process that follows ptb-qosd (test_controller_link,
// test_short_launches, test_link_devices): a segment in a temporary PTB_QOSD_DIR, this process linked to it (PTB_QOSD), a heartbeat
// every millisecond while `beating`, publish() and this process's BE entry. Host only.
#pragma once
#include <ptb/qos/segment.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

class FakeController {
public:
  // `name` makes the folder and the key; call before the process's first launch (the link starts there).
  bool open(const char* name, unsigned total, std::uint64_t lease_ns = 50'000'000) {
    std::string tmpl = std::string("/tmp/") + name + ".XXXXXX";
    if (!mkdtemp(&tmpl[0])) return false;
    owns_dir_ = true;
    setenv("PTB_QOSD_DIR", tmpl.c_str(), 1);
    setenv("PTB_QOSD", (std::string("GPU-") + name).c_str(), 1);
    return serve(tmpl, std::string("GPU-") + name, total, lease_ns);
  }
  // The segment of GPU key `gpu_key` in `folder` (the caller sets PTB_QOSD_DIR and PTB_QOSD), beating from now.
  bool serve(const std::string& folder, const std::string& gpu_key, unsigned total,
             std::uint64_t lease_ns = 50'000'000) {
    dir = folder;
    key = gpu_key;
    bool taken = false;
    namespace shm = ptb::qos::shm;
    if (shm::create_or_take(shm::segment_path(dir, key), total, key, seg, taken) != shm::Status::ok) {
      std::printf("FAIL: cannot create the segment in %s\n", dir.c_str());
      return false;
    }
    lease = lease_ns;
    seg->controller.lease_ns.store(lease_ns);
    safe.sms = ptb::SmSet::last(total / 4, total);
    heart_ = std::thread([this] {
      while (!quit_) {
        if (beating) seg->controller.heartbeat_ns.store(shm::now_ns());
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
    return true;
  }
  ~FakeController() {
    quit_ = true;
    if (heart_.joinable()) heart_.join();
    if (owns_dir_ && !dir.empty()) (void)!std::system(("rm -rf '" + dir + "'").c_str());
  }
  // Publishes BE's policy (and `safe`); the sequence number the BE entry's applied_seq will show.
  std::uint64_t publish(const ptb::SmSet& sms, unsigned per_sm = 0) {
    ptb::qos::shm::PolicyValue p;
    p.sms = sms;
    p.per_sm = per_sm;
    ptb::qos::shm::publish(*seg, p, safe);
    return seg->controller.seq.load();
  }
  ptb::qos::shm::BeClient* entry() {
    for (auto& c : seg->be)
      if (c.pid.load() == static_cast<std::uint64_t>(getpid())) return &c;
    return nullptr;
  }

  std::string dir, key;
  ptb::qos::shm::Mapping seg;
  ptb::qos::shm::PolicyValue safe; // the safe state published with every policy: the highest quarter
  std::uint64_t lease = 0;
  std::atomic<bool> beating{true};

private:
  std::atomic<bool> quit_{false};
  bool owns_dir_ = false;
  std::thread heart_;
};

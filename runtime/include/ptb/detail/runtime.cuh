// ptb/detail/runtime.cuh: the process-wide state of the runtime (its lock, devices, policies, monitor).
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

namespace ptb {

namespace detail {

constexpr unsigned kMaxDevices = 16;

struct DeviceState;
struct PolicyState;

struct Runtime {
  std::mutex __m;
  DeviceState* devs[kMaxDevices] = {};
  PolicyState* process = nullptr;
  // the policy of the controller each device's launches follow, or null (controller_link.cuh)
  PolicyState* linked[kMaxDevices] = {};
  std::vector<PolicyState*> policies; // every policy made, the process policy too (they live as long as the process)
  std::unordered_map<cudaStream_t, PolicyState*> stream_policies;
  std::thread monitor;
  std::atomic<bool> stop{false};
  bool monitor_started = false;
  bool trace_on = false;
  size_t trace_cap = 0;
  ~Runtime() {
    stop.store(true);
    if (monitor.joinable()) monitor.join();
    // Device memory and streams are left to the driver's teardown (freeing here could run after it).
  }
};
inline Runtime& rt() {
  static Runtime __r;
  return __r;
}

} // namespace detail

} // namespace ptb

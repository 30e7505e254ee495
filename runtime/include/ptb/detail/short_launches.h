// ptb/detail/short_launches.h: which launches are short enough to run as their original kernel while a
// controller lets the process use every SM (PTB_ORIGINAL_BELOW_US; docs/design/short-launches.md).
//
// A launch that follows a controller runs as a twin so that it can give SMs back at any moment. A launch that
// ends within the controller's yield budget anyway needs no mid-kernel yield: run as its original kernel, it
// holds the GPU no longer than a twin would take to yield, and costs what the original costs. This table says
// which launches those are. Its key is the kernel and the launch's number of blocks; its estimate of a key's
// duration rises at once to a longer sample and decays slowly (a bound more than a mean); after a key's first
// launch (a twin, not timed: it carries set-up), its next `first` launches run as twins and are timed, then one
// launch in `every`, so that a key whose launches grow longer goes back to twins.
// Plain C++ (no CUDA): the caller times launches (events) and holds the lock; test/unit/ShortLaunchesTest.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <unordered_map>

namespace ptb {

namespace detail {

class ShortLaunches {
public:
  enum class Form { twin, original };
  struct Plan {
    Form form = Form::twin;
    bool timed = false; // the caller times this launch and reports it with observe()
  };

  explicit ShortLaunches(double budget_us, unsigned first = 3, unsigned every = 64, std::size_t max_keys = 4096)
      : budget_us_(budget_us), first_(first ? first : 1), every_(every ? every : 1), max_keys_(max_keys) {}

  double budget_us() const { return budget_us_; }

  // The form of the next launch of `kernel` with `blocks` blocks, and whether to time it.
  Plan plan(const void* kernel, std::uint64_t blocks) {
    Plan __p;
    if (budget_us_ <= 0) return __p;
    auto __it = keys_.find(Key{kernel, blocks});
    if (__it == keys_.end()) {
      if (keys_.size() >= max_keys_) return __p; // too many shapes: twins, untimed
      __it = keys_.emplace(Key{kernel, blocks}, State{}).first;
    }
    State& __s = __it->second;
    ++__s.launches;
    // A key's first launch carries set-up that is not the kernel's (the runtime's first launch, the twin's
    // module load): a twin, not timed. So is the first launch as an original (the original's module load).
    if (__s.launches == 1) return __p;
    if (__s.observed < first_) { // still learning: a twin, timed (at most `first` in flight)
      if (__s.timed_in_flight < first_) {
        __p.timed = true;
        ++__s.timed_in_flight;
      }
      return __p;
    }
    if (__s.estimate_us < budget_us_) __p.form = Form::original;
    const bool first_original = __p.form == Form::original && __s.originals++ == 0;
    if (!first_original && __s.launches % every_ == 0) {
      __p.timed = true;
      ++__s.timed_in_flight;
    }
    return __p;
  }

  // A timed launch of the key took `us` (its events). A launch whose timing failed is reported with forget().
  void observe(const void* kernel, std::uint64_t blocks, double us) {
    auto __it = keys_.find(Key{kernel, blocks});
    if (__it == keys_.end()) return;
    State& __s = __it->second;
    if (__s.timed_in_flight) --__s.timed_in_flight;
    __s.estimate_us = __s.observed == 0 || us > __s.estimate_us ? us : 0.75 * __s.estimate_us + 0.25 * us;
    ++__s.observed;
  }
  void forget(const void* kernel, std::uint64_t blocks) {
    auto __it = keys_.find(Key{kernel, blocks});
    if (__it != keys_.end() && __it->second.timed_in_flight) --__it->second.timed_in_flight;
  }

  // The key's estimate in microseconds (negative before its first observation).
  double estimate_us(const void* kernel, std::uint64_t blocks) const {
    auto __it = keys_.find(Key{kernel, blocks});
    return __it == keys_.end() || __it->second.observed == 0 ? -1.0 : __it->second.estimate_us;
  }

private:
  struct Key {
    const void* kernel;
    std::uint64_t blocks;
    bool operator==(const Key& __o) const { return kernel == __o.kernel && blocks == __o.blocks; }
  };
  struct KeyHash {
    std::size_t operator()(const Key& __k) const {
      return std::hash<const void*>()(__k.kernel) ^ (std::hash<std::uint64_t>()(__k.blocks) * 0x9e3779b97f4a7c15ull);
    }
  };
  struct State {
    std::uint64_t launches = 0, originals = 0;
    unsigned observed = 0, timed_in_flight = 0;
    double estimate_us = 0;
  };
  double budget_us_;
  unsigned first_, every_;
  std::size_t max_keys_;
  std::unordered_map<Key, State, KeyHash> keys_;
};

} // namespace detail

} // namespace ptb

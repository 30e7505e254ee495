// ptb/detail/on_device.cuh: the calling thread on a given device for a scope, then back on its own.
// Part of the header-only runtime; include <ptb/ptb.cuh>, not this file.
#pragma once
#include <cuda_runtime.h>

namespace ptb {

namespace detail {

// The runtime acts on any device (the monitor, a policy change) from threads whose current device is
// the program's business: it switches for the scope and switches back. False: the switch failed.
class OnDevice {
public:
  explicit OnDevice(int dev) {
    if (cudaGetDevice(&prev_) != cudaSuccess) prev_ = -1;
    switched_ = prev_ != dev;
    ok_ = !switched_ || cudaSetDevice(dev) == cudaSuccess;
  }
  ~OnDevice() {
    if (switched_ && prev_ >= 0) cudaSetDevice(prev_);
  }
  OnDevice(const OnDevice&) = delete;
  OnDevice& operator=(const OnDevice&) = delete;
  explicit operator bool() const { return ok_; }

private:
  int prev_ = -1;
  bool switched_ = false, ok_ = true;
};

} // namespace detail

} // namespace ptb

// lib/Qosd/GpuInfo.h: the GPU a controller serves, from the CUDA runtime: its key (the UUID as nvidia-smi
// prints it) and its SM count.
#pragma once

#include <string>

namespace ptb::qosd {

struct GpuInfo {
  std::string key; // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
  unsigned sms = 0;
};

// Device `index` as the CUDA runtime numbers it (CUDA_VISIBLE_DEVICES applies). False with `error` when
// CUDA has no such device.
bool gpuOfDevice(int index, GpuInfo &out, std::string &error);

} // namespace ptb::qosd

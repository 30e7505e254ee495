#include "GpuInfo.h"

#include <cuda_runtime.h>

#include "ptb/qos/segment.h"

namespace ptb::qosd {

bool gpuOfDevice(int index, GpuInfo &out, std::string &error) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    error = std::string("CUDA finds no GPU (") + cudaGetErrorString(e) + ")";
    return false;
  }
  if (index < 0 || index >= count) {
    error = "no CUDA device " + std::to_string(index) + " (" + std::to_string(count) + " visible)";
    return false;
  }
  cudaDeviceProp prop{};
  e = cudaGetDeviceProperties(&prop, index);
  if (e != cudaSuccess) {
    error = std::string("cannot read device ") + std::to_string(index) + ": " + cudaGetErrorString(e);
    return false;
  }
  out.key = qos::shm::key_of_uuid(reinterpret_cast<const unsigned char *>(prop.uuid.bytes));
  out.sms = static_cast<unsigned>(prop.multiProcessorCount);
  return true;
}

} // namespace ptb::qosd

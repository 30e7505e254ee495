#include "KernelInventory.h"

namespace ptb {

std::string Location::str() const { return file + ":" + std::to_string(line) + ":" + std::to_string(column); }

bool Kernel::usesVirtualIndex() const {
  auto it = uses.find(BuiltinVar::blockIdx), jt = uses.find(BuiltinVar::gridDim);
  return (it != uses.end() && it->second.used()) || (jt != uses.end() && jt->second.used());
}

} // namespace ptb

// Output formats of `ptb-transform --list-kernels`. The JSON schema is documented in docs/inventory.md.
#pragma once

#include "KernelInventory.h"

#include <string>
#include <vector>

namespace ptb {

std::string formatInventoryText(const std::vector<Inventory> &inventories);
std::string formatInventoryJson(const std::vector<Inventory> &inventories);

} // namespace ptb

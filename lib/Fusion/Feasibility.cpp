#include "Feasibility.h"

#include <algorithm>
#include <functional>

namespace ptb {

// The runtime keeps one ptb::SlotShared (about 96 bytes) per slot in shared memory.
constexpr uint64_t kSlotBookkeeping = 128;

FusedShape fusedShape(const std::vector<SlotKernel> &kernels, const std::vector<unsigned> &slots) {
  FusedShape f;
  for (size_t i = 0; i < kernels.size(); ++i) {
    f.threads += slots[i] * kernels[i].request.threads();
    f.slots += slots[i];
    f.staticShared += slots[i] * (kernels[i].staticShared + kSlotBookkeeping);
    f.dynamicShared += slots[i] * ((kernels[i].request.dynamicShared + 15) / 16 * 16);
  }
  return f;
}

uint64_t fusedStaticShared(const std::vector<SlotKernel> &kernels, const std::vector<unsigned> &slots) {
  return fusedShape(kernels, slots).staticShared;
}

std::vector<std::string> fusionProblems(const std::vector<SlotKernel> &kernels, const std::vector<unsigned> &slots,
                                        const FusionLimits &limits, unsigned minBlocks) {
  std::vector<std::string> problems;
  const FusedShape f = fusedShape(kernels, slots);
  const unsigned threads = f.threads, n = f.slots;
  const uint64_t staticShared = f.staticShared, shared = f.staticShared + f.dynamicShared;
  for (size_t i = 0; i < kernels.size(); ++i)
    if (slots[i] == 0) problems.push_back("kernel '" + kernels[i].qualifiedName + "' has no slot");
  if (n > limits.maxSlots)
    problems.push_back(std::to_string(n) + " slots need " + std::to_string(n) + " named barriers; the hardware has " +
                       std::to_string(limits.maxSlots) + " besides __syncthreads' barrier 0");
  if (threads > limits.maxThreads)
    problems.push_back("the fused block would have " + std::to_string(threads) + " threads; at most " +
                       std::to_string(limits.maxThreads) + " are allowed");
  if (staticShared > limits.maxStaticShared)
    problems.push_back("the slots' static __shared__ variables would take " + std::to_string(staticShared) +
                       " bytes; a kernel's static shared memory is limited to " +
                       std::to_string(limits.maxStaticShared));
  if (shared > limits.maxShared)
    problems.push_back("the fused block would use " + std::to_string(shared) +
                       " bytes of shared memory; an SM offers " + std::to_string(limits.maxShared));
  if (minBlocks > 1) {
    if (minBlocks * threads > limits.maxThreadsPerSm)
      problems.push_back(std::to_string(minBlocks) + " blocks of " + std::to_string(threads) +
                         " threads exceed the SM's " + std::to_string(limits.maxThreadsPerSm) + " threads");
    else if (limits.registersPerSm / (minBlocks * threads) < limits.minRegisterCap)
      problems.push_back(std::to_string(minBlocks) + " blocks of " + std::to_string(threads) + " threads leave " +
                         std::to_string(limits.registersPerSm / (minBlocks * threads)) +
                         " registers per thread (fewer than " + std::to_string(limits.minRegisterCap) + ")");
    if (minBlocks * shared > limits.maxSharedPerSm)
      problems.push_back(std::to_string(minBlocks) + " blocks would use " + std::to_string(minBlocks * shared) +
                         " bytes of shared memory; an SM has " + std::to_string(limits.maxSharedPerSm));
  }
  return problems;
}

unsigned launchRegisters(unsigned threads, unsigned minBlocks, const FusionLimits &limits) {
  if (threads == 0 || minBlocks == 0) return 0;
  const unsigned r = limits.registersPerSm / (minBlocks * threads) / limits.registerUnit * limits.registerUnit;
  const unsigned top =
      (limits.maxRegistersPerThread + limits.registerUnit - 1) / limits.registerUnit * limits.registerUnit;
  return std::min(r, top);
}

std::vector<std::string> budgetProblems(const std::vector<SlotKernel> &kernels, const std::vector<unsigned> &slots,
                                        const std::vector<unsigned> &budgets, const FusionLimits &limits,
                                        unsigned minBlocks) {
  std::vector<std::string> problems;
  if (budgets.size() != kernels.size()) {
    problems.push_back(std::to_string(budgets.size()) + " register budgets for " + std::to_string(kernels.size()) +
                       " kernels");
    return problems;
  }
  const unsigned wg = limits.warpgroup;
  unsigned first = 0;
  uint64_t need = 0;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const unsigned n = slots[i] * kernels[i].request.threads();
    if (first % wg || n % wg)
      problems.push_back("the slots of '" + kernels[i].qualifiedName + "' are threads " + std::to_string(first) + ".." +
                         std::to_string(first + n - 1) + "; setmaxnreg changes the registers of whole warpgroups (" +
                         std::to_string(wg) + " threads), so each kernel's slots must start and end on a multiple of " +
                         std::to_string(wg));
    need += static_cast<uint64_t>(n) * budgets[i];
    first += n;
  }
  const unsigned r = launchRegisters(first, minBlocks, limits);
  if (need > static_cast<uint64_t>(r) * first)
    problems.push_back("the register budgets need " + std::to_string(need) + " registers per block; " +
                       std::to_string(minBlocks) + " block" + (minBlocks > 1 ? "s" : "") + " of " +
                       std::to_string(first) + " threads per SM " + (minBlocks > 1 ? "hold " : "holds ") +
                       std::to_string(r) + " per thread, " + std::to_string(static_cast<uint64_t>(r) * first) +
                       " per block (" + std::to_string(limits.registersPerSm) + " per SM)");
  return problems;
}

unsigned budgetBlocks(const std::vector<SlotKernel> &kernels, const std::vector<unsigned> &slots,
                      const std::vector<unsigned> &budgets, const FusionLimits &limits) {
  for (unsigned m = limits.maxBlocksPerSm; m >= 1; --m)
    if (fusionProblems(kernels, slots, limits, m).empty() && budgetProblems(kernels, slots, budgets, limits, m).empty())
      return m;
  return 0;
}

std::vector<std::vector<unsigned>> feasibleRatios(const std::vector<SlotKernel> &kernels, const FusionLimits &limits) {
  std::vector<std::vector<unsigned>> out;
  std::vector<unsigned> cur(kernels.size(), 1);
  std::function<void(size_t)> rec = [&](size_t i) {
    if (i == kernels.size()) {
      if (fusionProblems(kernels, cur, limits).empty()) out.push_back(cur);
      return;
    }
    for (unsigned s = 1; s <= limits.maxSlots; ++s) {
      cur[i] = s;
      rec(i + 1);
    }
    cur[i] = 1;
  };
  rec(0);
  return out;
}

} // namespace ptb

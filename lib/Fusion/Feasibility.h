// Whether a fused block fits the hardware: its size for a ratio (slots of each kernel), the limits it must
// respect, the problems of one ratio and every ratio that fits.
#pragma once

#include "FusionTypes.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ptb {

// Limits a fused block must respect.
struct FusionLimits {
  unsigned maxThreads = 1024;
  unsigned maxSlots = 15;                         // named barriers 1..15 (0 is __syncthreads)
  uint64_t maxShared = uint64_t{227} * 1024;      // per block, static + dynamic (H100, opt-in)
  uint64_t maxStaticShared = uint64_t{48} * 1024; // static __shared__ variables of one kernel (ptxas' limit)
  unsigned maxThreadsPerSm = 2048;                // for candidates asking for several fused blocks per SM
  uint64_t maxSharedPerSm = uint64_t{228} * 1024;
  unsigned registersPerSm = 65536;
  unsigned minRegisterCap = 32;         // a register cap below this (min blocks per SM) spills too much
  unsigned maxRegistersPerThread = 255; // at launch (ptxas' largest count)
  unsigned registerUnit = 8;            // registers per thread are allocated in units of 8 (256 per warp)
  unsigned warpgroup = 128;             // threads that setmaxnreg changes together (4 consecutive warps)
  unsigned maxBlocksPerSm = 32;
};

// The size of a fused block with `slots[i]` slots of kernels[i].
struct FusedShape {
  unsigned threads = 0, slots = 0;
  uint64_t staticShared = 0;  // the slots' __shared__ variables and the runtime's bookkeeping
  uint64_t dynamicShared = 0; // the slots' dynamic shared memory, each rounded up to 16 bytes
};
FusedShape fusedShape(const std::vector<SlotKernel> &kernels, const std::vector<unsigned> &slots);
// Shared memory (static, per block) of a fused block, without dynamic shared memory.
uint64_t fusedStaticShared(const std::vector<SlotKernel> &kernels, const std::vector<unsigned> &slots);

// Why `slots` (one count per kernel, in order) cannot be a fused block, one message per problem (none
// when it can).
// With minBlocks > 1 the fused kernel asks for that many resident blocks per SM (__launch_bounds__'
// second argument: the compiler caps registers per thread at registersPerSm / (minBlocks * threads)).
std::vector<std::string> fusionProblems(const std::vector<SlotKernel> &kernels, const std::vector<unsigned> &slots,
                                        const FusionLimits &limits, unsigned minBlocks = 1);
// Registers per thread a fused block of `threads` threads holds at launch when it asks for `minBlocks`
// blocks per SM through __launch_bounds__(threads, minBlocks): what ptxas gives a kernel that changes its
// registers with setmaxnreg (its largest count for that bound, in the unit of 8: 65536 / (minBlocks *
// threads) rounded down, at most 256; ptxas reports 255 for 256). A block's register pool is this times
// its threads.
unsigned launchRegisters(unsigned threads, unsigned minBlocks, const FusionLimits &limits);

// Why `slots` with register budgets `budgets` (one per kernel, setmaxnreg) cannot be a fused block with
// `minBlocks` blocks per SM (none when it can): each kernel's slots must start and end on a warpgroup (128
// threads), and the budgets of all the block's threads must fit the block's register pool.
std::vector<std::string> budgetProblems(const std::vector<SlotKernel> &kernels, const std::vector<unsigned> &slots,
                                        const std::vector<unsigned> &budgets, const FusionLimits &limits,
                                        unsigned minBlocks);
// The most fused blocks per SM (1..32) for which `slots` with `budgets` has no problem at all (neither
// fusionProblems nor budgetProblems); 0 when none.
unsigned budgetBlocks(const std::vector<SlotKernel> &kernels, const std::vector<unsigned> &slots,
                      const std::vector<unsigned> &budgets, const FusionLimits &limits);

// Every feasible slot-count vector (each count >= 1), in lexicographic order.
std::vector<std::vector<unsigned>> feasibleRatios(const std::vector<SlotKernel> &kernels, const FusionLimits &limits);

} // namespace ptb

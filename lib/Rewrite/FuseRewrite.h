// The fuser's rewrite (fuse-kernels; docs/fuse-kernels.md): each chosen kernel gets a *slot function*
// beside it (its body, run by one slot of a fused block: threadIdx/blockDim the slot's, blockIdx/gridDim
// the task's, __syncthreads* on the slot's named barrier, shared memory per slot), and the fused kernels
// are assembled from the slot functions of several translation units.
#pragma once

#include "KernelInventory.h"
#include "LocalIncludes.h"

#include "clang/Frontend/CompilerInstance.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ptb {

extern const char *const kFusedMarker;  // first line of every file fuse-kernels writes

// One kernel to fuse, as the user names it, with the block shape its slots run (the kernel's launch
// block) and the most dynamic shared memory one of its blocks uses (for the feasibility check only).
struct FusionKernelRequest {
  std::string name;        // name or qualified name
  unsigned block[3] = {0, 1, 1};
  uint64_t dynamicShared = 0;
  unsigned threads() const { return block[0] * block[1] * block[2]; }
};

// A kernel ready for fusion: what the fused kernel needs to call its slot function.
struct SlotKernel {
  FusionKernelRequest request;
  std::string name, qualifiedName;
  std::string slotFunction;      // qualified name of the slot function template
  std::string kernelRef;         // qualified name of the original kernel (fallback launches)
  Location loc;
  std::vector<std::string> paramTypes, paramNames;  // types fully qualified (for the fused kernel's signature)
  uint64_t staticShared = 0;     // bytes of __shared__ variables in the kernel (per slot)
  bool tasksIndependent = false;
};

// One input file rewritten for fusion: its text with the slot functions inserted, and the kernels found.
struct FusionFile {
  std::string path;
  std::string text;
  std::vector<SlotKernel> kernels;
  std::vector<LocalInclude> localIncludes;  // quoted #includes found beside the input; offsets in `text`
};

// Finds the requested kernels in the main file of `ctx` and writes their slot functions. Kernels that
// cannot be fused are reported as errors (located, through `ci`'s DiagnosticsEngine) with the reason.
// Requests not defined in this file are ignored (another file may hold them). False on error.
bool prepareFusionFile(clang::CompilerInstance &ci, clang::ASTContext &ctx, const Inventory &inventory,
                       const std::vector<FusionKernelRequest> &requests, FusionFile &out);

// Limits a fused block must respect.
struct FusionLimits {
  unsigned maxThreads = 1024;
  unsigned maxSlots = 15;           // named barriers 1..15 (0 is __syncthreads)
  uint64_t maxShared = 227 * 1024;  // per block, static + dynamic (H100, opt-in)
  uint64_t maxStaticShared = 48 * 1024;  // static __shared__ variables of one kernel (ptxas' limit)
  unsigned maxThreadsPerSm = 2048;       // for candidates asking for several fused blocks per SM
  uint64_t maxSharedPerSm = 228 * 1024;
  unsigned registersPerSm = 65536;
  unsigned minRegisterCap = 32;          // a register cap below this (min blocks per SM) spills too much
};

// Why `slots` (one count per kernel, in order) cannot be a fused block, one message per problem ("" when
// it can).
// With minBlocks > 1 the fused kernel asks for that many resident blocks per SM (__launch_bounds__'
// second argument: the compiler caps registers per thread at registersPerSm / (minBlocks * threads)).
std::vector<std::string> fusionProblems(const std::vector<SlotKernel> &kernels, const std::vector<unsigned> &slots,
                                        const FusionLimits &limits, unsigned minBlocks = 1);
// Every feasible slot-count vector (each count >= 1), in lexicographic order.
std::vector<std::vector<unsigned>> feasibleRatios(const std::vector<SlotKernel> &kernels, const FusionLimits &limits);
std::string ratioString(const std::vector<unsigned> &slots);  // "1:2"

// The fused kernel `name` with `slots[i]` slots of kernels[i], and its launcher `name`_launch.
std::string emitFusedKernel(const std::vector<SlotKernel> &kernels, const std::vector<unsigned> &slots,
                            const std::string &name, unsigned minBlocks = 1);
// A table of the fused kernels written (for a tuning harness): `base`_candidates[].
struct FusedCandidate {
  std::string name;
  std::vector<unsigned> slots;
  unsigned minBlocks = 1;
  std::string label() const;  // "1:2", or "1:2/2" with two blocks per SM asked for
};
std::string emitCandidateTable(const std::vector<SlotKernel> &kernels, const std::string &base,
                               const std::vector<FusedCandidate> &fused);
// The size of a fused block with `slots[i]` slots of kernels[i].
struct FusedShape {
  unsigned threads = 0, slots = 0;
  uint64_t staticShared = 0;   // the slots' __shared__ variables and the runtime's bookkeeping
  uint64_t dynamicShared = 0;  // the slots' dynamic shared memory, each rounded up to 16 bytes
};
FusedShape fusedShape(const std::vector<SlotKernel> &kernels, const std::vector<unsigned> &slots);
// Shared memory (static, per block) of a fused block, without dynamic shared memory.
uint64_t fusedStaticShared(const std::vector<SlotKernel> &kernels, const std::vector<unsigned> &slots);

// ---- What to fuse (command line and JSON config) ----

// One fused output: the kernels (in slot order), the ratios to emit, names and where it goes.
struct FusionJob {
  std::vector<FusionKernelRequest> kernels;
  std::vector<std::vector<unsigned>> ratios;  // explicit ratios; empty with allRatios
  bool allRatios = false;
  std::vector<unsigned> minBlocks = {1};      // fused blocks per SM to ask for, each ratio (--min-blocks)
  std::string name;    // base name of the fused kernels ("" : <k0>__<k1>__fused)
  std::string output;  // "" : standard output
};

// Whether `name` can be a fused kernel's base name (--name, "name" in a batch): a C++ identifier, not a
// keyword, not starting with '_', without "__" and not ending in '_' (the tool derives name_launch,
// name_1_2, ...: they must not be reserved either). False with the reason in `error`.
bool checkFusedName(llvm::StringRef name, std::string &error);

// "128", "32x8", "8x8x4" -> block; "NAME=32x8" or "NAME=256,4096" (with dynamic shared bytes) -> request.
bool parseBlockShape(llvm::StringRef text, unsigned block[3]);
bool parseKernelRequest(llvm::StringRef text, FusionKernelRequest &out, std::string &error);
// "1:2" -> {1, 2}; every count >= 1.
bool parseRatio(llvm::StringRef text, std::vector<unsigned> &out);
// "1:2/2" -> {1, 2} and 2 blocks per SM ("1:2": 1).
bool parseCandidateLabel(llvm::StringRef text, std::vector<unsigned> &slots, unsigned &minBlocks);
// The ratio a tuning harness chose: the first line "winner <ratio>[/<min blocks>]" of its output
// ("winner none": none).
bool ratioFromHarnessOutput(llvm::StringRef text, std::vector<unsigned> &out, std::string &error,
                            unsigned *minBlocks = nullptr);
// A batch: {"fusions": [{"kernels": [{"name": "k", "block": "32x8", "dynamic_shared": 0}, ...],
//                        "ratio": "1:2" | "ratios": ["1:1", "1:2"] | "all_ratios": true,
//                        "name": "...", "output": "..."}]} (docs/fuse-kernels.md).
bool parseFusionConfig(llvm::StringRef json, std::vector<FusionJob> &jobs, std::string &error);

// The whole output of one job: marker, runtime include, each input file's rewritten text (with #line
// back to it), the fused kernels, their launchers and the candidate table. `kernels` in slot order.
// Reports infeasible ratios in `errors` (file:line:col: error: ...) and returns "" then.
std::string assembleFusedOutput(const FusionJob &job, const std::vector<const FusionFile *> &files,
                                const std::vector<SlotKernel> &kernels, const FusionLimits &limits,
                                const std::string &toolVersion, std::vector<std::string> &errors,
                                std::vector<std::string> &notes);

} // namespace ptb

#include "FusedKernelEmitter.h"
#include "Feasibility.h"
#include "FusionJob.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>

namespace ptb {

namespace {
std::string u(unsigned v) { return std::to_string(v) + "u"; }
} // namespace

std::string FusedCandidate::label() const {
  if (!budgets.empty()) return ratioString(slots) + "/" + std::to_string(minBlocks) + "@" + ratioString(budgets);
  return ratioString(slots) + (minBlocks > 1 ? "/" + std::to_string(minBlocks) : "");
}

std::string emitFusedKernel(const std::vector<SlotKernel> &kernels, const std::vector<unsigned> &slots,
                            const std::string &name, unsigned minBlocks, const std::vector<unsigned> &budgets) {
  const bool budgeted = !budgets.empty();
  const FusedShape shape = fusedShape(kernels, slots);
  const unsigned threads = shape.threads, total = shape.slots;
  std::vector<std::string> sig, args, describe;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const SlotKernel &k = kernels[i];
    const auto &b = k.request.block;
    describe.push_back(k.qualifiedName + " x" + std::to_string(slots[i]) + " (" + std::to_string(b[0]) + "x" +
                       std::to_string(b[1]) + "x" + std::to_string(b[2]) + ")");
    for (size_t j = 0; j < k.paramTypes.size(); ++j) {
      std::string pn = "k" + std::to_string(i) + "_" + k.paramNames[j];
      sig.push_back(k.paramTypes[j] + " " + pn);
      args.push_back(pn);
    }
  }
  std::string t;
  t += "\n// Fused kernel " + name + ": " + llvm::join(describe, " + ") + ", " + std::to_string(threads) +
       " threads in " + std::to_string(total) + " slots" +
       (minBlocks > 1 ? ", " + std::to_string(minBlocks) + " blocks per SM asked for" : "") +
       " (fuse-kernels; docs/fuse-kernels.md).\n";
  const FusionLimits limits;
  const unsigned launchRegs = budgeted ? launchRegisters(threads, minBlocks, limits) : 0;
  const unsigned entryRegs = std::min(launchRegs, limits.maxRegistersPerThread);
  if (budgeted) {
    std::vector<std::string> each;
    for (size_t i = 0; i < kernels.size(); ++i)
      each.push_back(std::to_string(budgets[i]) + " for " + kernels[i].qualifiedName);
    t += "// Register budgets (registers per thread): " + llvm::join(each, ", ") +
         ", through setmaxnreg on sm_90a;\n"
         "// launched with " +
         std::to_string(entryRegs) + " per thread (" + std::to_string(minBlocks) + " block" +
         (minBlocks > 1 ? "s" : "") + " per SM), which every slot keeps on other targets.\n";
  }
  std::vector<std::string> kparams = sig;
  for (size_t i = 0; i < kernels.size(); ++i) kparams.push_back("const ::ptb::Launch ptb_launch" + std::to_string(i));
  kparams.push_back("const ::ptb::FusedShared ptb_layout");
  t += "__global__ void __launch_bounds__(" + std::to_string(threads) +
       (minBlocks > 1 || budgeted ? ", " + std::to_string(minBlocks) : "") + ") " + name + "(" +
       llvm::join(kparams, ", ") + ") {\n";
  t += "  extern __shared__ __align__(16) unsigned char ptb_dyn_[];\n";
  t += "  __shared__ ::ptb::SlotShared ptb_slot_[" + std::to_string(total) + "];\n";
  t += "  const unsigned ptb_t = threadIdx.x;\n";
  unsigned first = 0, slot = 0;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const SlotKernel &k = kernels[i];
    const unsigned n = k.request.threads();
    std::vector<std::string> kargs;
    for (const std::string &pn : k.paramNames) kargs.push_back("k" + std::to_string(i) + "_" + pn);
    // With budgets, each kernel's slots are one branch (its warpgroups run one setmaxnreg, then their
    // slots), indented one more level.
    const std::string in = budgeted ? "  " : "";
    if (budgeted) {
      const bool lastKernel = i + 1 == kernels.size();
      const unsigned end = first + slots[i] * n;
      t += std::string(i == 0 ? "  " : " else ") + (lastKernel ? "{\n" : "if (ptb_t < " + u(end) + ") {\n");
      if (budgets[i] != entryRegs) {
        const bool inc = budgets[i] > entryRegs;
        t += "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)  // sm_90a: " + std::to_string(budgets[i]) +
             " registers per thread for these warpgroups (" + (inc ? "taken from" : "given back to") +
             " the block's pool)\n";
        t += "    ::ptb::setmaxnreg_" + std::string(inc ? "inc" : "dec") + "<" + std::to_string(budgets[i]) + ">();\n";
        t += "#endif\n";
      }
    }
    for (unsigned j = 0; j < slots[i]; ++j, ++slot) {
      const unsigned bar = slot + 1, end = first + n;
      const bool last = budgeted ? j + 1 == slots[i] : slot + 1 == total;
      if (budgeted && slots[i] == 1)
        t += "    {\n";
      else
        t += ((budgeted ? j : slot) == 0 ? "  " + in : std::string(" else ")) +
             (last ? "{\n" : "if (ptb_t < " + u(end) + ") {\n");
      std::string local = first ? "ptb_t - " + u(first) : "ptb_t";
      t += in + "    ::ptb::run_slot_tasks<::ptb::TaskSync::" + std::string(k.tasksIndependent ? "none" : "block") +
           ", " + std::to_string(bar) + ", " + std::to_string(n) + ">(ptb_launch" + std::to_string(i) + ", ptb_slot_[" +
           std::to_string(slot) + "], " + local + ", blockIdx.x * " + u(slots[i]) + " + " + u(j) +
           ", [&](const uint3 ptb_block, const dim3 ptb_grid) {\n";
      t += in + "      " + k.slotFunction + "<" + std::to_string(bar) + ", " + std::to_string(n) +
           ">(ptb_block, ptb_grid, ::ptb::slot_thread_index(" + local + ", " + u(k.request.block[0]) + ", " +
           u(k.request.block[1]) + "), dim3(" + u(k.request.block[0]) + ", " + u(k.request.block[1]) + ", " +
           u(k.request.block[2]) + "), ptb_dyn_ + ptb_layout.offset[" + std::to_string(slot) + "]" +
           (kargs.empty() ? "" : ", " + llvm::join(kargs, ", ")) + ");\n";
      t += in + "    });\n  " + in + "}";
      first = end;
    }
    if (budgeted) t += "\n  }";
  }
  t += "\n}\n";
  // The launcher: each kernel's original launch and arguments.
  std::vector<std::string> lparams, parts;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const SlotKernel &k = kernels[i];
    lparams.push_back("const ::ptb::LaunchConfig& ptb_config" + std::to_string(i));
    for (size_t j = 0; j < k.paramTypes.size(); ++j)
      lparams.push_back(k.paramTypes[j] + " k" + std::to_string(i) + "_" + k.paramNames[j]);
    parts.push_back("{ptb_config" + std::to_string(i) + ", dim3(" + u(k.request.block[0]) + ", " +
                    u(k.request.block[1]) + ", " + u(k.request.block[2]) + "), " + u(slots[i]) + "}");
  }
  t += "// Runs the kernels' launches fused; returns false when it ran the original kernels one after the other\n"
       "// instead (launch mode `original`, another block shape, streams that differ, a block that does not fit).\n";
  t += "static inline bool " + name + "_launch(" + llvm::join(lparams, ", ") + ") {\n";
  t += "  const ::ptb::FusedPart ptb_parts[" + std::to_string(kernels.size()) + "] = {" + llvm::join(parts, ", ") +
       "};\n";
  t += "  if (::ptb::launch_fused(reinterpret_cast<const void*>(&" + name + "), ptb_parts" +
       (args.empty() ? "" : ", " + llvm::join(args, ", ")) + ")) return true;\n";
  for (size_t i = 0; i < kernels.size(); ++i) {
    const SlotKernel &k = kernels[i];
    std::vector<std::string> kargs;
    for (const std::string &pn : k.paramNames) kargs.push_back("k" + std::to_string(i) + "_" + pn);
    std::string c = "ptb_config" + std::to_string(i);
    t += "  " + k.kernelRef + "<<<" + c + ".grid, " + c + ".block, " + c + ".shmem, " + c + ".stream>>>(" +
         llvm::join(kargs, ", ") + ");\n";
  }
  t += "  return false;\n}\n";
  return t;
}

std::string emitCandidateTable(const std::vector<SlotKernel> &kernels, const std::string &base,
                               const std::vector<FusedCandidate> &fused) {
  if (fused.empty()) return "";
  std::string t = "\n// The fused kernels of this file, for a tuning harness (fuse-kernels; docs/fuse-kernels.md).\n";
  t += "struct " + base +
       "_candidate {\n  const char* ratio;\n  unsigned threads;\n  const void* kernel;\n  decltype(&" +
       fused.front().name + "_launch) launch;\n};\n";
  t += "static const " + base + "_candidate " + base + "_candidates[] = {\n";
  for (const FusedCandidate &c : fused) {
    t += "    {\"" + c.label() + "\", " + u(fusedShape(kernels, c.slots).threads) +
         ", reinterpret_cast<const void*>(&" + c.name + "), &" + c.name + "_launch},\n";
  }
  t += "};\n";
  return t;
}

std::string emitDecisionLauncher(const std::vector<SlotKernel> &kernels, const std::string &base,
                                 const std::vector<FusedCandidate> &fused, const std::vector<FusionDecision> &decisions,
                                 const std::string &file) {
  const std::string n = std::to_string(kernels.size());
  std::string t =
      "\n// What ran fastest at each problem size the tuning harness measured (fuse-kernels --decisions-from " + file +
      "):\n// each kernel's tasks there, and the kernels fused, in two streams or one after the other.\n";
  t += "static const ::ptb::FusedDecision<" + n + "> " + base + "_decisions[] = {\n";
  for (const FusionDecision &d : decisions) {
    std::vector<std::string> tasks;
    for (unsigned long long v : d.tasks) tasks.push_back(std::to_string(v) + "ull");
    int index = -1;
    const char *choice = "sequential";
    if (d.choice == FusionDecision::Choice::streams) choice = "streams";
    if (d.choice == FusionDecision::Choice::fused) {
      choice = "fused";
      for (size_t i = 0; i < fused.size(); ++i)
        if (fused[i].slots == d.slots && fused[i].minBlocks == d.minBlocks && fused[i].budgets == d.budgets)
          index = static_cast<int>(i);
    }
    t += "    {{" + llvm::join(tasks, ", ") + "}, ::ptb::FusedChoice::" + choice + ", " + std::to_string(index) +
         ", \"" + d.label + "\"}," + (d.measured.empty() ? "" : "  // " + d.measured) + "\n";
  }
  t += "};\n";
  std::vector<std::string> lparams, args, counts;
  std::vector<std::string> launches[2]; // [0]: one after the other; [1]: the last kernel on the side stream
  for (size_t i = 0; i < kernels.size(); ++i) {
    const SlotKernel &k = kernels[i];
    const std::string c = "ptb_config" + std::to_string(i);
    lparams.push_back("const ::ptb::LaunchConfig& " + c);
    args.push_back(c);
    std::vector<std::string> kargs;
    for (size_t j = 0; j < k.paramTypes.size(); ++j) {
      const std::string pn = "k" + std::to_string(i) + "_" + k.paramNames[j];
      lparams.push_back(k.paramTypes[j] + " " + pn);
      args.push_back(pn);
      kargs.push_back(pn);
    }
    counts.push_back("::ptb::grid_tasks(" + c + ".grid)");
    const std::string head = k.kernelRef + "<<<" + c + ".grid, " + c + ".block, " + c + ".shmem, ";
    launches[0].push_back(head + c + ".stream>>>(" + llvm::join(kargs, ", ") + ");\n");
    launches[1].push_back(head + (i + 1 == kernels.size() ? std::string("ptb_side.side()") : c + ".stream") + ">>>(" +
                          llvm::join(kargs, ", ") + ");\n");
  }
  const std::string last = "ptb_config" + std::to_string(kernels.size() - 1);
  t += "// Runs the kernels' launches as the decision of the nearest measured size says (::ptb::nearest_decision):\n"
       "// fused (the candidate's launcher; it falls back to one after the other when the fused kernel cannot take\n"
       "// the launch), in two streams (the last kernel on a side stream ordered after the caller's stream and before\n"
       "// what follows in it, ::ptb::SideStream; configs on different streams keep theirs), or one after the other.\n"
       "// True when a fused kernel ran.\n";
  t += "static inline bool " + base + "_launch(" + llvm::join(lparams, ", ") + ") {\n";
  t += "  const unsigned long long ptb_tasks[" + n + "] = {" + llvm::join(counts, ", ") + "};\n";
  t += "  const ::ptb::FusedDecision<" + n + ">& ptb_d = ::ptb::nearest_decision(" + base + "_decisions, ptb_tasks);\n";
  if (!fused.empty())
    t += "  if (ptb_d.choice == ::ptb::FusedChoice::fused) return " + base + "_candidates[ptb_d.candidate].launch(" +
         llvm::join(args, ", ") + ");\n";
  t += "  if (ptb_d.choice == ::ptb::FusedChoice::streams";
  for (size_t i = 0; i + 1 < kernels.size(); ++i)
    t += " && ptb_config" + std::to_string(i) + ".stream == " + last + ".stream";
  t += ") {\n    const ::ptb::SideStream ptb_side(" + last + ".stream);\n";
  for (const std::string &l : launches[1]) t += "    " + l;
  t += "    return false;\n  }\n";
  for (const std::string &l : launches[0]) t += "  " + l;
  t += "  return false;\n}\n";
  return t;
}

} // namespace ptb

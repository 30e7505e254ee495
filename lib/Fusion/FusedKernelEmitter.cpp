#include "FusedKernelEmitter.h"
#include "Feasibility.h"
#include "FusionJob.h"

#include "llvm/ADT/StringExtras.h"

namespace ptb {

namespace {
std::string u(unsigned v) { return std::to_string(v) + "u"; }
} // namespace

std::string FusedCandidate::label() const {
  return ratioString(slots) + (minBlocks > 1 ? "/" + std::to_string(minBlocks) : "");
}

std::string emitFusedKernel(const std::vector<SlotKernel> &kernels, const std::vector<unsigned> &slots,
                            const std::string &name, unsigned minBlocks) {
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
  std::vector<std::string> kparams = sig;
  for (size_t i = 0; i < kernels.size(); ++i) kparams.push_back("const ::ptb::Launch ptb_launch" + std::to_string(i));
  kparams.push_back("const ::ptb::FusedShared ptb_layout");
  t += "__global__ void __launch_bounds__(" + std::to_string(threads) +
       (minBlocks > 1 ? ", " + std::to_string(minBlocks) : "") + ") " + name + "(" + llvm::join(kparams, ", ") +
       ") {\n";
  t += "  extern __shared__ __align__(16) unsigned char ptb_dyn_[];\n";
  t += "  __shared__ ::ptb::SlotShared ptb_slot_[" + std::to_string(total) + "];\n";
  t += "  const unsigned ptb_t = threadIdx.x;\n";
  unsigned first = 0, slot = 0;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const SlotKernel &k = kernels[i];
    const unsigned n = k.request.threads();
    std::vector<std::string> kargs;
    for (const std::string &pn : k.paramNames) kargs.push_back("k" + std::to_string(i) + "_" + pn);
    for (unsigned j = 0; j < slots[i]; ++j, ++slot) {
      const unsigned bar = slot + 1, end = first + n;
      const bool last = slot + 1 == total;
      t += std::string(slot == 0 ? "  " : " else ") + (last ? "{\n" : "if (ptb_t < " + u(end) + ") {\n");
      std::string local = first ? "ptb_t - " + u(first) : "ptb_t";
      t += "    ::ptb::run_slot_tasks<::ptb::TaskSync::" + std::string(k.tasksIndependent ? "none" : "block") + ", " +
           std::to_string(bar) + ", " + std::to_string(n) + ">(ptb_launch" + std::to_string(i) + ", ptb_slot_[" +
           std::to_string(slot) + "], " + local + ", blockIdx.x * " + u(slots[i]) + " + " + u(j) +
           ", [&](const uint3 ptb_block, const dim3 ptb_grid) {\n";
      t += "      " + k.slotFunction + "<" + std::to_string(bar) + ", " + std::to_string(n) +
           ">(ptb_block, ptb_grid, ::ptb::slot_thread_index(" + local + ", " + u(k.request.block[0]) + ", " +
           u(k.request.block[1]) + "), dim3(" + u(k.request.block[0]) + ", " + u(k.request.block[1]) + ", " +
           u(k.request.block[2]) + "), ptb_dyn_ + ptb_layout.offset[" + std::to_string(slot) + "]" +
           (kargs.empty() ? "" : ", " + llvm::join(kargs, ", ")) + ");\n";
      t += "    });\n  }";
      first = end;
    }
  }
  t += "\n}\n";
  // The launcher: each kernel's original launch and arguments.
  std::vector<std::string> lparams, parts;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const SlotKernel &k = kernels[i];
    lparams.push_back("const ::ptb::LaunchConfig& ptb_config" + std::to_string(i));
    for (size_t j = 0; j < k.paramTypes.size(); ++j)
      lparams.push_back(k.paramTypes[j] + " k" + std::to_string(i) + "_" + k.paramNames[j]);
    parts.push_back("{ptb_config" + std::to_string(i) + ", dim3(" + u(k.request.block[0]) + ", " + u(k.request.block[1]) +
                    ", " + u(k.request.block[2]) + "), " + u(slots[i]) + "}");
  }
  t += "// Runs the kernels' launches fused; returns false when it ran the original kernels one after the other\n"
       "// instead (launch mode `original`, another block shape, streams that differ, a block that does not fit).\n";
  t += "static inline bool " + name + "_launch(" + llvm::join(lparams, ", ") + ") {\n";
  t += "  const ::ptb::FusedPart ptb_parts[" + std::to_string(kernels.size()) + "] = {" + llvm::join(parts, ", ") + "};\n";
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
  t += "struct " + base + "_candidate {\n  const char* ratio;\n  unsigned threads;\n  const void* kernel;\n  decltype(&" +
       fused.front().name + "_launch) launch;\n};\n";
  t += "static const " + base + "_candidate " + base + "_candidates[] = {\n";
  for (const FusedCandidate &c : fused) {
    t += "    {\"" + c.label() + "\", " + u(fusedShape(kernels, c.slots).threads) + ", reinterpret_cast<const void*>(&" + c.name + "), &" + c.name +
         "_launch},\n";
  }
  t += "};\n";
  return t;
}

} // namespace ptb

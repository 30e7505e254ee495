#include "FusedOutput.h"
#include "FileSelection.h"
#include "FusedKernelEmitter.h"
#include "GeneratedMarkers.h"
#include "SourceText.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"

#include <fmt/core.h>

#include <algorithm>
#include <tuple>

namespace ptb {

bool resolveJobKernels(const FusionJob &job, const std::vector<FusionFile> &files, std::vector<SlotKernel> &kernels,
                       std::vector<const FusionFile *> &used, std::vector<Diagnostic> &diagnostics) {
  bool ok = true;
  auto error = [&](const std::string &message) {
    diagnostics.push_back({clang::DiagnosticsEngine::Error, "", 0, 0, message});
    ok = false;
  };
  for (const FusionKernelRequest &r : job.kernels) {
    const FusionFile *holder = nullptr;
    SlotKernel found;
    for (const FusionFile &f : files)
      for (const SlotKernel &k : f.kernels)
        if (k.request.name == r.name) {
          if (holder && holder != &f)
            error("kernel '" + r.name + "' is defined in both " + holder->path + " and " + f.path);
          holder = &f;
          found = k;
        }
    if (!holder) {
      error("no kernel named '" + r.name + "' in the input files");
      continue;
    }
    found.request = r;
    kernels.push_back(found);
    if (std::find(used.begin(), used.end(), holder) == used.end()) used.push_back(holder);
  }
  return ok;
}

std::optional<std::string> assembleFusedOutput(const FusionJob &job, const std::vector<const FusionFile *> &files,
                                               const std::vector<SlotKernel> &kernels, const FusionLimits &limits,
                                               const std::string &toolVersion, std::vector<Diagnostic> &diagnostics) {
  // Errors are located at the first kernel (where the fused kernels' #line points).
  bool failed = false;
  auto error = [&](const std::string &message) {
    const Location &at = kernels.front().loc;
    diagnostics.push_back({clang::DiagnosticsEngine::Error, at.file, at.line, at.column, message});
    failed = true;
  };
  std::string base = job.name;
  if (base.empty()) {
    std::vector<std::string> names;
    for (const SlotKernel &k : kernels) names.push_back(k.name);
    base = llvm::join(names, "__") + "__fused";
  }
  // The candidates: every ratio with every number of blocks per SM asked for, then the ones with register
  // budgets. Explicit ones must be feasible; with --all-ratios the infeasible ones are left out.
  auto candidateProblems = [&](const FusedCandidate &c) {
    std::vector<std::string> problems = fusionProblems(kernels, c.slots, limits, c.minBlocks);
    if (!c.budgets.empty())
      for (const std::string &p : budgetProblems(kernels, c.slots, c.budgets, limits, c.minBlocks))
        problems.push_back(p);
    return problems;
  };
  auto candidateName = [&](const FusedCandidate &c, bool several) {
    std::string name = base;
    if (!several) return name;
    for (unsigned s : c.slots) name += "_" + std::to_string(s);
    if (c.minBlocks > 1) name += "_mb" + std::to_string(c.minBlocks);
    if (!c.budgets.empty()) {
      name += "_r";
      for (size_t i = 0; i < c.budgets.size(); ++i) name += (i ? "_" : "") + std::to_string(c.budgets[i]);
    }
    return name;
  };
  std::vector<FusedCandidate> candidates;
  std::vector<FusionDecision> decisions = job.decisions; // with the blocks per SM of budgeted ones resolved
  if (!job.decisions.empty()) {
    // --decisions-from: the fused decisions' candidates, each once, in the candidate table's usual order
    // (ratio, then blocks per SM); each must be feasible (an error at its decide line).
    for (FusionDecision &d : decisions) {
      if (d.choice != FusionDecision::Choice::fused) continue;
      if (d.minBlocks == 0) d.minBlocks = std::max(1u, budgetBlocks(kernels, d.slots, d.budgets, limits));
      FusedCandidate c;
      c.slots = d.slots;
      c.minBlocks = d.minBlocks;
      c.budgets = d.budgets;
      if (std::any_of(candidates.begin(), candidates.end(), [&](const FusedCandidate &e) { return e.sameKernel(c); }))
        continue;
      std::vector<std::string> problems = candidateProblems(c);
      for (const std::string &p : problems)
        diagnostics.push_back({clang::DiagnosticsEngine::Error, job.decisionsFile, d.line, d.column,
                               "ratio " + c.label() + " cannot be fused: " + p});
      if (!problems.empty()) {
        failed = true;
        continue;
      }
      c.name = candidateName(c, true);
      candidates.push_back(c);
    }
    std::sort(candidates.begin(), candidates.end(), [](const FusedCandidate &a, const FusedCandidate &b) {
      return std::tie(a.slots, a.minBlocks, a.budgets) < std::tie(b.slots, b.minBlocks, b.budgets);
    });
  }
  std::vector<std::vector<unsigned>> ratios = !job.decisions.empty() ? std::vector<std::vector<unsigned>>{}
                                              : job.allRatios        ? feasibleRatios(kernels, limits)
                                                                     : job.ratios;
  const bool budgetsOnly = job.decisions.empty() && !job.plain;
  if (ratios.empty() && job.decisions.empty() && !budgetsOnly)
    error("no ratio of these kernels fits one block: " +
          llvm::join(fusionProblems(kernels, std::vector<unsigned>(kernels.size(), 1), limits), "; "));
  // Register budgets (--reg-budget): for one ratio, or for each ratio of the job; the blocks per SM asked
  // for, or the most the budgets allow.
  std::vector<FusedCandidate> budgeted;
  if (job.decisions.empty())
    for (const RegisterBudget &b : job.budgets) {
      const bool explicitRatio = !b.slots.empty() || !job.allRatios;
      const std::vector<std::vector<unsigned>> forRatios =
          b.slots.empty() ? ratios : std::vector<std::vector<unsigned>>{b.slots};
      const std::string what =
          b.slots.empty() ? ratioString(b.registers) : ratioString(b.slots) + "@" + ratioString(b.registers);
      if (!b.fits(kernels.size())) {
        error("register budgets " + what + " do not give one count per kernel (" + std::to_string(kernels.size()) +
              ")");
        continue;
      }
      size_t fitting = 0;
      std::vector<std::string> firstProblems;
      for (const auto &r : forRatios) {
        FusedCandidate c;
        c.slots = r;
        c.budgets = b.registers;
        c.minBlocks = b.minBlocks ? b.minBlocks : budgetBlocks(kernels, r, b.registers, limits);
        std::vector<std::string> problems =
            c.minBlocks ? candidateProblems(c) : budgetProblems(kernels, r, b.registers, limits, 1);
        if (!c.minBlocks && problems.empty()) problems = fusionProblems(kernels, r, limits, 1);
        if (!problems.empty()) {
          if (explicitRatio)
            for (const std::string &p : problems)
              error("ratio " + ratioString(r) + (b.minBlocks ? "/" + std::to_string(b.minBlocks) : "") + "@" +
                    ratioString(b.registers) + " cannot be fused: " + p);
          else if (firstProblems.empty())
            firstProblems = problems, firstProblems.insert(firstProblems.begin(), ratioString(r));
          continue;
        }
        ++fitting;
        if (std::none_of(budgeted.begin(), budgeted.end(), [&](const FusedCandidate &e) { return e.sameKernel(c); }))
          budgeted.push_back(c);
      }
      if (!explicitRatio && fitting == 0)
        error("register budgets " + what + " fit no ratio of these kernels" +
              (firstProblems.empty()
                   ? std::string()
                   : " (ratio " + firstProblems[0] + ": " +
                         llvm::join(std::vector<std::string>(firstProblems.begin() + 1, firstProblems.end()), "; ") +
                         ")"));
    }
  const size_t plainCount = job.plain ? ratios.size() * job.minBlocks.size() : 0;
  const bool several = plainCount + budgeted.size() > 1 || job.allRatios;
  if (job.plain)
    for (const auto &r : ratios)
      for (unsigned m : job.minBlocks) {
        FusedCandidate c;
        c.slots = r;
        c.minBlocks = m;
        auto problems = fusionProblems(kernels, r, limits, m);
        if (!problems.empty()) {
          if (!job.allRatios)
            for (const std::string &p : problems) error("ratio " + c.label() + " cannot be fused: " + p);
          continue;
        }
        c.name = candidateName(c, several);
        candidates.push_back(c);
      }
  for (FusedCandidate &c : budgeted) {
    c.name = candidateName(c, several);
    candidates.push_back(c);
  }
  if (failed) return std::nullopt;

  std::vector<std::string> sources;
  for (const FusionFile *f : files) sources.push_back(llvm::sys::path::filename(f->path).str());
  std::string out = std::string(kFusedMarker) + " " + toolVersion + " from " + llvm::join(sources, ", ") +
                    "; edit the originals, not this file (docs/fuse-kernels.md).\n#include \"ptb/ptb.cuh\"\n";
  for (const FusionFile *f : files) {
    // Quoted #includes found beside the input point at their files from the output's directory (with
    // the output on stdout, where it goes is not known: they stay).
    std::string relocated = f->text;
    if (!job.output.empty()) {
      std::string includerDir = llvm::sys::path::parent_path(absolutePath(f->path)).str();
      std::string outputDir = llvm::sys::path::parent_path(absolutePath(job.output)).str();
      for (auto it = f->localIncludes.rbegin(); it != f->localIncludes.rend(); ++it) {
        std::string name = relocatedInclude(*it, includerDir, outputDir);
        if (!name.empty()) relocated.replace(it->offset, it->length, name);
      }
    }
    // A UTF-8 byte-order mark can only be first in a file: dropped (nvcc rejects one anywhere else).
    llvm::StringRef text = relocated;
    text.consume_front("\xEF\xBB\xBF");
    out += "#line 1 \"" + quoteForLineDirective(f->path) + "\"\n" + text.str();
    if (!f->text.empty() && f->text.back() != '\n') out += "\n";
  }
  for (const FusedCandidate &c : candidates) {
    const std::vector<unsigned> &r = c.slots;
    out += "#line " + std::to_string(kernels.front().loc.line) + " \"" +
           quoteForLineDirective(kernels.front().loc.file) + "\"";
    out += emitFusedKernel(kernels, r, c.name, c.minBlocks, c.budgets);
    const FusedShape f = fusedShape(kernels, r);
    std::string registers = c.minBlocks > 1
                                ? fmt::format("at most {} per thread ({} blocks per SM asked for)",
                                              limits.registersPerSm / (c.minBlocks * f.threads) / 8 * 8, c.minBlocks)
                                : std::string("see the harness or nvcc -Xptxas -v");
    if (!c.budgets.empty()) {
      std::vector<std::string> each;
      for (size_t i = 0; i < kernels.size(); ++i)
        each.push_back(fmt::format("{} for {}'s slots", c.budgets[i], kernels[i].qualifiedName));
      const unsigned launch = std::min(launchRegisters(f.threads, c.minBlocks, limits), limits.maxRegistersPerThread);
      registers = fmt::format("{} on sm_90a (setmaxnreg); launched with {} per thread, {} block{} per SM asked for, "
                              "which every slot keeps on other targets",
                              llvm::join(each, ", "), launch, c.minBlocks, c.minBlocks > 1 ? "s" : "");
    }
    diagnostics.push_back(
        {clang::DiagnosticsEngine::Note, "", 0, 0,
         fmt::format("{}: ratio {}, {} threads, {} slots; shared memory per block: {} B static "
                     "(slots' variables and bookkeeping) + {} B dynamic; registers: {}",
                     c.name, c.label(), f.threads, f.slots, f.staticShared, f.dynamicShared, registers)});
  }
  out += emitCandidateTable(kernels, base, candidates);
  if (!job.decisions.empty()) {
    out +=
        emitDecisionLauncher(kernels, base, candidates, decisions, llvm::sys::path::filename(job.decisionsFile).str());
    unsigned counts[3] = {0, 0, 0};
    for (const FusionDecision &d : job.decisions) ++counts[static_cast<int>(d.choice)];
    diagnostics.push_back({clang::DiagnosticsEngine::Note, "", 0, 0,
                           fmt::format("{}_launch: decides by problem size between {} measured sizes ({} fused, {} "
                                       "two streams, {} sequential)",
                                       base, job.decisions.size(), counts[2], counts[1], counts[0])});
  }
  return out;
}

} // namespace ptb

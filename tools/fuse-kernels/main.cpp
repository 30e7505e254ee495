// fuse-kernels: Tacker-style fusion of Tensor-Core and CUDA-Core kernels into one PTB kernel whose block
// holds slots of each (docs/fuse-kernels.md). Options and output only; the work is in lib/Fusion.
#include "DependencyFile.h"
#include "Diagnostics.h"
#include "FusedOutput.h"
#include "FusionJob.h"
#include "GeneratedMarkers.h"
#include "InventoryFormat.h"
#include "SlotRewriter.h"
#include "ToolMain.h"
#include "ToolRunner.h"
#include "TranslationUnitInventory.h"
#include "TunerOutput.h"

#include "clang/Basic/Version.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/core.h>

#include <algorithm>
#include <optional>
#include <set>

namespace {
// An error of the command line, or of the file `file` the tool read.
void printError(const std::string &message, const std::string &file = "") {
  ptb::print(llvm::errs(), {clang::DiagnosticsEngine::Error, file, 0, 0, message});
}

llvm::Expected<std::string> readFile(const std::string &path) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf) return llvm::createStringError(buf.getError(), path + ": " + buf.getError().message());
  return (*buf)->getBuffer().str();
}

llvm::Expected<std::vector<ptb::FusionJob>> readFusionConfig(const std::string &path) {
  llvm::Expected<std::string> text = readFile(path);
  if (!text) return text.takeError();
  return ptb::parseFusionConfig(*text);
}
} // namespace

namespace {

int toolMain(int argc, char **argv) {
  std::vector<std::string> toolArgs, compilerArgs;
  ptb::splitAtDashDash(argc, argv, toolArgs, compilerArgs);
  CLI::App app{"fuse-kernels: fuse kernels (a Tensor-Core and a CUDA-Core one) into one PTB kernel whose block holds "
               "slots of each, synchronized by named barriers (" +
               ptb::documentationPage(argv[0], "fuse-kernels.md") +
               ").\nExit codes: 0 done, 1 an error in the input (nothing written), 2 a usage error."};
  app.set_version_flag("--version", fmt::format("fuse-kernels {} (clang {})", PTB_VERSION, CLANG_VERSION_STRING));
  app.name("fuse-kernels");
  ptb::ParseRequest req;
  std::vector<std::string> kernelSpecs;
  std::string ratio, ratioFrom, decisionsFrom, name, output, config, dependencyFile, format = "text";
  bool allRatios = false, listKernels = false;
  ptb::FusionLimits limits;
  ptb::addParseOptions(app, req);
  app.add_option("--kernel", kernelSpecs,
                 "A kernel to fuse, in slot order: NAME=BLOCK[,DYNAMIC_SHARED_BYTES], e.g. gemm=128 stencil=32x8");
  app.add_option("--ratio", ratio, "Slots of each kernel per fused block, e.g. 1:2 (1:2/2: ask for 2 blocks per SM)");
  std::vector<unsigned> minBlocks;
  app.add_option("--min-blocks", minBlocks,
                 "Fused blocks per SM to ask for (__launch_bounds__, caps registers); with several values, one "
                 "kernel per ratio and value (default 1)")
      ->delimiter(',')
      ->check(CLI::Range(1, 32));
  std::vector<std::string> regBudgets;
  app.add_option("--reg-budget", regBudgets,
                 "Also write candidates whose kernels' slots run with their own registers per thread on sm_90a "
                 "(setmaxnreg): R:R (one count per kernel, for every ratio) or A:B[/BLOCKS]@R:R (one ratio); "
                 "fuse-kernels.md, \"Register budgets\"")
      ->delimiter(',');
  app.add_flag("--all-ratios", allRatios, "Emit every feasible ratio (and a candidate table for tuning/fusion_tune)");
  app.add_option("--ratio-from", ratioFrom, "Take the ratio from a tuning harness's output (its 'winner a:b' line)");
  app.add_option("--decisions-from", decisionsFrom,
                 "Take the candidates and a per-problem-size decision (fused, two streams or one after the other) "
                 "from a tuning harness's output (its 'decide' lines); name_launch then decides per launch");
  app.add_option("--name", name, "Base name of the fused kernel (default <kernel>__<kernel>__fused)");
  app.add_option("-o", output, "Output file (default: standard output)");
  app.add_option("--config", config, "JSON batch of fusions (docs/fuse-kernels.md); each names its output");
  app.add_option("--dependency-file", dependencyFile,
                 "Also write a Make-style dependency file: the outputs, then every file the parse read (for "
                 "CMake's DEPFILE, Ninja, Make)");
  app.add_option("--max-shared", limits.maxShared, "Shared memory one block may use, bytes (default: 232448, H100)")
      ->check(CLI::Validator(
          [](std::string &v) {
            // CLI11 reads "-5" into an unsigned option as a huge number: only digits are a number of bytes.
            return !v.empty() && v.find_first_not_of("0123456789") == std::string::npos
                       ? std::string()
                       : "'" + v + "' is not a number of bytes (0, 1, 2, ...)";
          },
          "BYTES"));
  app.add_flag("--list-kernels", listKernels, "Print the inventory of the kernels instead of fusing");
  app.add_option("--format", format, "Inventory format: text or json")->check(CLI::IsMember({"text", "json"}));
  if (int rc = ptb::parseCommandLine(app, toolArgs); rc >= 0) return rc;
  req.argsAfterDashDash = compilerArgs;
  if (!ptb::readInputs(req)) {
    llvm::errs() << "fuse-kernels: nothing written (errors above)\n";
    return 1;
  }

  if (listKernels) {
    std::vector<ptb::Inventory> inventories;
    bool ok = ptb::forEachTranslationUnit(req, [&](clang::CompilerInstance &, clang::ASTContext &ctx) {
      inventories.push_back(ptb::analyzeTranslationUnit(ctx));
    });
    if (!ok) return 1;
    llvm::outs() << (format == "json" ? ptb::formatInventoryJson(inventories) : ptb::formatInventoryText(inventories));
    return 0;
  }

  // What to fuse.
  std::vector<ptb::FusionJob> jobs;
  if (!config.empty()) {
    if (!kernelSpecs.empty() || !ratio.empty() || allRatios || !ratioFrom.empty() || !decisionsFrom.empty()) {
      printError("--config replaces --kernel, --ratio, --all-ratios, --ratio-from and --decisions-from");
      return 2;
    }
    llvm::Expected<std::vector<ptb::FusionJob>> parsed = readFusionConfig(config);
    if (!parsed) {
      printError(llvm::toString(parsed.takeError()), config);
      return 2;
    }
    jobs = std::move(*parsed);
  } else {
    ptb::FusionJob job;
    for (const std::string &s : kernelSpecs) {
      llvm::Expected<ptb::FusionKernelRequest> r = ptb::parseKernelRequest(s);
      if (!r) {
        printError("--kernel " + llvm::toString(r.takeError()));
        return 2;
      }
      job.kernels.push_back(*r);
    }
    if (job.kernels.size() < 2) {
      printError("name at least two kernels with --kernel NAME=BLOCK (or use --config)");
      return 2;
    }
    if ((!ratio.empty()) + allRatios + (!ratioFrom.empty()) + (!decisionsFrom.empty()) != 1) {
      printError("give exactly one of --ratio, --all-ratios, --ratio-from and --decisions-from");
      return 2;
    }
    if (!decisionsFrom.empty()) {
      if (job.kernels.size() != 2) {
        printError("--decisions-from fuses two kernels (the harness measures pairs)");
        return 2;
      }
      if (!minBlocks.empty()) {
        printError("--decisions-from takes the blocks per SM from the decisions; leave out --min-blocks");
        return 2;
      }
      if (!regBudgets.empty()) {
        printError("--decisions-from takes the register budgets from the decisions; leave out --reg-budget");
        return 2;
      }
      llvm::Expected<std::string> text = readFile(decisionsFrom);
      if (!text) {
        printError(llvm::toString(text.takeError()), decisionsFrom);
        return 1;
      }
      std::vector<std::string> names;
      for (const ptb::FusionKernelRequest &k : job.kernels) names.push_back(k.name);
      ptb::Diagnostic error;
      if (!ptb::decisionsFromHarnessOutput(*text, decisionsFrom, names, job.decisions, error)) {
        ptb::print(llvm::errs(), error);
        llvm::errs() << "fuse-kernels: nothing written (errors above)\n";
        return 1;
      }
      job.decisionsFile = decisionsFrom;
    }
    if (!ratioFrom.empty()) {
      llvm::Expected<std::string> text = readFile(ratioFrom);
      llvm::Expected<std::string> winner = text ? ptb::winnerFromHarnessOutput(*text) : text.takeError();
      if (!winner) {
        printError(llvm::toString(winner.takeError()), ratioFrom);
        return 1;
      }
      ratio = *winner; // read as --ratio below
    }
    if (!minBlocks.empty()) job.minBlocks = minBlocks;
    if (!ratio.empty()) {
      std::vector<unsigned> r, b;
      unsigned m = 1;
      if (!ptb::parseCandidateLabel(ratio, r, m, b) || r.size() != job.kernels.size()) {
        printError("--ratio '" + ratio +
                   "' must give one slot count (1..15) per kernel, like 1:2 (or 1:2/2 with "
                   "blocks per SM, or 1:2@112:32 with register budgets)");
        return 2;
      }
      if (!b.empty()) {
        // One candidate with register budgets, and none without.
        if (!minBlocks.empty()) {
          printError("--ratio '" + ratio +
                     "' has register budgets: give its blocks per SM in it (1:2/2@112:32), not "
                     "with --min-blocks");
          return 2;
        }
        job.plain = false;
        job.budgets.push_back({r, m, b});
      } else {
        if (ratio.find('/') != std::string::npos) job.minBlocks = {m};
        job.ratios.push_back(r);
      }
    }
    for (const std::string &item : regBudgets) {
      llvm::Expected<ptb::RegisterBudget> b = ptb::parseRegisterBudget(item);
      if (!b) {
        printError("--reg-budget " + llvm::toString(b.takeError()));
        return 2;
      }
      if (!b->fits(job.kernels.size())) {
        printError("--reg-budget '" + item + "' must give one register count per kernel (" +
                   std::to_string(job.kernels.size()) + ")");
        return 2;
      }
      if (b->slots.empty() && job.ratios.empty() && !allRatios) {
        printError("--reg-budget '" + item +
                   "' is for every ratio of the job, and --ratio already has register "
                   "budgets; give A:B@R:R");
        return 2;
      }
      job.budgets.push_back(*b);
    }
    job.allRatios = allRatios;
    if (!name.empty())
      if (llvm::Error e = ptb::checkFusedName(name)) {
        printError("--name " + llvm::toString(std::move(e)));
        return 2;
      }
    job.name = name;
    job.output = output;
    jobs.push_back(job);
  }
  if (!dependencyFile.empty() && std::any_of(jobs.begin(), jobs.end(), [](auto &j) { return j.output.empty(); })) {
    printError("--dependency-file needs every fused output written to a file (-o FILE, or \"output\" in --config)");
    return 2;
  }
  std::set<std::string> outputs;
  for (const ptb::FusionJob &j : jobs)
    if (!outputs.insert(j.output).second) {
      printError("two fusions write to " + (j.output.empty() ? std::string("standard output") : j.output) +
                 "; give each its own \"output\"");
      return 2;
    }

  // Parse every file once; prepare the slot functions of every kernel any job names.
  const std::vector<ptb::FusionKernelRequest> all = ptb::distinctKernels(jobs);
  if (ptb::reportGeneratedInputs(
          req, {{ptb::kFusedMarker, "this file was written by fuse-kernels; fuse the original sources instead"},
                {ptb::kGeneratedMarker, "this file was written by ptb-transform; fuse the original sources "
                                        "instead"}})) {
    llvm::errs() << "fuse-kernels: nothing written (errors above)\n";
    return 1;
  }
  std::vector<ptb::ReadFile> reads; // no output may replace them
  for (const std::string &f : req.files) reads.push_back({f, "the input"});
  if (!config.empty()) reads.push_back({config, "the --config file"});
  if (!ratioFrom.empty()) reads.push_back({ratioFrom, "the --ratio-from file"});
  if (!decisionsFrom.empty()) reads.push_back({decisionsFrom, "the --decisions-from file"});
  std::vector<ptb::FusionFile> files;
  bool ok = ptb::forEachTranslationUnit(req, [&](clang::CompilerInstance &ci, clang::ASTContext &ctx) {
    ptb::addFilesRead(ci.getSourceManager(), reads);
    ptb::FusionFile f;
    if (ptb::prepareFusionFile(ci, ctx, ptb::analyzeTranslationUnit(ctx), all, f)) files.push_back(std::move(f));
  });
  if (!ok) {
    llvm::errs() << "fuse-kernels: nothing written (errors above)\n";
    return 1;
  }

  std::vector<ptb::OutputFile> written;
  std::string toStdout;
  bool failed = false;
  for (const ptb::FusionJob &job : jobs) {
    std::vector<ptb::SlotKernel> kernels;
    std::vector<const ptb::FusionFile *> used;
    std::vector<ptb::Diagnostic> diagnostics;
    if (!ptb::resolveJobKernels(job, files, kernels, used, diagnostics)) failed = true;
    std::optional<std::string> text;
    if (!failed) text = ptb::assembleFusedOutput(job, used, kernels, limits, PTB_VERSION, diagnostics);
    for (const ptb::Diagnostic &d : diagnostics) ptb::print(llvm::errs(), d);
    if (!text) {
      failed = true;
      continue;
    }
    if (job.output.empty())
      toStdout = *text;
    else
      written.push_back(
          {job.output, *text,
           config.empty() ? "the fused output" : "the output of fusions[" + std::to_string(&job - jobs.data()) + "]",
           ""});
  }
  if (failed) {
    llvm::errs() << "fuse-kernels: nothing written (errors above)\n";
    return 1;
  }
  if (!dependencyFile.empty()) {
    std::vector<std::string> targets, read;
    for (const ptb::OutputFile &f : written) targets.push_back(f.path);
    for (const ptb::ReadFile &r : reads) read.push_back(r.path);
    written.push_back({dependencyFile, ptb::dependencyRule(targets, req.files, read), "the --dependency-file", ""});
  }
  if (llvm::Error e = ptb::writeOutputs(written, reads)) {
    ptb::print(llvm::errs(), std::move(e));
    return 1;
  }
  llvm::outs() << toStdout;
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  return ptb::runGuarded("fuse-kernels", [&] { return toolMain(argc, argv); });
}

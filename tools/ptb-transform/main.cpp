// ptb-transform: rewrites CUDA kernels into persistent-thread-block twins gated by %smid, and their
// launches into calls of the PTB runtime. Options and output only; the work is in lib/.
#include "DependencyFile.h"
#include "Diagnostics.h"
#include "GeneratedMarkers.h"
#include "InventoryFormat.h"
#include "PtbRewrite.h"
#include "ToolMain.h"
#include "ToolRunner.h"
#include "TranslationUnitInventory.h"

#include "clang/Basic/Version.h"
#include "clang/Tooling/ReplacementsYaml.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/YAMLTraits.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/core.h>

namespace {

int toolMain(int argc, char **argv) {
  std::vector<std::string> toolArgs, compilerArgs;
  ptb::splitAtDashDash(argc, argv, toolArgs, compilerArgs);

  const std::string generatedCode = ptb::documentationPage(argv[0], "generated-code.md");
  CLI::App app{"ptb-transform: make CUDA kernels persistent-thread-block (PTB) workers gated by %smid,\n"
               "and send their launches to the PTB runtime (what is written: " +
               generatedCode +
               ").\n"
               "Exit codes: 0 done, 1 an error in the input (nothing written), 2 a usage error."};
  app.set_version_flag("--version", fmt::format("ptb-transform {} (clang {})", PTB_VERSION, CLANG_VERSION_STRING));
  app.name("ptb-transform");
  ptb::ParseRequest req;
  std::string output, outputDir, exportFixes, dependencyFile, format = "text";
  bool inPlace = false, listKernels = false;
  ptb::RewriteOptions opts;
  ptb::addParseOptions(app, req);
  app.add_option("-o", output, "Output file (one input only; '-' for stdout)");
  app.add_option("--output-dir", outputDir, "Write each output as <dir>/<input file name>");
  app.add_flag("-i", inPlace, "Rewrite the inputs in place (only when every file succeeds)");
  app.add_option("--kernels", opts.kernelFilter, "Only kernels whose name or qualified name matches this regex");
  app.add_flag("--list-kernels", listKernels, "Print the kernel inventory instead of rewriting");
  app.add_option("--format", format, "Inventory format: text or json")->check(CLI::IsMember({"text", "json"}));
  app.add_option("--export-fixes", exportFixes, "Also write the edits as clang-apply-replacements YAML");
  app.add_option("--dependency-file", dependencyFile,
                 "Also write a Make-style dependency file: the outputs, then every file the parse read (for "
                 "CMake's DEPFILE, Ninja, Make)");
  app.add_flag("--strict", opts.strict, "Kernels or launches that cannot be rewritten are errors");
  app.add_flag("--twins-apart", opts.twinsApart,
               "Also write <output>.twins.cu, which compiles the twins into a module of their own (compile and "
               "link it with the output): launches that run the original kernels never load the twins "
               "(" +
                   generatedCode + ", \"Twins apart\")");
  bool quiet = false, verbose = false;
  app.add_flag("--quiet", quiet, "Print only warnings and errors (no line per file written, no remarks)");
  app.add_flag("--verbose", verbose, "Also print a line for each included file that needed no change");
  std::string headerFilter;
  auto *headerFilterOpt = app.add_option(
      "--header-filter", headerFilter,
      "Regex of the included files to transform with the input (searched in their absolute paths; '' for "
      "none). Default: the files under the input's directory. System and CUDA headers never are");
  if (int rc = ptb::parseCommandLine(app, toolArgs); rc >= 0) return rc;
  req.argsAfterDashDash = compilerArgs;
  if (headerFilterOpt->count()) req.headerFilter = headerFilter;
  opts.toolVersion = PTB_VERSION;
  opts.quiet = quiet;
  if (quiet && verbose) {
    llvm::errs() << "error: choose one of --quiet and --verbose\n";
    return 2;
  }

  int destinations = !output.empty() + !outputDir.empty() + inPlace;
  if (!listKernels && destinations > 1) {
    llvm::errs() << "error: choose one of -o, --output-dir and -i\n";
    return 2;
  }
  if (!dependencyFile.empty() && (listKernels || (output.empty() && outputDir.empty() && !inPlace) || output == "-")) {
    llvm::errs() << "error: --dependency-file needs outputs written to files (-o FILE, --output-dir or -i)\n";
    return 2;
  }
  if (opts.twinsApart && (listKernels || inPlace || (output.empty() && outputDir.empty()) || output == "-")) {
    llvm::errs() << "error: --twins-apart needs outputs written to files (-o FILE or --output-dir)\n";
    return 2;
  }
  if (!listKernels && !output.empty() && output != "-" && req.files.size() > 1) {
    llvm::errs() << "error: -o takes one input file; use --output-dir or -i for several\n";
    return 2;
  }
  if (!listKernels && req.files.size() > 1 && (destinations == 0 || output == "-")) {
    llvm::errs() << "error: " << req.files.size()
                 << " inputs and one standard output: their outputs would run together; use --output-dir or -i\n";
    return 2;
  }

  if (!ptb::readInputs(req)) {
    llvm::errs() << "ptb-transform: nothing written (errors above)\n";
    return 1;
  }
  if (!listKernels &&
      ptb::reportGeneratedInputs(
          req, {{ptb::kGeneratedMarker,
                 "this file was already transformed by ptb-transform; transform the original source instead"},
                {ptb::kFusedMarker, "this file was written by fuse-kernels; transform the original sources "
                                    "instead"}})) {
    llvm::errs() << "ptb-transform: nothing written (errors above)\n";
    return 1;
  }

  // A large input parses for seconds (a 20 MB source: about 13 s) with nothing on the screen: say so first.
  constexpr uint64_t kLargeInput = 8ull << 20;
  for (const std::string &f : req.files) {
    uint64_t size = 0;
    if (!quiet && !llvm::sys::fs::file_size(f, size) && size >= kLargeInput)
      llvm::errs() << fmt::format("ptb-transform: {}: {} MiB to parse; this takes a few seconds per 10 MiB\n", f,
                                  size >> 20);
  }

  std::vector<ptb::Inventory> inventories;
  std::vector<ptb::RewriteResult> results;
  std::vector<ptb::ReadFile> reads; // no output may replace them (-i: but its own input)
  for (const std::string &f : req.files) reads.push_back({f, "the input"});
  bool rewriteFailed = false;
  if (inPlace)
    opts.layout = {ptb::OutputLayout::Mode::InPlace, ""};
  else if (!outputDir.empty())
    opts.layout = {ptb::OutputLayout::Mode::Directory, outputDir};
  else if (!output.empty())
    opts.layout = {ptb::OutputLayout::Mode::File, output};
  bool parsed = ptb::forEachTranslationUnit(
      req, [&](clang::CompilerInstance &ci, clang::ASTContext &ctx, const ptb::FileSelection &selection) {
        ptb::addFilesRead(ci.getSourceManager(), reads);
        ptb::Inventory inv = ptb::analyzeTranslationUnit(ctx, selection);
        if (listKernels) {
          inventories.push_back(std::move(inv));
          return;
        }
        ptb::RewriteResult r;
        if (ptb::rewriteTranslationUnit(ci, ctx, inv, opts, r, selection))
          results.push_back(std::move(r));
        else
          rewriteFailed = true;
      });
  if (!parsed || rewriteFailed) {
    llvm::errs() << "ptb-transform: nothing written (errors above)\n";
    return 1;
  }

  if (listKernels) {
    std::string text = format == "json" ? ptb::formatInventoryJson(inventories) : ptb::formatInventoryText(inventories);
    if (output.empty() || output == "-") {
      llvm::outs() << text;
      return 0;
    }
    if (llvm::Error e = ptb::writeOutputs({{output, text, "the inventory", ""}}, reads)) {
      ptb::print(llvm::errs(), std::move(e));
      return 1;
    }
    return 0;
  }

  std::map<std::string, std::string> staged; // destination -> text, each included copy once
  if (llvm::Error e = ptb::collectOutputs(results, staged)) {
    ptb::print(llvm::errs(), std::move(e));
    llvm::errs() << "ptb-transform: nothing written (errors above)\n";
    return 1;
  }
  std::vector<ptb::OutputFile> files;
  std::vector<std::string> mainOutputs; // the dependency file's targets
  for (auto &r : results)
    for (const ptb::FileOutput &f : r.files) {
      if (f.isMain && !f.destination.empty()) mainOutputs.push_back(f.destination);
      auto it = staged.find(f.destination);
      if (it == staged.end()) continue; // stdout, or a copy already taken from an earlier input
      files.push_back(
          {f.destination, std::move(it->second), "the output of '" + f.source + "'", inPlace ? f.source : ""});
      staged.erase(it);
    }
  if (!exportFixes.empty()) {
    std::string yaml;
    llvm::raw_string_ostream os(yaml);
    llvm::yaml::Output out(os);
    for (auto &r : results) {
      clang::tooling::TranslationUnitReplacements tur;
      tur.MainSourceFile = r.file;
      for (const ptb::FileOutput &f : r.files)
        tur.Replacements.insert(tur.Replacements.end(), f.replacements.begin(), f.replacements.end());
      out << tur;
    }
    files.push_back({exportFixes, os.str(), "the --export-fixes file", ""});
  }
  if (!dependencyFile.empty()) {
    // Its targets are the main outputs only, as `cc -MD` names only the object: the twins parts and the
    // header copies are written beside them, and Ninja refuses a depfile that names an output its build
    // file does not declare (which headers get copies is known only once the tool has run).
    std::vector<std::string> read;
    for (const ptb::ReadFile &r : reads) read.push_back(r.path);
    files.push_back({dependencyFile, ptb::dependencyRule(mainOutputs, req.files, read), "the --dependency-file", ""});
  }
  if (llvm::Error e = ptb::writeOutputs(files, reads)) {
    ptb::print(llvm::errs(), std::move(e));
    return 1;
  }
  for (auto &r : results) {
    for (const ptb::FileOutput &f : r.files) {
      if (f.destination.empty()) llvm::outs() << f.output;
      if (!quiet) llvm::errs() << ptb::describeFileOutput(f) << "\n";
    }
    if (verbose)
      for (const std::string &f : r.unchangedIncludedFiles)
        llvm::errs() << "ptb-transform: " << f << " (included by " << r.file
                     << "): nothing to change, included as it is\n";
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  return ptb::runGuarded("ptb-transform", [&] { return toolMain(argc, argv); });
}

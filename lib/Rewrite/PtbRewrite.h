// The PTB rewrite of one translation unit: twins beside kernels, clones of the __device__ functions that
// read blockIdx/gridDim, and launch sites sent to the runtime. What the output looks like is specified in
// docs/generated-code.md.
#pragma once

#include "FileSelection.h"
#include "GeneratedMarkers.h"
#include "KernelInventory.h"

#include "clang/Frontend/CompilerInstance.h"
#include "clang/Tooling/Core/Replacement.h"
#include "llvm/Support/Error.h"

#include <map>
#include <string>
#include <vector>

namespace ptb {

// Whether a file's text is an output of ptb-transform (it starts with kGeneratedMarker). Checked before
// parsing too: an output includes the runtime header, which the parse may not find.
bool isTransformedOutput(llvm::StringRef text);

// Where the outputs go. It decides where the transformed copies of included files are written, and so
// what the rewritten #include directives say.
struct OutputLayout {
  enum class Mode { Stdout, File, Directory, InPlace };
  Mode mode = Mode::Stdout;
  std::string path;  // Mode::File: the -o path; Mode::Directory: --output-dir
};

// The main output's path for the input `mainInput` ("" for stdout).
std::string mainOutputPath(const OutputLayout &layout, llvm::StringRef mainInput);

// The path of the transformed copy of `included` (a file the input includes): its path relative to the
// input's directory, put beside the main output, with `.ptb` before the extension (kernel.cu ->
// kernel.ptb.cu, sub/k.cuh -> sub/k.ptb.cuh); the file itself with -i; "" for stdout.
std::string includedOutputPath(const OutputLayout &layout, llvm::StringRef mainInput, llvm::StringRef included);

struct RewriteOptions {
  std::string kernelFilter;  // ECMAScript-like regex (llvm::Regex) on the kernel's name or qualified name; "" = all
  bool strict = false;       // kernels or launches left as they are become errors
  std::string runtimeInclude = "ptb/ptb.cuh";
  std::string toolVersion;
  OutputLayout layout;       // where the outputs go (the paths of included files' copies)
  // Also write the twins part (TwinsApart.h): the main output's twins compiled apart, into a module of
  // their own. Needs file outputs (not stdout, not -i).
  bool twinsApart = false;
  // No remarks (why the twins stay in the program's module): --quiet. Warnings and errors stay.
  bool quiet = false;
};

// One file the rewrite writes: the main file, or an included file that changed.
struct FileOutput {
  std::string source;          // the file's path as clang names it (the main file: as given to the tool)
  std::string destination;     // where it goes ("" = stdout)
  bool isMain = false;
  bool isTwinsPart = false;        // the twins part of the main file (--twins-apart)
  std::string output;          // the whole rewritten text
  clang::tooling::Replacements replacements;  // the same edits, for --export-fixes
  std::vector<std::string> transformedKernels, skippedKernels;  // defined in this file
  unsigned rewrittenLaunches = 0;                              // written in this file
  unsigned clonedFunctions = 0;    // PTB clones of device functions added to this file
  unsigned redirectedIncludes = 0; // #include directives pointed at transformed copies
  unsigned relocatedIncludes = 0;  // quoted #includes of unchanged files beside the original, pointed at
                                   // them from the output's directory (LocalIncludes.h)
  unsigned twinsApart = 0;         // the twins part: twins it defines (the main output declares them)
  std::string twinsKeptBecause;    // the twins part: why the twins stay in the main output's module
};

struct RewriteResult {
  std::string file;                            // the main file's path as given to the tool
  std::string output;                          // the main file's whole rewritten text
  clang::tooling::Replacements replacements;   // the main file's edits, for --export-fixes
  std::vector<std::string> transformedKernels; // qualified names, every file of the translation unit
  std::vector<std::string> skippedKernels;
  unsigned rewrittenLaunches = 0;
  // Every file to write, the main file first, then the selected included files that changed (or that
  // include one that did, so that their #include can point at its copy), in translation-unit order.
  std::vector<FileOutput> files;
  // The selected included files that needed no change: they are included as they are.
  std::vector<std::string> unchangedIncludedFiles;
};

// Rewrites the main file of `ctx` and the included files `selection` selects (the inventory must have
// been built with the same selection). Reports diagnostics (warnings for kernels left as they are, errors
// in strict mode or when the input was already transformed) through `ci`'s DiagnosticsEngine. Returns
// false when an error was reported; `result` is then not to be written anywhere.
bool rewriteTranslationUnit(clang::CompilerInstance &ci, clang::ASTContext &ctx, const Inventory &inventory,
                            const RewriteOptions &options, RewriteResult &result,
                            const FileSelection &selection = FileSelection());

// Gathers the files to write from every translation unit's result (destination -> text; stdout outputs are
// left out). Two inputs that include one file produce its copy twice: the same text is written once;
// different texts are an error, and nothing is to be written.
llvm::Error collectOutputs(const std::vector<RewriteResult> &results, std::map<std::string, std::string> &files);

// One line for the user about one written file: "ptb-transform: kernel.cu -> out/kernel.ptb.cu: 1 kernel
// made PTB, 0 left as they are, 2 launches rewritten".
std::string describeFileOutput(const FileOutput &file);

} // namespace ptb

// The PTB rewrite of one translation unit: twins beside kernels, clones of the __device__ functions that
// read blockIdx/gridDim, and launch sites sent to the runtime. What the output looks like is specified in
// docs/generated-code.md.
#pragma once

#include "KernelInventory.h"

#include "clang/Frontend/CompilerInstance.h"
#include "clang/Tooling/Core/Replacement.h"

#include <string>
#include <vector>

namespace ptb {

// The first line of every file ptb-transform writes; finding it in an input means the input was already
// transformed.
extern const char *const kGeneratedMarker;

// Whether a file's text is an output of ptb-transform (it starts with kGeneratedMarker). Checked before
// parsing too: an output includes the runtime header, which the parse may not find.
bool isTransformedOutput(llvm::StringRef text);

struct RewriteOptions {
  std::string kernelFilter;  // ECMAScript-like regex (llvm::Regex) on the kernel's name or qualified name; "" = all
  bool strict = false;       // kernels or launches left as they are become errors
  std::string runtimeInclude = "ptb/ptb.cuh";
  std::string toolVersion;
};

struct RewriteResult {
  std::string file;                            // the main file's path as given to the tool
  std::string output;                          // the whole rewritten text
  clang::tooling::Replacements replacements;   // the same edits, for --export-fixes
  std::vector<std::string> transformedKernels; // qualified names
  std::vector<std::string> skippedKernels;
  unsigned rewrittenLaunches = 0;
};

// Rewrites the main file of `ctx`. Reports diagnostics (warnings for kernels left as they are, errors in
// strict mode or when the input was already transformed) through `ci`'s DiagnosticsEngine. Returns false
// when an error was reported; `result` is then not to be written anywhere.
bool rewriteTranslationUnit(clang::CompilerInstance &ci, clang::ASTContext &ctx, const Inventory &inventory,
                            const RewriteOptions &options, RewriteResult &result);

} // namespace ptb

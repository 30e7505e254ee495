// The PTB rewrite of one translation unit: twins beside kernels, clones of the __device__ functions that
// read blockIdx/gridDim, and launch sites sent to the runtime. What the output looks like is specified in
// docs/generated-code.md.
#pragma once

#include "FileSelection.h"
#include "GeneratedMarkers.h"
#include "KernelInventory.h"
#include "OutputPaths.h"
#include "RewriteOutputs.h"

#include "clang/Frontend/CompilerInstance.h"

#include <string>

namespace ptb {

// Whether a file's text is an output of ptb-transform (it starts with kGeneratedMarker). Checked before
// parsing too: an output includes the runtime header, which the parse may not find.
bool isTransformedOutput(llvm::StringRef text);

struct RewriteOptions {
  std::string kernelFilter; // ECMAScript-like regex (llvm::Regex) on the kernel's name or qualified name; "" = all
  bool strict = false;      // kernels or launches left as they are become errors
  std::string runtimeInclude = "ptb/ptb.cuh";
  std::string toolVersion;
  OutputLayout layout; // where the outputs go (the paths of included files' copies)
  // Also write the twins part (TwinsApart.h): the main output's twins compiled apart, into a module of
  // their own. Needs file outputs (not stdout, not -i).
  bool twinsApart = false;
  // No remarks (why the twins stay in the program's module): --quiet. Warnings and errors stay.
  bool quiet = false;
};

// Rewrites the main file of `ctx` and the included files `selection` selects (the inventory must have
// been built with the same selection). Reports diagnostics (warnings for kernels left as they are, errors
// in strict mode or when the input was already transformed) through `ci`'s DiagnosticsEngine. Returns
// false when an error was reported; `result` is then not to be written anywhere.
bool rewriteTranslationUnit(clang::CompilerInstance &ci, clang::ASTContext &ctx, const Inventory &inventory,
                            const RewriteOptions &options, RewriteResult &result,
                            const FileSelection &selection = FileSelection());

} // namespace ptb

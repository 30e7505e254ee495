// What the PTB rewrite of one translation unit produces (the files to write, with what each holds), how
// the results of several translation units are gathered, and the line that tells the user about a file.
#pragma once

#include "clang/Tooling/Core/Replacement.h"
#include "llvm/Support/Error.h"

#include <map>
#include <string>
#include <vector>

namespace ptb {

// One file the rewrite writes: the main file, or an included file that changed.
struct FileOutput {
  std::string source;      // the file's path as clang names it (the main file: as given to the tool)
  std::string destination; // where it goes ("" = stdout)
  bool isMain = false;
  bool isTwinsPart = false;                                    // the twins part of the main file (--twins-apart)
  std::string output;                                          // the whole rewritten text
  clang::tooling::Replacements replacements;                   // the same edits, for --export-fixes
  std::vector<std::string> transformedKernels, skippedKernels; // defined in this file
  unsigned rewrittenLaunches = 0;                              // written in this file
  unsigned clonedFunctions = 0;                                // PTB clones of device functions added to this file
  unsigned redirectedIncludes = 0;                             // #include directives pointed at transformed copies
  unsigned relocatedIncludes = 0; // quoted #includes of unchanged files beside the original, pointed at
                                  // them from the output's directory (LocalIncludes.h)
  unsigned twinsApart = 0;        // the twins part: twins it defines (the main output declares them)
  std::string twinsKeptBecause;   // the twins part: why the twins stay in the main output's module
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

// Gathers the files to write from every translation unit's result (destination -> text; stdout outputs are
// left out). Two inputs that include one file produce its copy twice: the same text is written once;
// different texts are an error, and nothing is to be written.
llvm::Error collectOutputs(const std::vector<RewriteResult> &results, std::map<std::string, std::string> &files);

// One line for the user about one written file: "ptb-transform: kernel.cu -> out/kernel.ptb.cu: 1 kernel
// made PTB, 0 left as they are, 2 launches rewritten".
std::string describeFileOutput(const FileOutput &file);

} // namespace ptb

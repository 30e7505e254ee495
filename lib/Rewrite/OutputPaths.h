// Where ptb-transform's outputs go: the main output's path, and the paths of the transformed copies of
// the files it includes (which the rewritten #include directives name).
#pragma once

#include "llvm/ADT/StringRef.h"

#include <string>

namespace ptb {

// Where the outputs go. It decides where the transformed copies of included files are written, and so
// what the rewritten #include directives say.
struct OutputLayout {
  enum class Mode { Stdout, File, Directory, InPlace };
  Mode mode = Mode::Stdout;
  std::string path; // Mode::File: the -o path; Mode::Directory: --output-dir
};

// The main output's path for the input `mainInput` ("" for stdout).
std::string mainOutputPath(const OutputLayout &layout, llvm::StringRef mainInput);

// The path of the transformed copy of `included` (a file the input includes): its path relative to the
// input's directory, put beside the main output, with `.ptb` before the extension (kernel.cu ->
// kernel.ptb.cu, sub/k.cuh -> sub/k.ptb.cuh); the file itself with -i; "" for stdout.
std::string includedOutputPath(const OutputLayout &layout, llvm::StringRef mainInput, llvm::StringRef included);

} // namespace ptb

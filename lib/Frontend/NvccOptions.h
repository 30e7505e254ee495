// nvcc 13's options, one table for both readers of an nvcc command line: ptb-nvcc (which words are an
// option's value, not an input file) and the front end (which options clang is not given). LLVM Support
// only: ptb-nvcc links no Clang.
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace ptb {

// What the front end does with an nvcc option when it builds clang's command (translateNvccArgs).
enum class ForClang {
  Keep,          // passed on, or translated by a rule of its own (-I, -std, -Xcompiler, ...)
  Drop,          // dropped alone
  DropWithValue, // dropped with its value: the next word, or glued by '=' (`-odir out`, `-odir=out`)
};

struct NvccOption {
  llvm::StringRef spelling; // one spelling; nvcc names most options twice (--long and -short)
  bool takesValue;          // ptb-nvcc: written `-opt value` or `-opt=value`
  ForClang forClang;
};

// Every spelling the tools know, each once.
llvm::ArrayRef<NvccOption> nvccOptions();

// The row of `spelling` (the word up to any '='), or null.
const NvccOption *findNvccOption(llvm::StringRef spelling);

} // namespace ptb

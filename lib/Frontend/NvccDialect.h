// Where nvcc 13 accepts what clang 19 rejects, the front end supplies what nvcc's headers supply, or
// normalizes the text clang reads (never what the tools are given to edit in a way that moves offsets).
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <functional>
#include <string>
#include <vector>

namespace ptb {

// nvcc's front end takes a launch written with spaced chevrons, `k << < 2, 32 >> > (d)`; clang lexes
// `<<` `<` and fails. Returns `text` with each such opening `<<`-space-`<` made `<<<` followed by what was
// between (spaces, comments), and the matching closing `>>`-space-`>` made `>>>` the same way: the same
// length, the same lines, so that every offset the parse reports stays valid for the original layout.
// Tokens are found by clang's raw lexer (strings, comments, `operator<< <T>` are left alone). `changed`
// says whether anything was rewritten.
std::string normalizeLaunchChevrons(llvm::StringRef text, bool &changed);

// The front end's own headers (served from memory in frontendIncludeDir()): the name and the text of each.
struct FrontendHeader {
  std::string name, text;
};
// `clangResourceDir`: the parse's clang resource directory (its omp.h, if any, is not shadowed).
std::vector<FrontendHeader> nvccCompatibilityHeaders(const std::string &clangResourceDir);

// The header every parse force-includes after clang's CUDA wrapper (`-include`): what nvcc's host headers
// bring that clang's do not (the C headers crt/common_functions.h includes, host min/max overloads of mixed
// signedness from crt/math_functions.hpp).
extern const char *const kNvccCompatHeader;

// A file system over `base` whose reads of the files `normalize` accepts go through
// normalizeLaunchChevrons (lengths unchanged, so file sizes and offsets stay as on disk).
llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem>
chevronNormalizingFileSystem(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> base,
                             std::function<bool(llvm::StringRef path)> normalize);

} // namespace ptb

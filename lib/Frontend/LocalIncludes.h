// Quoted #include directives that clang resolved in the including file's own directory ("kernels.h"
// beside app.cu). Written elsewhere (the build tree), such a directive no longer finds its file with the
// flags the original compiles with; both tools point it at the original by a relative path.
#pragma once

#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace ptb {

struct LocalInclude {
  unsigned offset = 0; // of the quoted name (opening quote) in the including file
  unsigned length = 0; // of the quoted name, quotes included
  std::string target;  // the file it found, absolute
};

// The local includes in `text`, the contents of the file at `includerPath`, in text order: every
// `#include "name"` (or #import, #include_next) whose name, relative to that file's directory, names an
// existing file, which is where a quoted include is looked for first. Read from the text (clang's raw
// lexer: comments and strings skipped), not from what the parse entered: a header skipped by #pragma once
// or its include guard is still looked up by nvcc. Directives in inactive #if branches count too (their
// new name finds the same file). Angle-bracket includes, names from macros and absolute names are not local.
std::vector<LocalInclude> localIncludes(llvm::StringRef text, llvm::StringRef includerPath);

// The quoted name to write instead of the local include's, for the including file's text written to the
// directory `outputDir`: the target relative to it. "" when nothing is to change (the output is in the
// includer's directory `includerDir`: the name as written finds the same file).
std::string relocatedInclude(const LocalInclude &include, llvm::StringRef includerDir, llvm::StringRef outputDir);

} // namespace ptb

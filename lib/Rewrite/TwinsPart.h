// The twins part's contract with the tools that build it (ptb-nvcc; docs/generated-code.md, "Twins
// apart"): where ptb-transform --twins-apart writes it, and the line that tells a twins part with twins
// from an empty one. LLVM's Support library only, so that ptb-nvcc (no Clang) can include it.
#pragma once

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Path.h"

#include <string>

namespace ptb {

// The line that opens a twins part with twins (an empty one is comments only).
inline constexpr const char *kTwinsPartDefine = "#define PTB_TWINS_PART 1";

// The path of the twins part beside a main output: out/app.cu -> out/app.twins.cu.
inline std::string twinsPartPath(llvm::StringRef mainOutput) {
  llvm::SmallString<256> p(llvm::sys::path::parent_path(mainOutput));
  llvm::sys::path::append(p, llvm::sys::path::stem(mainOutput) + ".twins" + llvm::sys::path::extension(mainOutput));
  return std::string(p);
}

} // namespace ptb

#include "OutputPaths.h"

#include "FileSelection.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Path.h"

namespace ptb {

std::string mainOutputPath(const OutputLayout &layout, llvm::StringRef mainInput) {
  switch (layout.mode) {
  case OutputLayout::Mode::Stdout: return "";
  case OutputLayout::Mode::File: return layout.path == "-" ? "" : layout.path;
  case OutputLayout::Mode::Directory: return layout.path + "/" + llvm::sys::path::filename(mainInput).str();
  case OutputLayout::Mode::InPlace: return mainInput.str();
  }
  return "";
}

std::string includedOutputPath(const OutputLayout &layout, llvm::StringRef mainInput, llvm::StringRef included) {
  if (layout.mode == OutputLayout::Mode::InPlace) return included.str();
  std::string mainOut = mainOutputPath(layout, mainInput);
  if (mainOut.empty()) return "";
  std::string rel = relativePath(llvm::sys::path::parent_path(absolutePath(mainInput)), included);
  llvm::SmallString<256> renamed(llvm::sys::path::parent_path(rel));
  llvm::sys::path::append(renamed, llvm::sys::path::stem(rel) + ".ptb" + llvm::sys::path::extension(rel));
  llvm::SmallString<256> out(layout.mode == OutputLayout::Mode::Directory ? llvm::StringRef(layout.path)
                                                                          : llvm::sys::path::parent_path(mainOut));
  llvm::sys::path::append(out, renamed);
  llvm::sys::path::remove_dots(out, /*remove_dot_dot=*/true);
  return std::string(out);
}

} // namespace ptb

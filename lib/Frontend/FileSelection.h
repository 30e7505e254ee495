// Which files of a translation unit ptb-transform reads and rewrites besides the main file: the user's
// own headers and included sources (`main.cu` including `kernel.cu`), as clang-tidy's --header-filter
// selects headers. System headers and the CUDA toolkit's are never selected.
#pragma once

#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Regex.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ptb {

// The absolute path of `path` with `.` and `..` removed (symbolic links are not resolved).
std::string absolutePath(llvm::StringRef path);

// `to` relative to the directory `fromDir` (both made absolute first), with `..` where needed and '/'
// as the separator: the text of an #include from a file in `fromDir`.
std::string relativePath(llvm::StringRef fromDir, llvm::StringRef to);

class FileSelection {
public:
  // Only the main file (what the fuser reads).
  FileSelection() = default;

  // `mainFile`: the input. `headerFilter`: --header-filter; nullopt selects every file under the input's
  // directory tree, "" selects none, anything else is a regex searched in a file's absolute path.
  // `excludedRoots`: directories whose files are never selected (the CUDA installation). Returns nullopt
  // and sets `error` when the regex is invalid.
  static std::optional<FileSelection> make(llvm::StringRef mainFile, const std::optional<std::string> &headerFilter,
                                           const std::vector<std::string> &excludedRoots, std::string &error);

  // Whether an included file (by path) is selected; system headers are checked by `selects` below.
  bool selectsPath(llvm::StringRef path) const;

  // Whether the file `fid` of a translation unit is selected: the main file always; a system header
  // (-isystem, the CUDA and C++ headers) or a file without a path on disk never.
  bool selects(const clang::SourceManager &sm, clang::FileID fid) const;

  // Whether anything besides the main file can be selected.
  bool selectsIncludedFiles() const { return mode != Mode::MainOnly; }

  // For messages: "the input's directory <dir>", "--header-filter '<regex>'", ...
  std::string describe() const;

private:
  enum class Mode { MainOnly, Directory, Regex };
  Mode mode = Mode::MainOnly;
  std::string directory; // Mode::Directory: absolute, without a trailing separator
  std::string pattern;
  std::shared_ptr<llvm::Regex> regex;
  std::vector<std::string> excluded; // absolute roots, and their real paths
};

// Caches FileSelection::selects per FileID for one translation unit.
class SelectedFiles {
public:
  SelectedFiles(const clang::SourceManager &sm, const FileSelection &selection) : sm(sm), selection(selection) {}
  bool contains(clang::FileID fid) const;
  // Whether the file that `loc` is expanded in is selected.
  bool containsLoc(clang::SourceLocation loc) const;
  const FileSelection &filter() const { return selection; }

private:
  const clang::SourceManager &sm;
  const FileSelection &selection;
  mutable llvm::DenseMap<clang::FileID, bool> memo;
};

} // namespace ptb

#include "FileSelection.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

namespace ptb {

std::string absolutePath(llvm::StringRef path) {
  llvm::SmallString<256> p(path);
  (void)llvm::sys::fs::make_absolute(p);
  llvm::sys::path::remove_dots(p, /*remove_dot_dot=*/true);
  return std::string(p);
}

std::string relativePath(llvm::StringRef fromDir, llvm::StringRef to) {
  std::string from = absolutePath(fromDir), target = absolutePath(to);
  llvm::SmallVector<llvm::StringRef, 16> a, b;
  for (auto it = llvm::sys::path::begin(from), e = llvm::sys::path::end(from); it != e; ++it) a.push_back(*it);
  for (auto it = llvm::sys::path::begin(target), e = llvm::sys::path::end(target); it != e; ++it) b.push_back(*it);
  size_t common = 0;
  while (common < a.size() && common + 1 < b.size() && a[common] == b[common]) ++common;
  std::string out;
  for (size_t i = common; i < a.size(); ++i) out += "../";
  for (size_t i = common; i < b.size(); ++i) out += b[i].str() + (i + 1 < b.size() ? "/" : "");
  return out;
}

namespace {
bool isUnder(llvm::StringRef path, llvm::StringRef dir) {
  if (dir.empty()) return false;
  if (!path.starts_with(dir)) return false;
  return path.size() > dir.size() && llvm::sys::path::is_separator(path[dir.size()]);
}
} // namespace

std::optional<FileSelection> FileSelection::make(llvm::StringRef mainFile,
                                                 const std::optional<std::string> &headerFilter,
                                                 const std::vector<std::string> &excludedRoots, std::string &error) {
  FileSelection s;
  if (!headerFilter) {
    s.mode = Mode::Directory;
    s.directory = llvm::sys::path::parent_path(absolutePath(mainFile)).str();
  } else if (headerFilter->empty()) {
    s.mode = Mode::MainOnly;
  } else {
    s.mode = Mode::Regex;
    s.pattern = *headerFilter;
    s.regex = std::make_shared<llvm::Regex>(*headerFilter);
    std::string why;
    if (!s.regex->isValid(why)) {
      error = "invalid --header-filter regex '" + *headerFilter + "': " + why;
      return std::nullopt;
    }
  }
  for (const std::string &root : excludedRoots) {
    if (root.empty()) continue;
    s.excluded.push_back(absolutePath(root));
    llvm::SmallString<256> real;
    if (!llvm::sys::fs::real_path(root, real)) s.excluded.push_back(std::string(real));
  }
  return s;
}

bool FileSelection::selectsPath(llvm::StringRef path) const {
  if (mode == Mode::MainOnly) return false;
  std::string abs = absolutePath(path);
  for (const std::string &root : excluded)
    if (isUnder(abs, root)) return false;
  if (mode == Mode::Directory) return isUnder(abs, directory);
  return regex->match(abs);
}

bool FileSelection::selects(const clang::SourceManager &sm, clang::FileID fid) const {
  if (fid == sm.getMainFileID()) return true;
  if (mode == Mode::MainOnly || fid.isInvalid()) return false;
  if (sm.isInSystemHeader(sm.getLocForStartOfFile(fid))) return false;
  auto fe = sm.getFileEntryRefForID(fid);
  if (!fe) return false;
  return selectsPath(fe->getName());
}

std::string FileSelection::describe() const {
  switch (mode) {
  case Mode::MainOnly: return "--header-filter=''";
  case Mode::Directory: return "the default --header-filter (files under " + directory + ")";
  case Mode::Regex: return "--header-filter='" + pattern + "'";
  }
  return "";
}

bool SelectedFiles::contains(clang::FileID fid) const {
  auto it = memo.find(fid);
  if (it != memo.end()) return it->second;
  bool r = selection.selects(sm, fid);
  memo[fid] = r;
  return r;
}

bool SelectedFiles::containsLoc(clang::SourceLocation loc) const {
  if (loc.isInvalid()) return false;
  return contains(sm.getFileID(sm.getExpansionLoc(loc)));
}

} // namespace ptb

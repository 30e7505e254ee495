#include "DependencyFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>

#include <set>

namespace ptb {

namespace {

std::string escaped(const std::string &path) {
  std::string out;
  for (char c : path) {
    if (c == ' ' || c == '#') out += '\\';
    if (c == '$') out += '$';
    out += c;
  }
  return out;
}

std::string normalized(const std::string &path) {
  llvm::SmallString<256> p(path);
  (void)llvm::sys::fs::make_absolute(p);
  llvm::sys::path::remove_dots(p, /*remove_dot_dot=*/true);
  return std::string(p);
}

} // namespace

std::string dependencyRule(const std::vector<std::string> &targets, const std::vector<std::string> &inputs,
                           const std::vector<std::string> &read) {
  std::string rule;
  for (const std::string &t : targets) rule += (rule.empty() ? "" : " ") + escaped(t);
  rule += ":";
  std::set<std::string> seen;
  auto add = [&](const std::string &path) {
    std::string p = normalized(path);
    if (seen.insert(p).second && llvm::sys::fs::is_regular_file(p)) rule += " \\\n  " + escaped(p);
  };
  for (const std::string &p : inputs) add(p);
  std::vector<std::string> others;
  for (const std::string &p : read) others.push_back(normalized(p));
  std::sort(others.begin(), others.end());
  for (const std::string &p : others) add(p);
  return rule + "\n";
}

} // namespace ptb

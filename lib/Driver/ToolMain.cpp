#include "ToolMain.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace ptb {

void splitAtDashDash(int argc, char **argv, std::vector<std::string> &toolArgs, std::vector<std::string> &compilerArgs) {
  bool after = false;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (!after && a == "--" && i > 0) { after = true; continue; }
    (after ? compilerArgs : toolArgs).push_back(a);
  }
}

bool writeFilesAtomically(const std::map<std::string, std::string> &files, std::string &error) {
  // First every temporary file, then the renames: a failure while writing leaves no output at all.
  std::vector<std::pair<std::string, std::string>> staged;
  auto cleanup = [&] { for (auto &[tmp, dst] : staged) llvm::sys::fs::remove(tmp); };
  for (const auto &[path, contents] : files) {
    llvm::SmallString<256> dir(path);
    llvm::sys::path::remove_filename(dir);
    if (!dir.empty()) {
      if (auto ec = llvm::sys::fs::create_directories(dir)) {
        error = "cannot create directory '" + std::string(dir) + "': " + ec.message();
        cleanup();
        return false;
      }
    }
    llvm::SmallString<256> tmp;
    int fd = -1;
    llvm::SmallString<256> model(dir.empty() ? "." : dir.str());
    llvm::sys::path::append(model, ".ptb-tmp-%%%%%%%%");
    if (auto ec = llvm::sys::fs::createUniqueFile(model, fd, tmp)) {
      error = "cannot write '" + path + "': " + ec.message();
      cleanup();
      return false;
    }
    {
      llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
      os << contents;
      os.flush();
      if (os.has_error()) {
        error = "cannot write '" + path + "': " + os.error().message();
        os.clear_error();
        llvm::sys::fs::remove(tmp);
        cleanup();
        return false;
      }
    }
    staged.push_back({std::string(tmp), path});
  }
  for (auto &[tmp, dst] : staged) {
    if (auto ec = llvm::sys::fs::rename(tmp, dst)) {
      error = "cannot move the output into place at '" + dst + "': " + ec.message();
      cleanup();
      return false;
    }
  }
  return true;
}

} // namespace ptb

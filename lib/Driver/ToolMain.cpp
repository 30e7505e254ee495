#include "ToolMain.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace ptb {

void splitAtDashDash(int argc, char **argv, std::vector<std::string> &toolArgs, std::vector<std::string> &compilerArgs) {
  bool after = false;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (!after && a == "--" && i > 0) { after = true; continue; }
    (after ? compilerArgs : toolArgs).push_back(a);
  }
}

void addParseOptions(CLI::App &app, ParseRequest &request) {
  app.add_option("files", request.files, "CUDA source files")->required();
  app.add_option("-p", request.buildDir, "Build directory holding compile_commands.json");
  app.add_option("--cuda-path", request.cudaPath, "CUDA installation (else CUDA_PATH, nvcc on PATH, /usr/local/cuda)");
  // One value per occurrence (repeat the option), so `--extra-arg -DX file.cu` leaves file.cu a file.
  app.add_option("--extra-arg", request.extraArgs, "Compiler argument to append (repeat for more)")
      ->expected(1)->take_all()->allow_extra_args(false);
  app.add_option("--extra-arg-before", request.extraArgsBefore, "Compiler argument to prepend (repeat for more)")
      ->expected(1)->take_all()->allow_extra_args(false);
}

int parseCommandLine(CLI::App &app, std::vector<std::string> toolArgs) {
  // CLI11 takes the arguments without the program name, in reverse order.
  if (!toolArgs.empty()) toolArgs.erase(toolArgs.begin());
  std::reverse(toolArgs.begin(), toolArgs.end());
  try {
    app.parse(toolArgs);
  } catch (const CLI::ParseError &e) {
    return app.exit(e);
  }
  return -1;
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

bool reportGeneratedInputs(const std::vector<std::string> &files, const std::vector<GeneratedMarker> &markers) {
  bool found = false;
  for (const std::string &f : files) {
    auto buf = llvm::MemoryBuffer::getFile(f);
    if (!buf) continue;
    for (const GeneratedMarker &m : markers)
      if ((*buf)->getBuffer().starts_with(m.marker)) {
        llvm::errs() << f << ":1:1: error: " << m.message << "\n";
        found = true;
        break;
      }
  }
  return found;
}

} // namespace ptb

#include "ToolMain.h"
#include "Diagnostics.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>

#include <climits>
#include <unistd.h>

namespace ptb {

void splitAtDashDash(int argc, char **argv, std::vector<std::string> &toolArgs,
                     std::vector<std::string> &compilerArgs) {
  bool after = false;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (!after && a == "--" && i > 0) {
      after = true;
      continue;
    }
    (after ? compilerArgs : toolArgs).push_back(a);
  }
}

void addParseOptions(CLI::App &app, ParseRequest &request) {
  app.add_option("files", request.files, "CUDA source files")->required();
  app.add_option("-p", request.buildDir, "Build directory holding compile_commands.json");
  app.add_option("--cuda-path", request.cudaPath, "CUDA installation (else CUDA_PATH, nvcc on PATH, /usr/local/cuda)");
  // One value per occurrence (repeat the option), so `--extra-arg -DX file.cu` leaves file.cu a file.
  app.add_option("--extra-arg", request.extraArgs, "Compiler argument to append (repeat for more)")
      ->expected(1)
      ->take_all()
      ->allow_extra_args(false);
  app.add_option("--extra-arg-before", request.extraArgsBefore, "Compiler argument to prepend (repeat for more)")
      ->expected(1)
      ->take_all()
      ->allow_extra_args(false);
}

int runGuarded(llvm::StringRef tool, llvm::function_ref<int()> body) {
  try {
    return body();
  } catch (const std::exception &e) {
    llvm::errs() << tool << ": error: " << e.what() << "; nothing written\n";
  } catch (...) { llvm::errs() << tool << ": error: an unknown exception; nothing written\n"; }
  return kExitInputError;
}

int parseCommandLine(CLI::App &app, std::vector<std::string> toolArgs) {
  // CLI11 takes the arguments without the program name, in reverse order.
  if (!toolArgs.empty()) toolArgs.erase(toolArgs.begin());
  // `--opt=` gives an empty value (--header-filter= selects no header); CLI11 would take the next
  // argument as the value instead, so it is passed as `--opt ""`.
  for (size_t i = 0; i < toolArgs.size(); ++i) {
    llvm::StringRef a = toolArgs[i];
    if (a.starts_with("--") && a.size() > 3 && a.ends_with("=") && a.count('=') == 1) {
      toolArgs[i] = a.drop_back().str();
      toolArgs.insert(toolArgs.begin() + i + 1, "");
      ++i;
    }
  }
  std::reverse(toolArgs.begin(), toolArgs.end());
  try {
    app.parse(toolArgs);
  } catch (const CLI::ParseError &e) {
    // --help and --version exit 0; every usage error 2, whatever CLI11's own code for it (docs/ptb-transform.md,
    // "Exit codes").
    return app.exit(e) == 0 ? 0 : kExitUsage;
  }
  return -1;
}

std::string documentationPage(const char *argv0, llvm::StringRef page) {
  static int anchor;
  std::string exe = llvm::sys::fs::getMainExecutable(argv0, &anchor);
  if (!exe.empty()) {
    llvm::SmallString<256> p(llvm::sys::path::parent_path(llvm::sys::path::parent_path(exe)));
    llvm::sys::path::append(p, "share", "doc", "ptb-tools", page);
    if (llvm::sys::fs::exists(p)) return std::string(p);
  }
  return "share/doc/ptb-tools/" + page.str() + " under the install prefix; docs/" + page.str() + " in the sources";
}

namespace {

namespace fs = llvm::sys::fs;

// Where an output goes, found before anything is written.
struct Destination {
  const OutputFile *out = nullptr;
  std::string target; // the file to replace or create (symbolic links followed), or the special file
  enum Kind { Create, Replace, WriteThrough } kind = Create;
  bool exists = false;
  fs::UniqueID id;        // when it exists
  std::string key;        // when it does not: its absolute path, directories resolved
  fs::file_status status; // of the file replaced
  std::string tmp;        // the staged temporary (Create, Replace)
};

std::string parentOf(llvm::StringRef path) {
  llvm::SmallString<256> dir(path);
  llvm::sys::path::remove_filename(dir);
  return std::string(dir);
}

// The path a dangling symbolic link (chain) points to; `path` itself when it is no link.
bool followDanglingLinks(std::string &path, std::string &error) {
  for (int hops = 0; hops < 40; ++hops) {
    fs::file_status st;
    if (fs::status(path, st, /*Follow=*/false) || st.type() != fs::file_type::symlink_file) return true;
    char buf[4096];
    ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
    if (n < 0) {
      error = "cannot read the symbolic link '" + path + "': " + std::strerror(errno);
      return false;
    }
    std::string link(buf, static_cast<size_t>(n));
    if (llvm::sys::path::is_absolute(link))
      path = link;
    else {
      llvm::SmallString<256> p(parentOf(path));
      llvm::sys::path::append(p, link);
      path = std::string(p);
    }
  }
  error = "too many levels of symbolic links at '" + path + "'";
  return false;
}

// An absolute spelling of a path that does not exist, its directory resolved where it exists: two such
// outputs are one file when these are equal.
std::string keyOfNewFile(llvm::StringRef path) {
  llvm::SmallString<256> abs(path);
  (void)fs::make_absolute(abs);
  llvm::sys::path::remove_dots(abs, /*remove_dot_dot=*/true);
  llvm::SmallString<256> dir(parentOf(abs)), real;
  if (!dir.empty() && !fs::real_path(dir, real)) {
    llvm::sys::path::append(real, llvm::sys::path::filename(abs));
    return std::string(real);
  }
  return std::string(abs);
}

// Whether every component of `path` is a name the file system takes (NAME_MAX of the nearest directory
// that exists), and the whole path one the system takes (PATH_MAX): else a rename into place would fail
// after other outputs were moved into place. Sets `error` when not.
bool nameFits(const OutputFile &out, const std::string &path, std::string &error) {
  llvm::SmallString<256> abs(path);
  (void)fs::make_absolute(abs);
  std::string existing = std::string(abs);
  while (!existing.empty() && !fs::is_directory(existing)) {
    std::string up = llvm::sys::path::parent_path(existing).str();
    existing = up == existing ? "" : up;
  }
  long nameMax = ::pathconf(existing.empty() ? "/" : existing.c_str(), _PC_NAME_MAX);
  if (nameMax <= 0) nameMax = 255;
  auto tooLong = [&](const std::string &why) {
    error = "cannot write " + out.what + " to '" + out.path + "': " + why + " (nothing written)";
    return false;
  };
  for (auto it = llvm::sys::path::begin(abs), e = llvm::sys::path::end(abs); it != e; ++it)
    if (it->size() > static_cast<size_t>(nameMax))
      return tooLong("the file name '" + it->str() + "' is longer than the " + std::to_string(nameMax) +
                     " bytes the file system takes");
  if (abs.size() >= PATH_MAX) return tooLong("the path is longer than " + std::to_string(PATH_MAX - 1) + " bytes");
  return true;
}

bool resolve(const OutputFile &out, Destination &d, std::string &error) {
  d.out = &out;
  d.target = out.path;
  if (!fs::status(out.path, d.status, /*Follow=*/true)) {
    d.exists = true;
    d.id = d.status.getUniqueID();
    switch (d.status.type()) {
    case fs::file_type::directory_file:
      error = "cannot write " + out.what + " to '" + out.path + "': it is a directory";
      return false;
    case fs::file_type::regular_file: {
      llvm::SmallString<256> real;
      if (auto ec = fs::real_path(out.path, real)) {
        error = "cannot write " + out.what + " to '" + out.path + "': " + ec.message();
        return false;
      }
      d.target = std::string(real);
      d.kind = Destination::Replace;
      return true;
    }
    default: // a device node, FIFO or socket: written through, never replaced
      d.kind = Destination::WriteThrough;
      return true;
    }
  }
  if (!followDanglingLinks(d.target, error)) return false;
  if (!nameFits(out, d.target, error)) return false;
  d.key = keyOfNewFile(d.target);
  return true;
}

// Copies the replaced file's owner, group (where the caller may) and permission bits to the temporary.
void keepModeAndOwner(int fd, const fs::file_status &st) {
  fs::file_status mine;
  if (!fs::status(fd, mine) && (mine.getUser() != st.getUser() || mine.getGroup() != st.getGroup()))
    if (fs::changeFileOwnership(fd, st.getUser(), st.getGroup()))
      (void)fs::changeFileOwnership(fd, mine.getUser(), st.getGroup()); // the group alone, if permitted
  (void)fs::setPermissions(fd, st.permissions());
}

bool writeAll(int fd, const std::string &contents, const std::string &what, std::string &error) {
  llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
  os << contents;
  os.close();
  if (os.has_error()) {
    error = "cannot write " + what + ": " + os.error().message();
    os.clear_error();
    return false;
  }
  return true;
}

bool writeOrExplain(const std::vector<OutputFile> &outputs, const std::vector<ReadFile> &reads, std::string &error) {
  std::vector<Destination> dests(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i)
    if (!resolve(outputs[i], dests[i], error)) return false;

  // No output replaces a file the tool read (but -i its own input), and no two outputs are one file.
  std::map<fs::UniqueID, const ReadFile *> readIds; // each file once (every parse reads the same headers)
  if (llvm::any_of(dests, [](const Destination &d) { return d.exists; }))
    for (const ReadFile &r : reads) {
      fs::UniqueID id;
      if (!fs::getUniqueID(r.path, id)) readIds.emplace(id, &r);
    }
  for (const Destination &d : dests) {
    if (!d.exists) continue;
    fs::UniqueID own;
    bool ownInput = !d.out->replacesInput.empty() && !fs::getUniqueID(d.out->replacesInput, own) && own == d.id;
    auto r = readIds.find(d.id);
    if (ownInput || r == readIds.end()) continue;
    error = "refusing to write " + d.out->what + " to '" + d.out->path + "': it is " + r->second->role + " '" +
            r->second->path + "', which would be overwritten (nothing written)";
    return false;
  }
  for (size_t i = 0; i < dests.size(); ++i)
    for (size_t j = 0; j < i; ++j) {
      const Destination &a = dests[j], &b = dests[i];
      if (a.exists != b.exists || (a.exists ? a.id != b.id : a.key != b.key)) continue;
      error = a.out->what + " and " + b.out->what + " would both be written to '" + b.out->path + "' (nothing written)";
      return false;
    }

  // Every temporary first, then the special files, then the renames: a failure before the renames leaves
  // no output replaced.
  auto cleanup = [&] {
    for (Destination &d : dests)
      if (!d.tmp.empty()) {
        (void)fs::remove(d.tmp);
        llvm::sys::DontRemoveFileOnSignal(d.tmp);
        d.tmp.clear();
      }
  };
  for (Destination &d : dests) {
    if (d.kind == Destination::WriteThrough) continue;
    std::string dir = parentOf(d.target);
    if (!dir.empty())
      if (auto ec = fs::create_directories(dir)) {
        error = "cannot create directory '" + dir + "': " + ec.message();
        cleanup();
        return false;
      }
    llvm::SmallString<256> model(dir.empty() ? "." : dir), tmp;
    llvm::sys::path::append(model, ".ptb-tmp-%%%%%%%%");
    int fd = -1;
    if (auto ec = fs::createUniqueFile(model, fd, tmp)) {
      error = "cannot write " + d.out->what + " to '" + d.out->path + "': " + ec.message();
      cleanup();
      return false;
    }
    d.tmp = std::string(tmp);
    llvm::sys::RemoveFileOnSignal(d.tmp);
    if (d.kind == Destination::Replace) keepModeAndOwner(fd, d.status);
    if (!writeAll(fd, d.out->contents, d.out->what + " to '" + d.out->path + "'", error)) {
      cleanup();
      return false;
    }
  }
  for (Destination &d : dests) {
    if (d.kind != Destination::WriteThrough) continue;
    int fd = -1;
    if (auto ec = fs::openFileForWrite(d.target, fd, fs::CD_OpenExisting, fs::OF_None)) {
      error = "cannot write " + d.out->what + " to '" + d.out->path + "': " + ec.message();
      cleanup();
      return false;
    }
    if (!writeAll(fd, d.out->contents, d.out->what + " to '" + d.out->path + "'", error)) {
      cleanup();
      return false;
    }
  }
  for (Destination &d : dests) {
    if (d.tmp.empty()) continue;
    if (auto ec = fs::rename(d.tmp, d.target)) {
      error = "cannot move " + d.out->what + " into place at '" + d.target + "': " + ec.message();
      cleanup();
      return false;
    }
    llvm::sys::DontRemoveFileOnSignal(d.tmp);
    d.tmp.clear();
  }
  return true;
}

} // namespace

llvm::Error writeOutputs(const std::vector<OutputFile> &outputs, const std::vector<ReadFile> &reads) {
  std::string error;
  if (writeOrExplain(outputs, reads, error)) return llvm::Error::success();
  return llvm::createStringError(llvm::inconvertibleErrorCode(), error);
}

llvm::Error writeFilesAtomically(const std::map<std::string, std::string> &files) {
  std::vector<OutputFile> outputs;
  for (const auto &[path, contents] : files) outputs.push_back({path, contents, "the output", ""});
  return writeOutputs(outputs, {});
}

void addFilesRead(const clang::SourceManager &sm, std::vector<ReadFile> &reads) {
  for (auto it = sm.fileinfo_begin(); it != sm.fileinfo_end(); ++it)
    reads.push_back({it->first.getName().str(), "a file the parse read"});
}

bool reportGeneratedInputs(const ParseRequest &request, const std::vector<GeneratedMarker> &markers) {
  bool found = false;
  for (const std::string &f : request.files) {
    std::optional<std::string> text = inputText(request, f);
    if (!text) continue;
    for (const GeneratedMarker &m : markers)
      if (llvm::StringRef(*text).starts_with(m.marker)) {
        print(llvm::errs(), {clang::DiagnosticsEngine::Error, f, 1, 1, m.message});
        found = true;
        break;
      }
  }
  return found;
}

} // namespace ptb

// What the command-line tools share: splitting `--`, writing files atomically and all at once.
#pragma once

#include "ToolRunner.h"

#include <CLI/CLI.hpp>

#include <map>
#include <string>
#include <vector>

namespace ptb {

// Splits argv at the first "--": the part before goes to the option parser, the part after is the
// compiler command line (as for every clang tool).
void splitAtDashDash(int argc, char **argv, std::vector<std::string> &toolArgs, std::vector<std::string> &compilerArgs);

// The options every tool of the project takes for its parse: the files, -p, --cuda-path, --extra-arg,
// --extra-arg-before.
void addParseOptions(CLI::App &app, ParseRequest &request);

// Parses `toolArgs` (argv before `--`, program name first) with CLI11. Returns -1 when the tool should go
// on, else the exit code to return (help, version, or a usage error, already printed).
int parseCommandLine(CLI::App &app, std::vector<std::string> toolArgs);

// Writes every (path -> contents) pair, each through a temporary file renamed into place, so that no
// reader ever sees a partial file. Returns false (and writes nothing more) at the first failure, with a
// message in `error`.
bool writeFilesAtomically(const std::map<std::string, std::string> &files, std::string &error);

// Reports `file:1:1: error: <message>` for every input that starts with one of the markers (the first
// line of one of the project's outputs: each tool refuses its own outputs and the other tool's), with that
// marker's message; true when there was one, and then nothing must be written. Checked before parsing: an
// output includes the runtime header, which the parse may not find.
struct GeneratedMarker {
  llvm::StringRef marker;
  std::string message;
};
bool reportGeneratedInputs(const std::vector<std::string> &files, const std::vector<GeneratedMarker> &markers);

} // namespace ptb

// What the command-line tools share: splitting `--`, writing files atomically and all at once.
#pragma once

#include "ToolRunner.h"

#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

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

// The exit codes of every tool of the project (docs/ptb-transform.md, "Exit codes"): 0 done, 1 an error in
// the input (it does not parse, a kernel is refused under --strict, a file cannot be read or written), 2 a
// usage error (the command line).
constexpr int kExitOk = 0, kExitInputError = 1, kExitUsage = 2;

// Runs a tool's main body and returns its exit code; an exception that leaves it (memory exhausted, a
// library's error not caught where it arose) is reported as `<tool>: error: <what>; nothing written` with
// kExitInputError instead of ending the process with std::terminate. Outputs are written all at once at
// the end (writeOutputs), so nothing is written when the body throws.
int runGuarded(llvm::StringRef tool, llvm::function_ref<int()> body);

// Parses `toolArgs` (argv before `--`, program name first) with CLI11. Returns -1 when the tool should go
// on, else the exit code to return: 0 for --help and --version, kExitUsage for a usage error (already
// printed).
int parseCommandLine(CLI::App &app, std::vector<std::string> toolArgs);

// Where the documentation page `page` ("generated-code.md") is, for --help: <prefix>/share/doc/ptb-tools/<page>
// when the tool runs from an installation that has it (<prefix>/bin/<tool>), else a sentence naming both
// places (the installed one under the install prefix, docs/<page> in the sources). `argv0`: the tool's argv[0].
std::string documentationPage(const char *argv0, llvm::StringRef page);

// One file a tool writes.
struct OutputFile {
  std::string path;
  std::string contents;
  std::string what;          // for messages: "the output of 'a.cu'", "the --export-fixes file"
  std::string replacesInput; // -i: the input this output rewrites in place; "" : it may replace no input
};

// A file the tool read (an input, a header the parse opened, a configuration file): no output may
// replace it, except the output whose replacesInput it is.
struct ReadFile {
  std::string path;
  std::string role; // for messages: "the input", "a file the parse read", "the --config file"
};

// Writes the outputs, or nothing (docs/outputs.md). First the checks: an output that is (by identity:
// device and inode, through symbolic links and hard links, not by spelling) one of `reads`, two outputs
// that are one file, an output that is a directory: all refused, nothing
// written. Then a regular (or new) file gets a temporary file in its directory, removed on SIGINT/SIGTERM,
// that is renamed over it once every temporary is written; a file it replaces keeps its permission bits
// (and owner and group where the caller may set them). A symbolic link is followed: its target is
// replaced, the link stays. A device node, FIFO or socket is opened and written through, never replaced.
// Returns the first failure (its message says what and where); the temporaries are removed then.
llvm::Error writeOutputs(const std::vector<OutputFile> &outputs, const std::vector<ReadFile> &reads);

// writeOutputs of every (path -> contents) pair, with no file to protect.
llvm::Error writeFilesAtomically(const std::map<std::string, std::string> &files);

// Adds every file `sm` read (the main file and the headers it includes) to `reads`, as "a file the parse
// read": an output must not replace a header of its own input.
void addFilesRead(const clang::SourceManager &sm, std::vector<ReadFile> &reads);

// Reports `file:1:1: error: <message>` for every input that starts with one of the markers (the first
// line of one of the project's outputs: each tool refuses its own outputs and the other tool's), with that
// marker's message; true when there was one, and then nothing must be written. Checked before parsing: an
// output includes the runtime header, which the parse may not find.
struct GeneratedMarker {
  llvm::StringRef marker;
  std::string message;
};
// The inputs' texts are read through inputText (after readInputs, a pipe's text is in memory).
bool reportGeneratedInputs(const ParseRequest &request, const std::vector<GeneratedMarker> &markers);

} // namespace ptb

// ptb-nvcc's reading of an nvcc command line (docs/ptb-nvcc.md): which arguments are inputs and
// outputs, whether the command is a compile of one CUDA source that ptb-nvcc transforms, and the
// dependency-file rewrite. No process is started here: main.cpp does that.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ptbnvcc {

// What an input file is, by its extension (nvcc's own rule) or by -x.
enum class InputKind { CudaSource, HostSource, Preprocessed, DeviceCode, Object, Other };

struct Input {
  size_t index = 0; // position in the (expanded) argument list
  std::string path;
  InputKind kind = InputKind::Other;
};

// What ptb-nvcc does with the command.
enum class Action { Transform, PassThrough };

struct Classification {
  Action action = Action::PassThrough;
  // Why the command is passed through (for PTB_NVCC_VERBOSE and the warning on several sources).
  std::string reason;
  // True when the command compiles CUDA source that is not transformed: ptb-nvcc says so on stderr.
  bool warnUntransformed = false;

  std::vector<Input> inputs;
  std::optional<Input> cudaInput; // the one transformed (Action::Transform)

  // Outputs as written on the command line (empty when absent).
  std::string outputFile;      // -o / --output-file
  std::string outputDir;       // -odir / --output-directory
  std::string depFile;         // -MF / --dependency-output
  std::string depTarget;       // -MT / --dependency-target-name
  bool depWithCompile = false; // -MD / -MMD
  std::string phase;           // the phase option that was given: "-c", "-dc", "-ptx", ... or "" (link)
  std::string language;        // the last -x value ("" when none)
};

// Whether the command compiles an object whose device code is its own module (phase -c, no relocatable
// device code, no -odir): then the twins part can be compiled apart and merged into that object.
bool compilesOwnModule(const std::vector<std::string> &args, const Classification &c);

// The arguments with the input at `inputIndex` replaced by `newInput`, without the options named in `drop`
// (with their values, in any spelling readOption reads: `-o x`, `-o=x`, `--output-file x`).
std::vector<std::string> replaceInput(const std::vector<std::string> &args, size_t inputIndex,
                                      const std::string &newInput, const std::vector<std::string> &drop);

// The arguments that compile ptb-transform's twins part (`twinsSource`) into `object`: the command's own,
// its input replaced, without its outputs and dependency-file options.
std::vector<std::string> twinsPartArguments(const std::vector<std::string> &args, size_t inputIndex,
                                            const std::string &twinsSource, const std::string &object);

// Reads one word list of nvcc options (no options files: expand them first).
Classification classify(const std::vector<std::string> &args);

// The arguments with every --options-file/-optf replaced by the words of its files (read as GNU
// tools read response files: blanks separate, quotes and backslashes escape). Returns false and sets
// `error` when a file cannot be read. `expanded` tells whether any file was there.
bool expandOptionsFiles(const std::vector<std::string> &args, std::vector<std::string> &out, bool &expanded,
                        std::string &error);

// Of an -Xcompiler list (`a,b,c`), the host-compiler flags that change what the source means, as a list
// again ("" when none): -I, -D, -U, -isystem, -iquote, -idirafter, -include (value glued or the next item),
// -std=, -fopenmp*, -pthread, -f[no-]exceptions, -f[no-]rtti, -f[un]signed-char, -f[no-]char8_t,
// -fms-extensions, -f[no-]gnu-keywords. The rest (warnings, code generation, GCC's own flags such as
// -fno-gnu-unique, which clang rejects) is for the host compiler only.
std::string hostParseFlags(const std::string &list);

// The flags of the command that matter to ptb-transform's parse, in clang/nvcc spelling that
// ptb-transform's front end accepts: -I, -isystem, -D, -U, -include, -std, -Xcompiler (hostParseFlags),
// -x cu.
std::vector<std::string> parseFlags(const std::vector<std::string> &args);

// The file nvcc writes when no -o is given (phase "-c" and input "src/a.cu": "a.o", in -odir when
// given); "" when the default name does not come from the input (linking: a.out; -lib: a.a).
std::string defaultOutputName(const Classification &c);

// The dependency file nvcc writes for -MD/-MMD: -MF, else -o with its suffix replaced by ".d", else the
// input's name with ".d" (in -odir). `outputFile` is the -o the command runs with.
std::string dependencyFileName(const Classification &c, const std::string &outputFile);

// nvcc's dependency file for the compile of `tempOutput` (ptb-transform's output, in `tempDir`) made to
// name the original: `tempOutput` becomes `originalInput`; a copy of a header ptb-transform wrote in
// `tempDir` becomes the header (`<inputDir>/<path without .ptb>`); a path that goes through `tempDir`
// and out of it with `..` (a local #include pointed at the original) loses the detour. Every other
// line is kept byte for byte; a prerequisite named twice after the rewrite is named once.
std::string rewriteDependencies(const std::string &text, const std::string &tempDir, const std::string &tempOutput,
                                const std::string &originalInput, const std::string &inputDir);

// Make's escapes in a dependency file, as nvcc writes them ("\ " for a blank, "\#", "$$").
std::string unescapeDepPath(const std::string &s);
std::string escapeDepPath(const std::string &s);

} // namespace ptbnvcc

// The one way the project's tools report a problem: in clang's form (`file:line:col: error: message`),
// through clang's DiagnosticsEngine while a translation unit is parsed (report), and as a Diagnostic value
// where no source manager is at hand (a command line, a configuration file, what is left after the parses),
// printed the same way (print).
#pragma once

#include "llvm/Support/Error.h"

#include "clang/Basic/Diagnostic.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace ptb {

// Reports a diagnostic of the given level at `loc`, in clang's format.
void report(clang::DiagnosticsEngine &diags, clang::SourceLocation loc, clang::DiagnosticsEngine::Level level,
            const std::string &message);

// A diagnostic with its location as text coordinates: a file, and a line and column when they are known.
struct Diagnostic {
  clang::DiagnosticsEngine::Level level = clang::DiagnosticsEngine::Error;
  std::string file;              // "" : no file
  unsigned line = 0, column = 0; // 0 : the whole file
  std::string message;
};

// `file:line:col: error: message`, `file: error: message` or `error: message` (note:, warning: likewise),
// and a newline.
void print(llvm::raw_ostream &os, const Diagnostic &d);

// Prints each error that `error` holds as `error: <message>` (consumes it; nothing for success).
void print(llvm::raw_ostream &os, llvm::Error error);

} // namespace ptb

#include "Diagnostics.h"

namespace ptb {

void report(clang::DiagnosticsEngine &diags, clang::SourceLocation loc, clang::DiagnosticsEngine::Level level,
            const std::string &message) {
  unsigned id = diags.getCustomDiagID(level, "%0");
  diags.Report(loc, id) << message;
}

void print(llvm::raw_ostream &os, const Diagnostic &d) {
  if (!d.file.empty()) {
    os << d.file;
    if (d.line) os << ":" << d.line << ":" << d.column;
    os << ": ";
  }
  os << (d.level == clang::DiagnosticsEngine::Note      ? "note"
         : d.level == clang::DiagnosticsEngine::Warning ? "warning"
                                                        : "error")
     << ": " << d.message << "\n";
}

void print(llvm::raw_ostream &os, llvm::Error error) {
  llvm::handleAllErrors(std::move(error), [&](const llvm::ErrorInfoBase &e) {
    print(os, {clang::DiagnosticsEngine::Error, "", 0, 0, e.message()});
  });
}

} // namespace ptb

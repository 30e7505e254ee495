#include "SourceText.h"

namespace ptb {

std::string quoteForLineDirective(llvm::StringRef path) {
  std::string out;
  for (char c : path) {
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
  return out;
}

} // namespace ptb

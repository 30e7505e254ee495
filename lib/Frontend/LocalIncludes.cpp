#include "LocalIncludes.h"

#include "FileSelection.h"

#include "clang/Basic/LangOptions.h"
#include "clang/Lex/Lexer.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

namespace ptb {

using namespace clang;

std::vector<LocalInclude> localIncludes(llvm::StringRef text, llvm::StringRef includerPath) {
  std::vector<LocalInclude> out;
  llvm::SmallString<256> dir(absolutePath(includerPath));
  llvm::sys::path::remove_filename(dir);
  LangOptions lang;
  lang.CPlusPlus = lang.CPlusPlus17 = lang.CUDA = true;
  Lexer lexer(SourceLocation::getFromRawEncoding(1), lang, text.begin(), text.begin(), text.end());
  auto offsetOf = [&](const Token &t) { return t.getLocation().getRawEncoding() - 1; };
  Token tok;
  for (lexer.LexFromRawLexer(tok); tok.isNot(tok::eof);) {
    if (!tok.is(tok::hash) || !tok.isAtStartOfLine()) {
      lexer.LexFromRawLexer(tok);
      continue;
    }
    lexer.LexFromRawLexer(tok);
    if (!tok.is(tok::raw_identifier) || tok.isAtStartOfLine()) continue;
    llvm::StringRef directive = tok.getRawIdentifier();
    if (directive != "include" && directive != "include_next" && directive != "import") continue;
    lexer.LexFromRawLexer(tok);
    if (!tok.is(tok::string_literal) || tok.isAtStartOfLine()) continue;
    llvm::StringRef quoted = text.substr(offsetOf(tok), tok.getLength());
    if (quoted.size() < 2 || quoted.front() != '"' || quoted.back() != '"') continue;
    llvm::StringRef name = quoted.drop_front().drop_back();
    if (name.empty() || llvm::sys::path::is_absolute(name)) continue;
    llvm::SmallString<256> candidate(dir);
    llvm::sys::path::append(candidate, name);
    if (llvm::sys::fs::is_regular_file(candidate))
      out.push_back({offsetOf(tok), tok.getLength(), absolutePath(candidate)});
  }
  return out;
}

std::string relocatedInclude(const LocalInclude &include, llvm::StringRef includerDir, llvm::StringRef outputDir) {
  llvm::SmallString<256> a, b;
  if (!llvm::sys::fs::real_path(includerDir, a) && !llvm::sys::fs::real_path(outputDir, b) && a == b) return "";
  if (absolutePath(includerDir) == absolutePath(outputDir)) return "";
  return "\"" + relativePath(outputDir, include.target) + "\"";
}

} // namespace ptb

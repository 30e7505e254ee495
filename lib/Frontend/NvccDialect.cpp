#include "NvccDialect.h"

#include "clang/Basic/LangOptions.h"
#include "clang/Lex/Lexer.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

namespace ptb {

namespace {

struct RawToken {
  clang::tok::TokenKind kind;
  unsigned offset;
  llvm::StringRef identifier; // for raw identifiers
};

// `<<` or `>>` followed by a blank, a line continuation or a comment: the only texts that can need work.
bool mayHaveSpacedChevrons(llvm::StringRef text) {
  for (char c : {'<', '>'}) {
    const char pair[3] = {c, c, 0};
    for (size_t at = text.find(pair); at != llvm::StringRef::npos; at = text.find(pair, at + 1)) {
      char next = at + 2 < text.size() ? text[at + 2] : 0;
      if (next == ' ' || next == '\t' || next == '\n' || next == '\r' || next == '/' || next == '\\' || next == '\f' ||
          next == '\v')
        return true;
    }
  }
  return false;
}

} // namespace

std::string normalizeLaunchChevrons(llvm::StringRef text, bool &changed) {
  changed = false;
  if (!mayHaveSpacedChevrons(text)) return text.str();
  std::string buffer = text.str(); // null-terminated, as the lexer needs
  clang::LangOptions lo;
  lo.CPlusPlus = lo.CPlusPlus11 = lo.CPlusPlus14 = lo.CPlusPlus17 = true;
  lo.CUDA = true; // `<<<` and `>>>` are tokens
  lo.LineComment = true;
  const clang::SourceLocation base = clang::SourceLocation::getFromRawEncoding(1);
  clang::Lexer lexer(base, lo, buffer.data(), buffer.data(), buffer.data() + buffer.size());
  std::vector<RawToken> toks;
  for (clang::Token t;;) {
    lexer.LexFromRawLexer(t);
    if (t.is(clang::tok::eof)) break;
    RawToken r{t.getKind(), t.getLocation().getRawEncoding() - base.getRawEncoding(), {}};
    if (t.is(clang::tok::raw_identifier)) r.identifier = t.getRawIdentifier();
    toks.push_back(r);
  }
  std::string out = buffer;
  // `AB<gap>C` -> `ABC<gap>`: the third character moves next to the first two, the gap (blanks,
  // comments, line breaks) after it; the length and the line breaks stay.
  auto join = [&](const RawToken &pair, const RawToken &third, char c) {
    unsigned a = pair.offset, b = third.offset;
    out.replace(a, b + 1 - a, std::string(3, c) + buffer.substr(a + 2, b - a - 2));
    changed = true;
  };
  using clang::tok::TokenKind;
  for (size_t i = 0; i < toks.size(); ++i) {
    bool plain = toks[i].kind == clang::tok::lesslessless;
    bool spaced = toks[i].kind == clang::tok::lessless && i + 1 < toks.size() && toks[i + 1].kind == clang::tok::less &&
                  !(i > 0 && toks[i - 1].kind == clang::tok::raw_identifier && toks[i - 1].identifier == "operator");
    if (!plain && !spaced) continue;
    if (spaced) join(toks[i], toks[i + 1], '<');
    // The matching close: the first `>>>` or `>>`+`>` outside brackets, before the statement ends.
    int depth = 0;
    for (size_t j = i + (spaced ? 2 : 1); j < toks.size(); ++j) {
      TokenKind k = toks[j].kind;
      if (k == clang::tok::l_paren || k == clang::tok::l_square || k == clang::tok::l_brace)
        ++depth;
      else if (k == clang::tok::r_paren || k == clang::tok::r_square || k == clang::tok::r_brace) {
        if (--depth < 0) break;
      } else if (depth == 0 && (k == clang::tok::semi || k == clang::tok::greatergreatergreater)) {
        break;
      } else if (depth == 0 && k == clang::tok::greatergreater && j + 1 < toks.size() &&
                 toks[j + 1].kind == clang::tok::greater) {
        join(toks[j], toks[j + 1], '>');
        break;
      }
    }
  }
  return out;
}

const char *const kNvccCompatHeader = "ptb_nvcc_compat.h";

namespace {

// crt/math_functions.hpp's min/max, which nvcc declares __host__ __device__ and clang's CUDA wrapper
// makes __device__ only; crt/math_functions.h's host int min/max.
std::string minMaxOverloads() {
  struct Sig {
    const char *ret, *a, *b;
  };
  static const Sig sigs[] = {
      {"int", "int", "int"},
      {"unsigned int", "unsigned int", "unsigned int"},
      {"unsigned int", "int", "unsigned int"},
      {"unsigned int", "unsigned int", "int"},
      {"long int", "long int", "long int"},
      {"unsigned long int", "unsigned long int", "unsigned long int"},
      {"unsigned long int", "long int", "unsigned long int"},
      {"unsigned long int", "unsigned long int", "long int"},
      {"long long int", "long long int", "long long int"},
      {"unsigned long long int", "unsigned long long int", "unsigned long long int"},
      {"unsigned long long int", "long long int", "unsigned long long int"},
      {"unsigned long long int", "unsigned long long int", "long long int"},
      {"float", "float", "float"},
      {"double", "double", "double"},
      {"double", "float", "double"},
      {"double", "double", "float"},
  };
  std::string out;
  for (const char *fn : {"min", "max"})
    for (const Sig &s : sigs)
      out += std::string("static inline __host__ ") + s.ret + " " + fn + "(const " + s.a + " a, const " + s.b +
             " b) { return static_cast<" + s.ret + ">(a) " + (fn[1] == 'i' ? "<" : ">") + " static_cast<" + s.ret +
             ">(b) ? static_cast<" + s.ret + ">(a) : static_cast<" + s.ret + ">(b); }\n";
  return out;
}

// GCC's omp.h, the one nvcc's host compiler uses: the newest /usr/lib*/gcc/<triple>/<version>/include/omp.h.
std::string gccOmpHeader() {
  std::string best;
  int bestVersion = -1;
  for (const char *root : {"/usr/lib/gcc", "/usr/lib64/gcc"}) {
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator t(root, ec), e; !ec && t != e; t.increment(ec)) {
      std::error_code ec2;
      for (llvm::sys::fs::directory_iterator v(t->path(), ec2), ve; !ec2 && v != ve; v.increment(ec2)) {
        llvm::SmallString<256> h(v->path());
        llvm::sys::path::append(h, "include", "omp.h");
        int version = 0;
        if (llvm::sys::path::filename(v->path()).consumeInteger(10, version)) continue;
        if (llvm::sys::fs::exists(h) && version > bestVersion) {
          bestVersion = version;
          best = std::string(h);
        }
      }
    }
  }
  return best;
}

} // namespace

std::vector<FrontendHeader> nvccCompatibilityHeaders(const std::string &clangResourceDir) {
  std::vector<FrontendHeader> headers;
  // omp.h: nvcc's host compiler (GCC) has one; Debian's clang 19 has none unless libomp-19-dev is installed,
  // and GCC's declares allocators with a two-argument __malloc__ attribute that clang rejects. Served only
  // when clang has none of its own (this directory comes before clang's in the search).
  llvm::SmallString<256> clangOmp(clangResourceDir);
  llvm::sys::path::append(clangOmp, "include", "omp.h");
  static const std::string gccOmp = gccOmpHeader();
  if (!gccOmp.empty() && !llvm::sys::fs::exists(clangOmp))
    headers.push_back(
        {"omp.h", "// ptb-transform's parse only: GCC's omp.h (what nvcc's host compiler uses), with its\n"
                  "// two-argument __malloc__ attribute, which clang 19 rejects, made one-argument.\n"
                  "#pragma once\n#pragma push_macro(\"__malloc__\")\n#undef __malloc__\n"
                  "#define __malloc__(...) __malloc__\n#include \"" +
                      gccOmp +
                      "\"\n"
                      "#pragma pop_macro(\"__malloc__\")\n"});

  std::string compat =
      "// ptb-transform's parse only (never in an output): what nvcc's host headers supply and clang 19's\n"
      "// CUDA headers do not, so that what nvcc compiles parses. docs/ptb-transform.md lists each.\n"
      "#pragma once\n"
      "// nvcc's headers (crt/common_functions.h) make these visible to host code without an include:\n"
      "// time(), memcpy(), rand(), ... (not <stdio.h> or <assert.h>: nvcc rejects printf and assert there).\n"
      "#include <string.h>\n#include <time.h>\n#include <stdlib.h>\n"
      "// cooperative_groups.h declares cluster groups (this_cluster()) only under nvcc, or where this says the\n"
      "// cluster intrinsics exist, as clang 19's CUDA headers declare them (sm_90): so that cluster kernels parse.\n"
      "#ifndef _CG_CLUSTER_INTRINSICS_AVAILABLE\n#define _CG_CLUSTER_INTRINSICS_AVAILABLE 1\n#endif\n"
      "#if defined(__cplusplus)\n" +
      minMaxOverloads() + "#endif\n";
  headers.push_back({kNvccCompatHeader, compat});
  return headers;
}

namespace {

class BufferFile : public llvm::vfs::File {
public:
  BufferFile(llvm::vfs::Status st, std::string text) : st(std::move(st)), text(std::move(text)) {}
  llvm::ErrorOr<llvm::vfs::Status> status() override { return st; }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> getBuffer(const llvm::Twine &name, int64_t, bool, bool) override {
    return llvm::MemoryBuffer::getMemBufferCopy(text, name);
  }
  std::error_code close() override { return {}; }

private:
  llvm::vfs::Status st;
  std::string text;
};

class NormalizingFileSystem : public llvm::vfs::ProxyFileSystem {
public:
  NormalizingFileSystem(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> base,
                        std::function<bool(llvm::StringRef)> normalize)
      : ProxyFileSystem(std::move(base)), normalize(std::move(normalize)) {}

  llvm::ErrorOr<std::unique_ptr<llvm::vfs::File>> openFileForRead(const llvm::Twine &path) override {
    auto file = ProxyFileSystem::openFileForRead(path);
    llvm::SmallString<256> name;
    path.toVector(name);
    if (!file || !normalize(name)) return file;
    auto st = (*file)->status();
    if (!st) return file;
    auto buf = (*file)->getBuffer(name, st->getSize(), /*RequiresNullTerminator=*/false);
    if (!buf) return ProxyFileSystem::openFileForRead(path);
    bool changed = false;
    std::string text = normalizeLaunchChevrons((*buf)->getBuffer(), changed);
    return std::unique_ptr<llvm::vfs::File>(std::make_unique<BufferFile>(*st, std::move(text)));
  }

private:
  std::function<bool(llvm::StringRef)> normalize;
};

} // namespace

llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem>
chevronNormalizingFileSystem(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> base,
                             std::function<bool(llvm::StringRef path)> normalize) {
  return llvm::makeIntrusiveRefCnt<NormalizingFileSystem>(std::move(base), std::move(normalize));
}

} // namespace ptb

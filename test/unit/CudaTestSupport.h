// Shared by the unit tests: parse CUDA source held in a string exactly as ptb-transform parses a file
// (lib/Frontend/ToolRunner.cpp: cudaArgumentsAdjuster, Debian's clang++ 19 as the driver), then run the
// kernel inventory and the PTB rewrite on it.
#pragma once

#include "CudaFrontend.h"
#include "KernelInventory.h"
#include "PtbRewrite.h"
#include "TranslationUnitInventory.h"

#include "clang/Basic/Diagnostic.h"
#include "clang/Frontend/ASTUnit.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace ptbtest {

// CUDA found the way the tool finds it (no --cuda-path), and the stub include directory. With
// PTB_UNIT_PRETEND_NO_CUDA set, behaves as if no toolkit were installed.
struct CudaSetup {
  bool ok = false;
  std::string why; // when not ok
  ptb::CudaInstall cuda;
  std::string stubDir;
};
const CudaSetup &cudaSetup();

// Tests that parse CUDA skip, with the reason, when no toolkit is installed.
#define PTB_REQUIRE_CUDA()                                                                                             \
  do {                                                                                                                 \
    if (!::ptbtest::cudaSetup().ok)                                                                                    \
      GTEST_SKIP() << "CUDA toolkit not usable here, so CUDA parsing is not tested: " << ::ptbtest::cudaSetup().why;   \
  } while (0)

// The compiler arguments (without argv[0] and without the file) that ptb's adjuster gives for
// `clang++ <extra...> <file>` on the given side.
std::vector<std::string> cudaParseArgs(const std::string &file, const std::vector<std::string> &extra = {},
                                       ptb::ParseSide side = ptb::ParseSide::Device);

// Diagnostics as "line:col: level: message" (line/col in the main file's presumed location, "" outside).
class DiagCapture : public clang::DiagnosticConsumer {
public:
  void HandleDiagnostic(clang::DiagnosticsEngine::Level level, const clang::Diagnostic &info) override;
  std::vector<std::string> messages;
  unsigned errors = 0, warnings = 0;
  std::string all() const;
};

// One parsed translation unit, kept alive so the inventory's AST pointers stay valid. As the tool does
// (ToolRunner.cpp), the device side is parsed first and the host side when the device side fails.
struct ParsedTU {
  std::unique_ptr<DiagCapture> diags; // declared first: outlives the ASTUnit that reports to it
  std::unique_ptr<clang::ASTUnit> ast;
  ptb::Inventory inv;
  bool ok = false;                              // parsed without errors
  ptb::ParseSide side = ptb::ParseSide::Device; // the side that was used
  std::vector<std::string> deviceDiags;         // what the device side said when it failed
  // The kernel with this name (or qualified name); null if none.
  const ptb::Kernel *kernel(const std::string &name) const;
};
std::unique_ptr<ParsedTU> parseCuda(const std::string &code, const std::string &file = "input.cu",
                                    const std::vector<std::string> &extraArgs = {});

// The shared source of KernelInventoryTest.cpp, parsed once for the whole binary (null without CUDA).
const std::string &inventorySource();
const char *inventoryFileName();
const ParsedTU *inventoryTU();

// One run of analyzeTranslationUnit + rewriteTranslationUnit through a FrontendAction, as the tool does.
struct RewriteRun {
  bool parsed = false;                          // the consumer ran (no parse errors)
  ptb::ParseSide side = ptb::ParseSide::Device; // the side that was used (host after a device failure)
  bool rewriteOk = false;                       // rewriteTranslationUnit returned true
  ptb::RewriteResult result;
  std::vector<std::string> diags;
  unsigned errors = 0, warnings = 0;
  std::string allDiags() const;
};
RewriteRun rewriteCuda(const std::string &code, const ptb::RewriteOptions &options = {},
                       const std::string &file = "input.cu");

// Helpers for assertions.
std::string join(const std::vector<std::string> &v, const std::string &sep = ", ");
unsigned countOf(const std::string &haystack, const std::string &needle);
// 1-based line of the first occurrence of `needle` in `code` (0 if absent).
unsigned lineOf(const std::string &code, const std::string &needle);
// 1-based line and column of the first occurrence of `needle` in `code`, plus `skip` characters.
struct Pos {
  unsigned line = 0, column = 0;
};
Pos posOf(const std::string &code, const std::string &needle, unsigned skip = 0);
// Whether `loc` is at `pos` in `file`.
::testing::AssertionResult isAt(const ptb::Location &loc, const std::string &file, Pos pos);

} // namespace ptbtest

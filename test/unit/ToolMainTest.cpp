// What the command-line tools share (lib/Driver/ToolMain.h).
#include "ToolMain.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

namespace {

using Strings = std::vector<std::string>;

std::string readFile(const std::string &path) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  return buf ? (*buf)->getBuffer().str() : "<unreadable>";
}

TEST(SplitAtDashDash, SplitsAtTheFirstDashDash) {
  const char *argv[] = {"ptb-transform", "--list-kernels", "a.cu", "--", "-DX", "--", "-I/inc"};
  Strings tool, compiler;
  ptb::splitAtDashDash(7, const_cast<char **>(argv), tool, compiler);
  EXPECT_EQ(tool, (Strings{"ptb-transform", "--list-kernels", "a.cu"}));
  EXPECT_EQ(compiler, (Strings{"-DX", "--", "-I/inc"}));
}

TEST(SplitAtDashDash, NoDashDash) {
  const char *argv[] = {"ptb-transform", "a.cu"};
  Strings tool, compiler;
  ptb::splitAtDashDash(2, const_cast<char **>(argv), tool, compiler);
  EXPECT_EQ(tool, (Strings{"ptb-transform", "a.cu"}));
  EXPECT_TRUE(compiler.empty());
}

class WriteFilesAtomically : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> p;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("ptb-unit-write", p));
    dir = std::string(p);
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }
  // Files in `dir`, recursively, relative names.
  Strings listing() const {
    Strings out;
    std::error_code ec;
    for (llvm::sys::fs::recursive_directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
      out.push_back(it->path().substr(dir.size() + 1));
    std::sort(out.begin(), out.end());
    return out;
  }
  std::string dir;
};

TEST_F(WriteFilesAtomically, WritesEveryFileAndNoTemporaries) {
  std::string error;
  ASSERT_TRUE(ptb::writeFilesAtomically({{dir + "/a.cu", "A\n"}, {dir + "/sub/b.cu", "B\n"}}, error)) << error;
  EXPECT_EQ(readFile(dir + "/a.cu"), "A\n");
  EXPECT_EQ(readFile(dir + "/sub/b.cu"), "B\n");
  EXPECT_EQ(listing(), (Strings{"a.cu", "sub", "sub/b.cu"}));
}

TEST_F(WriteFilesAtomically, ReplacesAnExistingFile) {
  std::string error;
  ASSERT_TRUE(ptb::writeFilesAtomically({{dir + "/a.cu", "old"}}, error)) << error;
  ASSERT_TRUE(ptb::writeFilesAtomically({{dir + "/a.cu", "new"}}, error)) << error;
  EXPECT_EQ(readFile(dir + "/a.cu"), "new");
}

TEST_F(WriteFilesAtomically, AFailureWritesNothing) {
  // "blocker" is a file, so "blocker/x.cu" cannot be created; "a.cu" sorts first and must not appear.
  std::string error;
  ASSERT_TRUE(ptb::writeFilesAtomically({{dir + "/blocker", "file"}}, error)) << error;
  EXPECT_FALSE(ptb::writeFilesAtomically({{dir + "/a.cu", "A"}, {dir + "/blocker/x.cu", "X"}}, error));
  EXPECT_NE(error.find("blocker"), std::string::npos) << error;
  EXPECT_EQ(listing(), (Strings{"blocker"}));
}

} // namespace

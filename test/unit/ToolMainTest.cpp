// What the command-line tools share (lib/Driver/ToolMain.h).
#include "ToolMain.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "ErrorMessage.h"

#include "gtest/gtest.h"

#include <stdexcept>
#include <thread>

#include <sys/stat.h>
#include <sys/sysmacros.h>

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

// An exception that leaves a tool's body is an error with exit code 1 and a message, not std::terminate.
TEST(RunGuarded, ExceptionsBecomeAnInputErrorWithAMessage) {
  EXPECT_EQ(ptb::runGuarded("tool", [] { return 0; }), 0);
  EXPECT_EQ(ptb::runGuarded("tool", [] { return 2; }), 2);
  testing::internal::CaptureStderr();
  EXPECT_EQ(ptb::runGuarded("tool", []() -> int { throw std::runtime_error("out of luck"); }), ptb::kExitInputError);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "tool: error: out of luck; nothing written\n");
  testing::internal::CaptureStderr();
  EXPECT_EQ(ptb::runGuarded("tool", []() -> int { throw 7; }), ptb::kExitInputError);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "tool: error: an unknown exception; nothing written\n");
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
  ASSERT_EQ(messageOf(ptb::writeFilesAtomically({{dir + "/a.cu", "A\n"}, {dir + "/sub/b.cu", "B\n"}})), "");
  EXPECT_EQ(readFile(dir + "/a.cu"), "A\n");
  EXPECT_EQ(readFile(dir + "/sub/b.cu"), "B\n");
  EXPECT_EQ(listing(), (Strings{"a.cu", "sub", "sub/b.cu"}));
}

TEST_F(WriteFilesAtomically, ReplacesAnExistingFile) {
  ASSERT_EQ(messageOf(ptb::writeFilesAtomically({{dir + "/a.cu", "old"}})), "");
  ASSERT_EQ(messageOf(ptb::writeFilesAtomically({{dir + "/a.cu", "new"}})), "");
  EXPECT_EQ(readFile(dir + "/a.cu"), "new");
}

TEST_F(WriteFilesAtomically, AFailureWritesNothing) {
  // "blocker" is a file, so "blocker/x.cu" cannot be created; "a.cu" sorts first and must not appear.
  std::string error;
  ASSERT_EQ(messageOf(ptb::writeFilesAtomically({{dir + "/blocker", "file"}})), "");
  error = messageOf(ptb::writeFilesAtomically({{dir + "/a.cu", "A"}, {dir + "/blocker/x.cu", "X"}}));
  EXPECT_NE(error, "");
  EXPECT_NE(error.find("blocker"), std::string::npos) << error;
  EXPECT_EQ(listing(), (Strings{"blocker"}));
}

// ---- writeOutputs: what an output may not replace, and how special files are written ----

TEST_F(WriteFilesAtomically, RefusesAnOutputThatIsAFileReadByIdentity) {
  std::string error;
  ASSERT_EQ(messageOf(ptb::writeFilesAtomically({{dir + "/in.cu", "IN"}})), "");
  ASSERT_FALSE(llvm::sys::fs::create_link("in.cu", dir + "/soft.cu"));
  ASSERT_FALSE(llvm::sys::fs::create_hard_link(dir + "/in.cu", dir + "/hard.cu"));
  const std::vector<ptb::ReadFile> reads = {{dir + "/in.cu", "the input"}};
  for (const std::string &out : {dir + "/in.cu", dir + "/./in.cu", dir + "/soft.cu", dir + "/hard.cu"}) {
    error = messageOf(
        ptb::writeOutputs({{dir + "/new.cu", "NEW", "the first", ""}, {out, "OUT", "the output", ""}}, reads));
    EXPECT_NE(error, "");
    EXPECT_NE(error.find("refusing to write the output to '" + out + "': it is the input '" + dir + "/in.cu'"),
              std::string::npos)
        << error;
  }
  EXPECT_EQ(readFile(dir + "/in.cu"), "IN");
  EXPECT_EQ(listing(), (Strings{"hard.cu", "in.cu", "soft.cu"}));
  // -i: an output may replace its own input (here through its symbolic link, which stays a link).
  ASSERT_EQ(messageOf(ptb::writeOutputs({{dir + "/soft.cu", "OUT", "the output", dir + "/in.cu"}}, reads)), "");
  EXPECT_EQ(readFile(dir + "/in.cu"), "OUT");
  EXPECT_TRUE(llvm::sys::fs::is_symlink_file(dir + "/soft.cu"));
}

TEST_F(WriteFilesAtomically, RefusesTwoOutputsThatAreOneFile) {
  std::string error;
  error = messageOf(
      ptb::writeOutputs({{dir + "/a.cu", "1", "the first", ""}, {dir + "/sub/../a.cu", "2", "the second", ""}}, {}));
  EXPECT_NE(error, "");
  EXPECT_NE(error.find("the first and the second would both be written to '" + dir + "/sub/../a.cu'"),
            std::string::npos)
      << error;
  ASSERT_EQ(messageOf(ptb::writeFilesAtomically({{dir + "/b.cu", "B"}})), "");
  ASSERT_FALSE(llvm::sys::fs::create_link("b.cu", dir + "/b-link.cu"));
  error = messageOf(
      ptb::writeOutputs({{dir + "/b.cu", "1", "the first", ""}, {dir + "/b-link.cu", "2", "the second", ""}}, {}));
  EXPECT_NE(error, "");
  EXPECT_EQ(readFile(dir + "/b.cu"), "B");
  EXPECT_EQ(listing(), (Strings{"b-link.cu", "b.cu"}));
}

TEST_F(WriteFilesAtomically, RefusesADirectory) {
  std::string error;
  ASSERT_FALSE(llvm::sys::fs::create_directory(dir + "/d"));
  error = messageOf(ptb::writeFilesAtomically({{dir + "/a.cu", "A"}, {dir + "/d", "D"}}));
  EXPECT_NE(error, "");
  EXPECT_NE(error.find("it is a directory"), std::string::npos) << error;
  EXPECT_EQ(listing(), (Strings{"d"}));
}

TEST_F(WriteFilesAtomically, KeepsTheModeOfTheFileItReplaces) {
  ASSERT_EQ(messageOf(ptb::writeFilesAtomically({{dir + "/a.cu", "old"}})), "");
  ASSERT_FALSE(llvm::sys::fs::setPermissions(dir + "/a.cu", static_cast<llvm::sys::fs::perms>(0751)));
  ASSERT_EQ(messageOf(ptb::writeFilesAtomically({{dir + "/a.cu", "new"}})), "");
  llvm::sys::fs::file_status st;
  ASSERT_FALSE(llvm::sys::fs::status(dir + "/a.cu", st));
  EXPECT_EQ(static_cast<unsigned>(st.permissions()), 0751u);
  EXPECT_EQ(readFile(dir + "/a.cu"), "new");
}

TEST_F(WriteFilesAtomically, FollowsSymbolicLinksAndKeepsThem) {
  ASSERT_EQ(messageOf(ptb::writeFilesAtomically({{dir + "/sub/target.cu", "old"}})), "");
  ASSERT_FALSE(llvm::sys::fs::create_link("sub/target.cu", dir + "/link.cu"));
  ASSERT_FALSE(llvm::sys::fs::create_link("sub/created.cu", dir + "/dangling.cu"));
  ASSERT_EQ(messageOf(ptb::writeFilesAtomically({{dir + "/link.cu", "L"}, {dir + "/dangling.cu", "D"}})), "");
  EXPECT_TRUE(llvm::sys::fs::is_symlink_file(dir + "/link.cu"));
  EXPECT_TRUE(llvm::sys::fs::is_symlink_file(dir + "/dangling.cu"));
  EXPECT_EQ(readFile(dir + "/sub/target.cu"), "L");
  EXPECT_EQ(readFile(dir + "/sub/created.cu"), "D");
  EXPECT_EQ(listing(), (Strings{"dangling.cu", "link.cu", "sub", "sub/created.cu", "sub/target.cu"}));
}

TEST_F(WriteFilesAtomically, WritesThroughAFifo) {
  ASSERT_EQ(::mkfifo((dir + "/fifo").c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = readFile(dir + "/fifo"); });
  EXPECT_EQ(messageOf(ptb::writeFilesAtomically({{dir + "/fifo", "through"}, {dir + "/a.cu", "A"}})), "");
  reader.join();
  EXPECT_EQ(got, "through");
  llvm::sys::fs::file_status st;
  ASSERT_FALSE(llvm::sys::fs::status(dir + "/fifo", st, /*Follow=*/false));
  EXPECT_EQ(st.type(), llvm::sys::fs::file_type::fifo_file);
  EXPECT_EQ(listing(), (Strings{"a.cu", "fifo"}));
}

TEST_F(WriteFilesAtomically, WritesThroughADeviceNode) {
  // A private node of the null device (root only), never the system's /dev/null.
  if (::mknod((dir + "/null").c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) GTEST_SKIP() << "mknod needs root";
  EXPECT_EQ(messageOf(ptb::writeFilesAtomically({{dir + "/null", "gone"}})), "");
  llvm::sys::fs::file_status st;
  ASSERT_FALSE(llvm::sys::fs::status(dir + "/null", st, /*Follow=*/false));
  EXPECT_EQ(st.type(), llvm::sys::fs::file_type::character_file);
  EXPECT_EQ(listing(), (Strings{"null"}));
}

TEST(ReportGeneratedInputs, EachMarkerWithItsMessage) {
  llvm::SmallString<128> d;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("ptb-unit-marker", d));
  std::string dir(d), error;
  ASSERT_EQ(messageOf(ptb::writeFilesAtomically({{dir + "/a.cu", "// Generated by A\n"},
                                                 {dir + "/b.cu", "// Generated by B\n"},
                                                 {dir + "/c.cu", "int c;\n"}})),
            "");
  auto request = [](std::vector<std::string> files) {
    ptb::ParseRequest r;
    r.files = std::move(files);
    return r;
  };
  EXPECT_FALSE(ptb::reportGeneratedInputs(request({dir + "/c.cu"}), {{"// Generated by A", "from A"}}));
  EXPECT_TRUE(ptb::reportGeneratedInputs(request({dir + "/c.cu", dir + "/b.cu"}),
                                         {{"// Generated by A", "from A"}, {"// Generated by B", "from B"}}));
  // An input read from a pipe is checked in the text read (the pipe cannot be read again).
  ptb::ParseRequest piped = request({dir + "/c.cu"});
  piped.inputTexts[dir + "/c.cu"] = "// Generated by A\n";
  EXPECT_TRUE(ptb::reportGeneratedInputs(piped, {{"// Generated by A", "from A"}}));
  llvm::sys::fs::remove_directories(dir);
}

} // namespace

// Included files (lib/Frontend/FileSelection.h, the output layout in lib/Rewrite/OutputPaths.h and the
// collection in lib/Rewrite/RewriteOutputs.h, --opt= in lib/Driver/ToolMain.h): which files are selected,
// where their copies go, and what happens when two inputs would write one copy differently.
#include "FileSelection.h"
#include "PtbRewrite.h"
#include "ToolMain.h"

#include "ErrorMessage.h"

#include "gtest/gtest.h"

namespace {

using Strings = std::vector<std::string>;

ptb::FileSelection selection(const std::optional<std::string> &filter, const Strings &excluded = {"/opt/cuda"}) {
  std::string error;
  auto s = ptb::FileSelection::make("/src/app/main.cu", filter, excluded, error);
  EXPECT_TRUE(s.has_value()) << error;
  return s ? *s : ptb::FileSelection();
}

TEST(FileSelection, DefaultSelectsTheInputsDirectoryTree) {
  ptb::FileSelection s = selection(std::nullopt);
  EXPECT_TRUE(s.selectsIncludedFiles());
  EXPECT_TRUE(s.selectsPath("/src/app/kernel.cu"));
  EXPECT_TRUE(s.selectsPath("/src/app/sub/deep/k.cuh"));
  EXPECT_TRUE(s.selectsPath("/src/app/sub/../k.h"));
  EXPECT_FALSE(s.selectsPath("/src/other/k.cuh"));
  EXPECT_FALSE(s.selectsPath("/src/app2/k.cuh")); // a sibling whose name starts like the directory
  EXPECT_FALSE(s.selectsPath("/src/app/../lib/k.cuh"));
  EXPECT_FALSE(s.selectsPath("/usr/include/stdio.h"));
}

TEST(FileSelection, TheCudaRootIsNeverSelected) {
  std::string error;
  auto s = ptb::FileSelection::make("/opt/cuda/samples/main.cu", std::nullopt, {"/opt/cuda"}, error);
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->selectsPath("/opt/cuda/samples/helper.cuh"));
  ptb::FileSelection all = selection(std::string(".*"));
  EXPECT_FALSE(all.selectsPath("/opt/cuda/include/cuda_runtime.h"));
  EXPECT_TRUE(all.selectsPath("/elsewhere/k.cuh"));
}

TEST(FileSelection, RegexIsSearchedInTheAbsolutePath) {
  ptb::FileSelection s = selection(std::string("/kernels/"));
  EXPECT_TRUE(s.selectsPath("/src/app/kernels/a.cuh"));
  EXPECT_TRUE(s.selectsPath("/lib/kernels/b.cuh"));
  EXPECT_FALSE(s.selectsPath("/src/app/a.cuh"));
}

TEST(FileSelection, EmptyFilterSelectsNothingButTheMainFile) {
  ptb::FileSelection s = selection(std::string(""));
  EXPECT_FALSE(s.selectsIncludedFiles());
  EXPECT_FALSE(s.selectsPath("/src/app/kernel.cu"));
  EXPECT_FALSE(ptb::FileSelection().selectsIncludedFiles());
}

TEST(FileSelection, InvalidRegexIsAnError) {
  std::string error;
  EXPECT_FALSE(ptb::FileSelection::make("/src/main.cu", std::string("("), {}, error));
  EXPECT_NE(error.find("invalid --header-filter regex '('"), std::string::npos) << error;
}

TEST(RelativePath, FromADirectoryToAFile) {
  EXPECT_EQ(ptb::relativePath("/a/out", "/a/out/k.ptb.cu"), "k.ptb.cu");
  EXPECT_EQ(ptb::relativePath("/a/out", "/a/out/sub/k.ptb.cuh"), "sub/k.ptb.cuh");
  EXPECT_EQ(ptb::relativePath("/a/out/sub", "/a/out/k.ptb.cu"), "../k.ptb.cu");
  EXPECT_EQ(ptb::relativePath("/a/out", "/b/k.cu"), "../../b/k.cu");
}

TEST(OutputLayout, WhereTheCopiesOfIncludedFilesGo) {
  using M = ptb::OutputLayout::Mode;
  ptb::OutputLayout file{M::File, "out/app.ptb.cu"}, dir{M::Directory, "gen"}, inPlace{M::InPlace, ""},
      out{M::Stdout, ""};
  EXPECT_EQ(ptb::mainOutputPath(file, "/src/app/main.cu"), "out/app.ptb.cu");
  EXPECT_EQ(ptb::mainOutputPath(dir, "/src/app/main.cu"), "gen/main.cu");
  EXPECT_EQ(ptb::mainOutputPath(inPlace, "/src/app/main.cu"), "/src/app/main.cu");
  EXPECT_EQ(ptb::mainOutputPath(out, "/src/app/main.cu"), "");
  EXPECT_EQ(ptb::includedOutputPath(file, "/src/app/main.cu", "/src/app/kernel.cu"), "out/kernel.ptb.cu");
  EXPECT_EQ(ptb::includedOutputPath(file, "/src/app/main.cu", "/src/app/sub/k.cuh"), "out/sub/k.ptb.cuh");
  EXPECT_EQ(ptb::includedOutputPath(file, "/src/app/main.cu", "/src/lib/k.h"), "lib/k.ptb.h"); // out/../lib
  EXPECT_EQ(ptb::includedOutputPath(dir, "/src/app/main.cu", "/src/app/sub/k.cuh"), "gen/sub/k.ptb.cuh");
  EXPECT_EQ(ptb::includedOutputPath(inPlace, "/src/app/main.cu", "/src/app/sub/k.cuh"), "/src/app/sub/k.cuh");
  EXPECT_EQ(ptb::includedOutputPath(out, "/src/app/main.cu", "/src/app/sub/k.cuh"), "");
}

ptb::RewriteResult resultWith(const std::string &input, const std::string &header, const std::string &text) {
  ptb::RewriteResult r;
  r.file = input;
  ptb::FileOutput main;
  main.isMain = true;
  main.source = input;
  main.destination = "out/" + input;
  main.output = "main of " + input;
  ptb::FileOutput inc;
  inc.source = header;
  inc.destination = "out/k.ptb.cuh";
  inc.output = text;
  r.files = {main, inc};
  return r;
}

TEST(CollectOutputs, OneIncludedFileFromTwoInputs) {
  std::map<std::string, std::string> files;
  std::string error;
  EXPECT_EQ(
      messageOf(ptb::collectOutputs({resultWith("a.cu", "k.cuh", "same"), resultWith("b.cu", "k.cuh", "same")}, files)),
      "");
  EXPECT_EQ(files.size(), 3u);
  EXPECT_EQ(files["out/k.ptb.cuh"], "same");
  files.clear();
  error =
      messageOf(ptb::collectOutputs({resultWith("a.cu", "k.cuh", "one"), resultWith("b.cu", "k.cuh", "two")}, files));
  EXPECT_NE(error, "");
  EXPECT_NE(error.find("'out/k.ptb.cuh' would be written twice with different contents (from a.cu and from b.cu, "
                       "which both include k.cuh)"),
            std::string::npos)
      << error;
}

TEST(DescribeFileOutput, OneLinePerFile) {
  ptb::FileOutput f;
  f.source = "src/kernel.cu";
  f.destination = "out/kernel.ptb.cu";
  f.transformedKernels = {"a", "b"};
  f.skippedKernels = {"c"};
  f.rewrittenLaunches = 1;
  f.clonedFunctions = 1;
  f.redirectedIncludes = 2;
  EXPECT_EQ(ptb::describeFileOutput(f), "ptb-transform: src/kernel.cu -> out/kernel.ptb.cu: 2 kernels made PTB, 1 "
                                        "left as it is, 1 launch rewritten, 1 device function cloned, 2 #includes "
                                        "pointed at transformed copies");
  f.destination = f.source;
  f.transformedKernels.clear();
  f.skippedKernels.clear();
  f.clonedFunctions = f.redirectedIncludes = 0;
  EXPECT_EQ(ptb::describeFileOutput(f),
            "ptb-transform: src/kernel.cu -> in place: 0 kernels made PTB, 0 left as they are, 1 launch rewritten");
}

TEST(ParseCommandLine, OptionWithAnEmptyValue) {
  CLI::App app;
  std::string filter = "unset";
  std::vector<std::string> files;
  app.add_option("--header-filter", filter);
  app.add_option("files", files);
  EXPECT_EQ(ptb::parseCommandLine(app, {"tool", "--header-filter=", "a.cu"}), -1);
  EXPECT_EQ(filter, "");
  EXPECT_EQ(files, (Strings{"a.cu"}));
}

} // namespace

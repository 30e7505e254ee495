// The fusion tuner's output as fuse-kernels reads it (lib/Fusion/TunerOutput.h): the `winner` line that
// --ratio-from takes, and the `decide` lines that --decisions-from takes. No CUDA parse.
#include "TunerOutput.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

namespace {

using Ratio = std::vector<unsigned>;

// The message of an error, "" for success.
std::string messageOf(llvm::Error e) { return e ? llvm::toString(std::move(e)) : ""; }

// ---- ratioFromHarnessOutput ----

TEST(RatioFromHarnessOutput, WinnerAmongOtherLines) {
  Ratio r;
  EXPECT_EQ(messageOf(ptb::ratioFromHarnessOutput("pair tc+cd\ncandidate 1:1 1.9 ms\nbest 1:3 1.2 ms\n"
                                                  "sequential 2.0 ms\nwinner 1:3 speedup 1.67 over sequential\nend\n",
                                                  r)),
            "");
  EXPECT_EQ(r, (Ratio{1, 3}));
  // Indented, CRLF, no trailing newline.
  EXPECT_EQ(messageOf(ptb::ratioFromHarnessOutput("x\r\n  winner 2:1\r\n", r)), "");
  EXPECT_EQ(r, (Ratio{2, 1}));
  EXPECT_EQ(messageOf(ptb::ratioFromHarnessOutput("winner 1:1:2", r)), "");
  EXPECT_EQ(r, (Ratio{1, 1, 2}));
  // The first winner line counts.
  EXPECT_EQ(messageOf(ptb::ratioFromHarnessOutput("winner 4:1\nwinner 1:4\n", r)), "");
  EXPECT_EQ(r, (Ratio{4, 1}));
}

TEST(RatioFromHarnessOutput, WinnerNone) {
  Ratio r = {9};
  const std::string error = messageOf(ptb::ratioFromHarnessOutput("sequential 2.0 ms\nwinner none\n", r));
  EXPECT_NE(error.find("winner none"), std::string::npos) << error;
  EXPECT_EQ(r, (Ratio{9}));
}

TEST(RatioFromHarnessOutput, NoWinnerLineOrNotARatio) {
  Ratio r = {9};
  std::string error = messageOf(ptb::ratioFromHarnessOutput("sequential 2.0 ms\nbest 1:2\n", r));
  EXPECT_NE(error.find("no 'winner <ratio>' line"), std::string::npos) << error;
  error = messageOf(ptb::ratioFromHarnessOutput("", r));
  EXPECT_NE(error.find("no 'winner <ratio>' line"), std::string::npos) << error;
  EXPECT_NE(messageOf(ptb::ratioFromHarnessOutput("winners 1:2\n", r)), "");
  error = messageOf(ptb::ratioFromHarnessOutput("winner fast\n", r));
  EXPECT_NE(error.find("'fast', not a ratio"), std::string::npos) << error;
  EXPECT_EQ(r, (Ratio{9}));
}

// ---- parseFusionConfig ----

// ---- decisionsFromHarnessOutput ----

using Decision = ptb::FusionDecision;
const std::vector<std::string> kTcCd = {"tc", "cd"};

TEST(DecisionsFromHarnessOutput, EveryChoiceInFileOrderOtherLinesSkipped) {
  std::vector<Decision> d;
  ptb::Diagnostic e;
  ASSERT_TRUE(ptb::decisionsFromHarnessOutput("pair tc+cd seed 3\nwinner 1:2\n"
                                              "decide a+b tasks 1 2: streams\n"
                                              "decide tc+cd scale 0.1 tasks 10 20: sequential (best fused 1:2 1.2x)\r\n"
                                              "  decide  tc+cd  tasks 100 200:fused 2:1/2 (0.8x of sequential)\n"
                                              "decide tc+cd scale 1,2 tasks 1000 2000: streams",
                                              "d.txt", kTcCd, d, e))
      << e.message;
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].tasks, (std::vector<unsigned long long>{10, 20}));
  EXPECT_EQ(d[0].choice, Decision::Choice::sequential);
  EXPECT_EQ(d[0].label, "sequential");
  EXPECT_EQ(d[0].measured, "(best fused 1:2 1.2x)");
  EXPECT_EQ(d[0].line, 4u);
  EXPECT_EQ(d[1].choice, Decision::Choice::fused);
  EXPECT_EQ(d[1].slots, (Ratio{2, 1}));
  EXPECT_EQ(d[1].minBlocks, 2u);
  EXPECT_EQ(d[1].label, "2:1/2");
  EXPECT_EQ(d[1].line, 5u);
  EXPECT_EQ(d[1].column, 38u); // the ratio
  EXPECT_EQ(d[2].choice, Decision::Choice::streams);
  EXPECT_EQ(d[2].measured, "");
}

TEST(DecisionsFromHarnessOutput, LocatedErrors) {
  struct Case {
    const char *text;
    unsigned line, column;
    const char *message;
  } cases[] = {
      {"decide tc+cd tasks 10: sequential", 1, 14, "expected 2 task counts"},
      {"x\ndecide tc+cd tasks 10 0: sequential", 2, 23, "task count '0' is not a positive integer"},
      {"decide tc+cd scale 1 10 20: sequential", 1, 22, "expected 'tasks'"},
      {"decide tc+cd tasks 10 20", 1, 25, "expected ':'"},
      {"decide tc+cd tasks 10 20:", 1, 26, "expected the decision"},
      {"decide tc+cd tasks 10 20: fused", 1, 32, "expected the fused candidate's ratio"},
      {"decide tc+cd tasks 10 20: fused 0:1", 1, 33, "'0:1' is not a ratio of 2 kernels"},
      {"decide tc+cd tasks 10 20: fused 1:1/0", 1, 33, "'1:1/0' is not a ratio of 2 kernels"},
      {"decide tc+cd tasks 10 20: best", 1, 27, "expected fused <ratio>, sequential or streams, not 'best'"},
      {"decide tc+cd tasks 1 2: streams\ndecide tc+cd tasks 1 2: streams", 2, 14,
       "a second decision for the same task counts (the first is at line 1)"},
      {"decide", 1, 7, "expected the kernels (tc+cd) after 'decide'"},
      {"decide cd+tc tasks 1 2: streams\n", 0, 0,
       "no 'decide tc+cd ... tasks ...: <decision>' line in the file (it has decisions for cd+tc)"},
      {"", 0, 0, "no 'decide tc+cd"},
  };
  for (const Case &c : cases) {
    std::vector<Decision> d = {Decision{}};
    ptb::Diagnostic e;
    EXPECT_FALSE(ptb::decisionsFromHarnessOutput(c.text, "d.txt", kTcCd, d, e)) << c.text;
    EXPECT_EQ(d.size(), 1u) << c.text; // untouched
    EXPECT_EQ(e.file, "d.txt");
    EXPECT_EQ(e.line, c.line) << c.text;
    EXPECT_EQ(e.column, c.column) << c.text;
    EXPECT_NE(e.message.find(c.message), std::string::npos) << c.text << " -> " << e.message;
  }
}

TEST(DecisionsFromHarnessOutput, MeasuredTextIsSafeInAComment) {
  std::vector<Decision> d;
  ptb::Diagnostic e;
  ASSERT_TRUE(ptb::decisionsFromHarnessOutput("decide tc+cd tasks 1 2: streams (0.9x)\t\\\n", "d", kTcCd, d, e));
  EXPECT_EQ(d[0].measured, "(0.9x)");
}

} // namespace

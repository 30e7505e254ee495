// nvcc's dialect that clang rejects (lib/Frontend/NvccDialect.h): the spaced-chevron normalization keeps
// every offset and line, and touches only launches.
#include "NvccDialect.h"

#include "gtest/gtest.h"

namespace {

std::string normalized(const std::string &in, bool expectChange = true) {
  bool changed = false;
  std::string out = ptb::normalizeLaunchChevrons(in, changed);
  EXPECT_EQ(changed, expectChange) << in;
  EXPECT_EQ(out.size(), in.size()) << in;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), std::count(in.begin(), in.end(), '\n')) << in;
  return out;
}

TEST(NormalizeLaunchChevrons, SpacedChevronsBecomeTripleChevrons) {
  EXPECT_EQ(normalized("k << < 2, 32 >> > (d);"), "k <<<  2, 32 >>>  (d);");
  EXPECT_EQ(normalized("k<<<2, 32>> >(d);"), "k<<<2, 32>>> (d);");
  EXPECT_EQ(normalized("k<< <2, 32>>>(d);"), "k<<< 2, 32>>>(d);");
  EXPECT_EQ(normalized("k <</*g*/<1, f(a >> 1)>>\n>(d);"), "k <<</*g*/1, f(a >> 1)>>>\n(d);");
}

TEST(NormalizeLaunchChevrons, EverythingElseStays) {
  for (const char *s : {"k<<<2, 32>>>(d);", "std::cout << x << \"<< <\";", "x = a >> b > c;",
                        "friend std::ostream &operator<< <T>(std::ostream &, const Box<T> &);",
                        "// k << < 1, 1 >> > (d);", "std::vector<std::vector<int>> > v;"})
    EXPECT_EQ(normalized(s, false), s);
}

TEST(NvccCompatibilityHeaders, ForcedIncludeHasHostMinMaxAndTheCHeaders) {
  auto headers = ptb::nvccCompatibilityHeaders("/nonexistent-resource-dir");
  auto it = std::find_if(headers.begin(), headers.end(),
                         [](const ptb::FrontendHeader &h) { return h.name == ptb::kNvccCompatHeader; });
  ASSERT_NE(it, headers.end());
  EXPECT_NE(it->text.find("static inline __host__ unsigned int max(const int a, const unsigned int b)"),
            std::string::npos);
  EXPECT_NE(it->text.find("#include <time.h>"), std::string::npos);
  EXPECT_EQ(it->text.find("#include <stdio.h>"), std::string::npos); // nvcc has no printf in host code either
}

} // namespace

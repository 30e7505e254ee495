// The edits that send a call to its callee's PTB clone (lib/Rewrite/CallCloneEdits.h), spelled from the
// facts the inventory records of each call (CloneCallSite): one call of each form, and what each edit
// replaces in the source.
#include "CallCloneEdits.h"
#include "CudaTestSupport.h"

#include <set>

using namespace ptbtest;

namespace {

const std::string kSource = R"cu(struct V {
  __device__ int operator+(int b) const { return b + blockIdx.x; }
  __device__ int operator[](int i) const { return i * gridDim.x; }
};
struct W {
  int v;
  __device__ W() : v(blockIdx.x) {}
  __device__ W(int a) : v(a + blockIdx.x) {}
};
__device__ int g(int x) { return x + blockIdx.x; }
__global__ void forms(int *p) {
  V a;
  W w(1);
  W d;
  p[0] = g(1) + (a + 2) + a[3] + w.v + d.v;
}
)cu";

TEST(CallCloneEdits, EachFormIsSpelledFromItsSite) {
  PTB_REQUIRE_CUDA();
  auto tu = parseCuda(kSource, "forms.cu");
  ASSERT_TRUE(tu->ok) << tu->diags->all();
  const ptb::Kernel *k = tu->kernel("forms");
  ASSERT_NE(k, nullptr);
  EXPECT_TRUE(k->blockers.empty()) << k->blockers.front().detail;
  const clang::SourceManager &sm = tu->ast->getSourceManager();
  // Each call's edits in order: `[replaced]->text` or `+inserted`.
  std::set<std::string> got;
  for (const ptb::VirtualizedCall &c : k->virtualizedCalls) {
    std::string line;
    for (const ptb::rewrite::CallEdit &e : ptb::rewrite::callCloneEdits(c.site, sm)) {
      if (!line.empty()) line += " ";
      unsigned at = sm.getFileOffset(e.loc);
      line += e.length ? "[" + kSource.substr(at, e.length) + "]->" + e.text : "+" + e.text;
    }
    got.insert(line);
  }
  const std::set<std::string> want = {
      "[g]->g__ptb +blockIdx, gridDim, ",
      "+( [ + ]->).operatorPlus__ptb(blockIdx, gridDim,  +)",
      "[[]->.operatorSubscript__ptb(blockIdx, gridDim,  []]->)",
      "+::ptb::VirtualBlock{}, blockIdx, gridDim, ",
      "+(::ptb::VirtualBlock{}, blockIdx, gridDim)",
  };
  EXPECT_EQ(got, want);
}

} // namespace

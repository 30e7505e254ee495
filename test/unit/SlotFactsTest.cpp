// What the analysis records of a function body for the fuser (lib/Analysis/SlotFacts.h): the anchors a
// slot's copy edits, what a slot cannot run (in the order written), and whether a callee needs a slot
// copy. The facts are those of the analysis's one scan, read through the inventory.
#include "SlotFacts.h"
#include "CudaTestSupport.h"

#include "clang/AST/Decl.h"

#include "gtest/gtest.h"

namespace {

using namespace ptbtest;

const clang::FunctionDecl *calleeOf(const clang::CallExpr *c) { return c->getDirectCallee(); }

TEST(SlotFacts, AnchorsOfAKernelBody) {
  PTB_REQUIRE_CUDA();
  const std::string src = R"cu(#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__shared__ float table[64];
__device__ int helper(int x) { return x + threadIdx.x; }
__device__ int plain(int x) { return x * 2; }
__global__ void k(float *p) {
  extern __shared__ float dyn[];
  __shared__ int tile[32];
  cg::thread_block b = cg::this_thread_block();
  tile[threadIdx.x % 32] = helper(plain(1));
  __syncthreads();
  b.sync();
  p[threadIdx.x] = table[threadIdx.x] + dyn[0] + tile[0];
}
)cu";
  auto tu = parseCuda(src, "slot.cu");
  ASSERT_TRUE(tu->ok) << tu->diags->all();
  const ptb::Kernel *k = tu->kernel("k");
  ASSERT_NE(k, nullptr);
  const ptb::SlotFacts &f = ptb::slotFactsOf(tu->inv, k->decl);
  EXPECT_EQ(&f, &ptb::slotFactsOf(tu->inv, k->decl)); // one record per function, not a new scan
  EXPECT_EQ(f.blockBarriers.size(), 1u);
  ASSERT_EQ(f.userCalls.size(), 2u);
  EXPECT_EQ(calleeOf(f.userCalls[0])->getName(), "helper");
  EXPECT_EQ(calleeOf(f.userCalls[1])->getName(), "plain");
  EXPECT_EQ(f.blockGroupCalls.size(), 1u);
  ASSERT_EQ(f.blockGroupVars.size(), 1u);
  EXPECT_EQ(f.blockGroupVars[0]->getName(), "b");
  EXPECT_EQ(f.externShared.size(), 1u);
  ASSERT_EQ(f.fileShared.size(), 1u);
  EXPECT_EQ(f.fileShared[0]->getName(), "table");
  EXPECT_EQ(f.fileSharedUses.size(), 1u);
  EXPECT_TRUE(f.readsBuiltins);
  EXPECT_TRUE(f.declaresShared);
  EXPECT_EQ(f.staticSharedBytes, 32u * sizeof(int));
  EXPECT_TRUE(f.usesCooperativeGroups);
  EXPECT_TRUE(f.problems.empty());
  // helper reads threadIdx; plain depends on nothing of the block.
  EXPECT_TRUE(ptb::slotDependent(tu->inv, calleeOf(f.userCalls[0])));
  EXPECT_FALSE(ptb::slotDependent(tu->inv, calleeOf(f.userCalls[1])));
  EXPECT_TRUE(ptb::slotDependent(tu->inv, k->decl));
}

TEST(SlotFacts, ProblemsInTheOrderWrittenAndOnlyTheBodysOwnText) {
  PTB_REQUIRE_CUDA();
  const std::string src = "__device__ int dflt(int x = threadIdx.x) { return x; }\n"
                          "__global__ void k(int *p) {\n"
                          "  auto f = [](int x) { return x + (int)threadIdx.x; };\n"
                          "  asm volatile(\"bar.sync 1, 64;\");\n"
                          "  p[0] = f(1);\n"
                          "}\n"
                          "__global__ void d(int *p) { p[0] = dflt(); }\n";
  auto tu = parseCuda(src, "problems.cu");
  ASSERT_TRUE(tu->ok) << tu->diags->all();
  const ptb::Kernel *k = tu->kernel("k");
  ASSERT_NE(k, nullptr);
  const ptb::SlotFacts &f = ptb::slotFactsOf(tu->inv, k->decl);
  ASSERT_EQ(f.problems.size(), 2u);
  EXPECT_NE(f.problems[0].what.find("lambda without a capture default"), std::string::npos) << f.problems[0].what;
  EXPECT_NE(f.problems[1].what.find("inline asm uses 'bar.'"), std::string::npos) << f.problems[1].what;
  // A default argument is the declaration's text, evaluated at the call: not a read of the caller's body,
  // nor of the callee's.
  const ptb::Kernel *d = tu->kernel("d");
  ASSERT_NE(d, nullptr);
  const ptb::SlotFacts &df = ptb::slotFactsOf(tu->inv, d->decl);
  EXPECT_FALSE(df.readsBuiltins);
  ASSERT_EQ(df.userCalls.size(), 1u);
  EXPECT_FALSE(ptb::slotDependent(tu->inv, calleeOf(df.userCalls[0])));
}

// A capture-less lambda whose body reads a built-in variable is a problem; a nested one makes both
// lambdas problems (the outer's body holds the inner), in the order written; an init-capture is read
// where the lambda is written, not in its body.
TEST(SlotFacts, LambdasReadingBuiltinsNestedAndInitCaptures) {
  PTB_REQUIRE_CUDA();
  const std::string src = "__global__ void n(int *p) {\n"
                          "  auto outer = []() { auto inner = []() { return (int)threadIdx.x; }; return inner(); };\n"
                          "  auto cap = [i = (int)threadIdx.x]() { return i; };\n"
                          "  auto ok = [&]() { return (int)threadIdx.y; };\n"
                          "  p[0] = outer() + cap() + ok();\n"
                          "}\n";
  auto tu = parseCuda(src, "lambdas.cu");
  ASSERT_TRUE(tu->ok) << tu->diags->all();
  const ptb::Kernel *n = tu->kernel("n");
  ASSERT_NE(n, nullptr);
  const ptb::SlotFacts &f = ptb::slotFactsOf(tu->inv, n->decl);
  ASSERT_EQ(f.problems.size(), 2u);
  auto &sm = tu->ast->getSourceManager();
  EXPECT_EQ(sm.getSpellingColumnNumber(f.problems[0].loc), 16u); // outer's [
  EXPECT_EQ(sm.getSpellingColumnNumber(f.problems[1].loc), 36u); // inner's [
  EXPECT_TRUE(f.readsBuiltins);
}

} // namespace

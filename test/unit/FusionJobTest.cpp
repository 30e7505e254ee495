// What fuse-kernels is asked to do and what a fused block may be (lib/Fusion: FusionJob.h, Feasibility.h,
// FusedOutput.h): block shapes, --kernel requests, ratios, JSON batches, the feasibility limits, the ratios
// --all-ratios emits and the assembly of one output from hand-built slot kernels. No CUDA parse.
#include "FusionJob.h"
#include "CudaTestSupport.h" // PTB_KNOWN_BUG
#include "Feasibility.h"
#include "FusedOutput.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <string>
#include <vector>

namespace {

using Ratio = std::vector<unsigned>;
using Ratios = std::vector<Ratio>;

// The message of an error, "" for success.
std::string messageOf(llvm::Error e) { return e ? llvm::toString(std::move(e)) : ""; }
template <typename T> std::string messageOf(llvm::Expected<T> &e) { return e ? "" : llvm::toString(e.takeError()); }

// ---- parseBlockShape ----

::testing::AssertionResult shapeIs(const char *text, unsigned x, unsigned y, unsigned z) {
  unsigned b[3] = {7, 7, 7};
  if (!ptb::parseBlockShape(text, b)) return ::testing::AssertionFailure() << "'" << text << "' rejected";
  if (b[0] != x || b[1] != y || b[2] != z)
    return ::testing::AssertionFailure() << "'" << text << "' -> " << b[0] << "x" << b[1] << "x" << b[2];
  return ::testing::AssertionSuccess();
}

TEST(ParseBlockShape, OneTwoThreeDimensions) {
  EXPECT_TRUE(shapeIs("128", 128, 1, 1));
  EXPECT_TRUE(shapeIs("32x8", 32, 8, 1));
  EXPECT_TRUE(shapeIs("8x4x4", 8, 4, 4));
  EXPECT_TRUE(shapeIs("1024", 1024, 1, 1));
  EXPECT_TRUE(shapeIs("1x1x64", 1, 1, 64));
}

TEST(ParseBlockShape, RejectsMalformedAndOutOfRange) {
  for (const char *bad : {"0", "32x", "x8", "2048", "1x2x3x4", "", "abc", "32x0", "-32", "32*8", "8x4x0", "1025"}) {
    unsigned b[3] = {7, 7, 7};
    EXPECT_FALSE(ptb::parseBlockShape(bad, b)) << "'" << bad << "' accepted";
    // A rejected shape leaves the output alone.
    EXPECT_EQ(b[0], 7u) << bad;
    EXPECT_EQ(b[1], 7u) << bad;
    EXPECT_EQ(b[2], 7u) << bad;
  }
}

// ---- parseKernelRequest ----

TEST(ParseKernelRequest, NameAndBlock) {
  auto parsed = ptb::parseKernelRequest("stencil=32x8");
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  const ptb::FusionKernelRequest &r = *parsed;
  EXPECT_EQ(r.name, "stencil");
  EXPECT_EQ(r.block[0], 32u);
  EXPECT_EQ(r.block[1], 8u);
  EXPECT_EQ(r.block[2], 1u);
  EXPECT_EQ(r.dynamicShared, 0u);
  EXPECT_EQ(r.threads(), 256u);
}

TEST(ParseKernelRequest, WithDynamicSharedAndQualifiedName) {
  auto hash = ptb::parseKernelRequest("hash=256,4096");
  ASSERT_TRUE(bool(hash)) << llvm::toString(hash.takeError());
  EXPECT_EQ(hash->name, "hash");
  EXPECT_EQ(hash->threads(), 256u);
  EXPECT_EQ(hash->dynamicShared, 4096u);
  auto k = ptb::parseKernelRequest("ns::inner::k=8x4x4,100");
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  EXPECT_EQ(k->name, "ns::inner::k");
  EXPECT_EQ(k->block[2], 4u);
  EXPECT_EQ(k->threads(), 128u);
  EXPECT_EQ(k->dynamicShared, 100u);
}

TEST(ParseKernelRequest, Errors) {
  struct Case {
    const char *text, *mentions;
  };
  for (Case c : {Case{"k", "expected NAME=BLOCK"}, Case{"=128", "expected NAME=BLOCK"},
                 Case{"k=", "expected NAME=BLOCK"}, Case{"k=0x3", "block shape '0x3'"},
                 Case{"k=32x", "block shape '32x'"}, Case{"k=128,lots", "dynamic shared memory 'lots'"},
                 Case{"k=128,-4", "dynamic shared memory '-4'"}, Case{"k=128,1,2", "dynamic shared memory '1,2'"}}) {
    auto r = ptb::parseKernelRequest(c.text);
    ASSERT_FALSE(bool(r)) << c.text;
    const std::string error = llvm::toString(r.takeError());
    EXPECT_NE(error.find(c.mentions), std::string::npos) << c.text << ": " << error;
    EXPECT_NE(error.find(std::string("'") + c.text + "'"), std::string::npos) << "names the spec: " << error;
  }
}

// ---- parseRatio / ratioString ----

TEST(ParseRatio, Valid) {
  Ratio r;
  ASSERT_TRUE(ptb::parseRatio("1:2", r));
  EXPECT_EQ(r, (Ratio{1, 2}));
  ASSERT_TRUE(ptb::parseRatio("1:2:3", r));
  EXPECT_EQ(r, (Ratio{1, 2, 3}));
  ASSERT_TRUE(ptb::parseRatio("15:1", r));
  EXPECT_EQ(r, (Ratio{15, 1}));
  EXPECT_EQ(ptb::ratioString({1, 2}), "1:2");
  EXPECT_EQ(ptb::ratioString({3, 14, 1}), "3:14:1");
}

TEST(ParseRatio, Rejects) {
  for (const char *bad : {"0:1", "1", "16:1", "a:b", "1:", ":1", "1::2", "", "1:-2", "1.5:1"}) {
    Ratio r = {9};
    EXPECT_FALSE(ptb::parseRatio(bad, r)) << "'" << bad << "' accepted";
    EXPECT_EQ(r, (Ratio{9})) << bad;
  }
}

TEST(ParseFusionConfig, RatioRatiosAllRatios) {
  auto parsed = ptb::parseFusionConfig(R"({"fusions": [
    {"kernels": [{"name": "gemm", "block": "128"}, {"name": "stencil", "block": "32x8", "dynamic_shared": 4096}],
     "ratio": "1:2", "name": "gs", "output": "gs.cu"},
    {"kernels": [{"name": "a", "block": "64"}, {"name": "b", "block": "8x4x4"}], "ratios": ["1:1", "2:1"],
     "output": "ab.cu"},
    {"kernels": [{"name": "a", "block": "64"}, {"name": "b", "block": "64"}, {"name": "c", "block": "32"}],
     "all_ratios": true}
  ]})");
  ASSERT_EQ(messageOf(parsed), "");
  const std::vector<ptb::FusionJob> &jobs = *parsed;
  ASSERT_EQ(jobs.size(), 3u);
  const ptb::FusionJob &g = jobs[0];
  ASSERT_EQ(g.kernels.size(), 2u);
  EXPECT_EQ(g.kernels[0].name, "gemm");
  EXPECT_EQ(g.kernels[0].threads(), 128u);
  EXPECT_EQ(g.kernels[0].dynamicShared, 0u);
  EXPECT_EQ(g.kernels[1].name, "stencil");
  EXPECT_EQ(g.kernels[1].block[0], 32u);
  EXPECT_EQ(g.kernels[1].block[1], 8u);
  EXPECT_EQ(g.kernels[1].dynamicShared, 4096u);
  EXPECT_EQ(g.ratios, (Ratios{{1, 2}}));
  EXPECT_FALSE(g.allRatios);
  EXPECT_EQ(g.name, "gs");
  EXPECT_EQ(g.output, "gs.cu");

  EXPECT_EQ(jobs[1].ratios, (Ratios{{1, 1}, {2, 1}}));
  EXPECT_EQ(jobs[1].kernels[1].threads(), 128u);
  EXPECT_EQ(jobs[1].name, "");
  EXPECT_EQ(jobs[1].output, "ab.cu");

  EXPECT_TRUE(jobs[2].allRatios);
  EXPECT_TRUE(jobs[2].ratios.empty());
  EXPECT_EQ(jobs[2].kernels.size(), 3u);
  EXPECT_EQ(jobs[2].output, "");
}

struct ConfigError {
  const char *json, *mentions;
};

TEST(ParseFusionConfig, Errors) {
  const std::string pair = R"([{"name": "a", "block": "64"}, {"name": "b", "block": "64"}])";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"not json", "invalid JSON"},
      {"{\"fusions\": [", "invalid JSON"},
      {"[]", "expected an object with a \"fusions\" array"},
      {"{}", "expected an object with a \"fusions\" array"},
      {"{\"fusions\": {}}", "expected an object with a \"fusions\" array"},
      {"{\"fusions\": []}", "\"fusions\" is empty"},
      {R"({"fusions": [{"kernels": [{"name": "a", "block": "64"}], "ratio": "1:1"}]})",
       "fusions[0]: expected \"kernels\": an array of at least two kernels"},
      {R"({"fusions": [{"ratio": "1:1"}]})", "fusions[0]: expected \"kernels\""},
      {R"({"fusions": [{"kernels": [{"name": "a", "block": "64"}, {"name": "b"}], "ratio": "1:1"}]})",
       "each kernel needs \"name\" and \"block\""},
      {R"({"fusions": [{"kernels": [{"name": "a", "block": "64"}, {"name": "b", "block": "0x3"}], "ratio": "1:1"}]})",
       "fusions[0]: kernel 'b': block '0x3' is not X, XxY or XxYxZ"},
      {"{\"fusions\": [{\"kernels\": " + pair + ", \"ratio\": \"1:2:3\"}]}",
       "fusions[0]: ratio '1:2:3' must give one slot count (1..15) per kernel"},
      {"{\"fusions\": [{\"kernels\": " + pair + ", \"ratios\": [\"1:1\", \"0:1\"]}]}", "ratio '0:1'"},
      {"{\"fusions\": [{\"kernels\": " + pair + ", \"ratio\": \"1:1\"}, {\"kernels\": " + pair + "}]}",
       "fusions[1]: give \"ratio\", \"ratios\" or \"all_ratios\": true"},
      {"{\"fusions\": [{\"kernels\": " + pair + ", \"all_ratios\": false}]}", "give \"ratio\", \"ratios\""},
  };
  for (const auto &[json, mentions] : cases) {
    auto jobs = ptb::parseFusionConfig(json);
    const std::string error = messageOf(jobs);
    EXPECT_NE(error.find(mentions), std::string::npos) << json << "\n  error: " << error;
  }
}

// Regression (fixed): a negative "dynamic_shared" was accepted (as 2^64-1 bytes), and fusionProblems'
// rounding wrapped it around to 0. Now an error naming the kernel, as for a bad block.
TEST(ParseFusionConfig, NegativeDynamicSharedIsAnError) {
  auto jobs = ptb::parseFusionConfig(R"({"fusions": [{"kernels": [{"name": "a", "block": "64", "dynamic_shared": -1},
    {"name": "b", "block": "64"}], "ratio": "1:1"}]})");
  const std::string error = messageOf(jobs);
  EXPECT_NE(error.find("'a'"), std::string::npos) << error;
}

// ---- checkFusedName (--name, "name") ----

TEST(CheckFusedName, Identifiers) {
  for (const char *ok : {"pair", "gemm_hash", "K2", "fused_1x"})
    EXPECT_EQ(messageOf(ptb::checkFusedName(ok)), "") << ok;
}

TEST(CheckFusedName, RejectsWithTheReason) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"1x-y", "not a C++ identifier"},
      {"a-b", "not a C++ identifier"},
      {"9lives", "not a C++ identifier"},
      {"ns::k", "not a C++ identifier"},
      {"caf\xc3\xa9", "not a C++ identifier"},
      {"_k", "starting with '_'"},
      {"_K", "starting with '_'"},
      {"a__b", "containing '__'"},
      {"k_", "ends in '_'"},
      {"int", "keyword"},
      {"class", "keyword"},
      {"and", "keyword"},
      {"constexpr", "keyword"},
      {"", "empty"},
  };
  for (const auto &[name, why] : cases) {
    const std::string error = messageOf(ptb::checkFusedName(name));
    EXPECT_NE(error.find(why), std::string::npos) << name << ": " << error;
  }
}

TEST(ParseFusionConfig, NameMustBeAnIdentifier) {
  auto jobs = ptb::parseFusionConfig(R"({"fusions": [{"kernels": [{"name": "a", "block": "64"},
    {"name": "b", "block": "64"}], "ratio": "1:1", "name": "1x-y"}]})");
  const std::string error = messageOf(jobs);
  EXPECT_NE(error.find("fusions[0]: \"name\": '1x-y' cannot name a fused kernel"), std::string::npos) << error;
}

// ---- fusionProblems / feasibleRatios / fusedStaticShared ----

ptb::SlotKernel slotKernel(const std::string &name, unsigned x, unsigned y = 1, unsigned z = 1,
                           uint64_t staticShared = 0, uint64_t dynamicShared = 0) {
  ptb::SlotKernel k;
  k.request.name = name;
  k.request.block[0] = x;
  k.request.block[1] = y;
  k.request.block[2] = z;
  k.request.dynamicShared = dynamicShared;
  k.name = k.qualifiedName = name;
  k.slotFunction = name + "__slot";
  k.kernelRef = name;
  k.staticShared = staticShared;
  k.loc = {"in.cu", 3, 17};
  k.paramTypes = {"float *"};
  k.paramNames = {"p"};
  return k;
}

std::string joined(const std::vector<std::string> &v) { return ptbtest::join(v, " | "); }

TEST(FusionProblems, FitsWithinLimits) {
  const ptb::FusionLimits limits;
  std::vector<ptb::SlotKernel> ks = {slotKernel("tc", 128), slotKernel("cd", 32, 8)};
  EXPECT_TRUE(ptb::fusionProblems(ks, {1, 1}, limits).empty()) << joined(ptb::fusionProblems(ks, {1, 1}, limits));
  // 128 * 2 + 256 * 3 = 1024 threads exactly.
  EXPECT_TRUE(ptb::fusionProblems(ks, {2, 3}, limits).empty()) << joined(ptb::fusionProblems(ks, {2, 3}, limits));
}

TEST(FusionProblems, ThreadLimit) {
  const ptb::FusionLimits limits;
  std::vector<ptb::SlotKernel> ks = {slotKernel("tc", 256), slotKernel("cd", 256)};
  auto p = ptb::fusionProblems(ks, {3, 2}, limits);
  ASSERT_EQ(p.size(), 1u) << joined(p);
  EXPECT_EQ(p[0], "the fused block would have 1280 threads; at most 1024 are allowed");
  ptb::FusionLimits small;
  small.maxThreads = 512;
  EXPECT_EQ(ptb::fusionProblems(ks, {1, 1}, small).size(), 0u);
  EXPECT_EQ(ptb::fusionProblems(ks, {2, 1}, small).size(), 1u);
}

TEST(FusionProblems, SlotLimit) {
  const ptb::FusionLimits limits;
  std::vector<ptb::SlotKernel> ks = {slotKernel("a", 32), slotKernel("b", 32)};
  EXPECT_TRUE(ptb::fusionProblems(ks, {14, 1}, limits).empty()); // 15 named barriers: 1..15
  auto p = ptb::fusionProblems(ks, {15, 1}, limits);
  ASSERT_EQ(p.size(), 1u) << joined(p);
  EXPECT_EQ(p[0], "16 slots need 16 named barriers; the hardware has 15 besides __syncthreads' barrier 0");
  std::vector<ptb::SlotKernel> three = {slotKernel("a", 32), slotKernel("b", 32), slotKernel("c", 32)};
  EXPECT_TRUE(ptb::fusionProblems(three, {5, 5, 5}, limits).empty());
  EXPECT_EQ(ptb::fusionProblems(three, {5, 5, 6}, limits).size(), 1u);
}

TEST(FusionProblems, NoSlotForAKernel) {
  std::vector<ptb::SlotKernel> ks = {slotKernel("a", 32), slotKernel("b", 32)};
  auto p = ptb::fusionProblems(ks, {1, 0}, ptb::FusionLimits{});
  ASSERT_EQ(p.size(), 1u) << joined(p);
  EXPECT_EQ(p[0], "kernel 'b' has no slot");
}

TEST(FusionProblems, StaticSharedLimit) {
  const ptb::FusionLimits limits;
  // Each slot: its kernel's static variables + 128 bytes of bookkeeping. 2 x (24448 + 128) = 49152: fits.
  std::vector<ptb::SlotKernel> ks = {slotKernel("a", 32, 1, 1, 24448), slotKernel("b", 32, 1, 1, 24448)};
  EXPECT_EQ(ptb::fusedStaticShared(ks, {1, 1}), 49152u);
  EXPECT_TRUE(ptb::fusionProblems(ks, {1, 1}, limits).empty()) << joined(ptb::fusionProblems(ks, {1, 1}, limits));
  ks[1].staticShared += 1;
  auto p = ptb::fusionProblems(ks, {1, 1}, limits);
  ASSERT_EQ(p.size(), 1u) << joined(p);
  EXPECT_EQ(p[0], "the slots' static __shared__ variables would take 49153 bytes; a kernel's static shared memory is "
                  "limited to 49152");
  // Two 30 KB kernels.
  std::vector<ptb::SlotKernel> big = {slotKernel("a", 32, 1, 1, 30720), slotKernel("b", 32, 1, 1, 30720)};
  EXPECT_EQ(ptb::fusedStaticShared(big, {1, 1}), 61696u);
  EXPECT_EQ(ptb::fusionProblems(big, {1, 1}, limits).size(), 1u);
  EXPECT_EQ(ptb::fusedStaticShared(big, {2, 3}), 5 * (30720u + 128u));
}

TEST(FusionProblems, TotalSharedIncludesDynamic) {
  ptb::FusionLimits limits;
  limits.maxShared = 64 * 1024;
  // Static: 3 x 128 (bookkeeping) + 1000; dynamic 2 x 16000 (a multiple of 16) + 1 x 30000.
  std::vector<ptb::SlotKernel> ks = {slotKernel("a", 32, 1, 1, 0, 16000), slotKernel("b", 32, 1, 1, 1000, 30000)};
  const uint64_t at21 = 3 * 128 + 1000 + 2 * 16000 + 30000; // 63384
  EXPECT_TRUE(ptb::fusionProblems(ks, {2, 1}, limits).empty()) << joined(ptb::fusionProblems(ks, {2, 1}, limits));
  limits.maxShared = at21 - 1;
  auto p = ptb::fusionProblems(ks, {2, 1}, limits);
  ASSERT_EQ(p.size(), 1u) << joined(p);
  EXPECT_EQ(p[0], "the fused block would use 63384 bytes of shared memory; an SM offers 63383");
  // Dynamic shared memory is rounded up to 16 bytes per slot: 2 x (1 -> 16) + 2 x 128.
  std::vector<ptb::SlotKernel> tiny = {slotKernel("a", 32, 1, 1, 0, 1), slotKernel("b", 32)};
  limits.maxShared = 2 * 16 + 3 * 128;
  EXPECT_TRUE(ptb::fusionProblems(tiny, {2, 1}, limits).empty());
  limits.maxShared -= 1;
  EXPECT_EQ(ptb::fusionProblems(tiny, {2, 1}, limits).size(), 1u);
  // The H100 default: 227 KiB.
  EXPECT_EQ(ptb::FusionLimits{}.maxShared, 232448u);
}

TEST(FusionProblems, SeveralProblemsAtOnce) {
  std::vector<ptb::SlotKernel> ks = {slotKernel("a", 512, 1, 1, 30000), slotKernel("b", 128)};
  auto p = ptb::fusionProblems(ks, {14, 2}, ptb::FusionLimits{});
  EXPECT_EQ(p.size(), 4u) << joined(p); // slots, threads, static shared, total shared
}

TEST(FeasibleRatios, ThreadsLimitFor128And256) {
  // a x 128 + b x 256 <= 1024 threads, a + b <= 15 slots, a, b >= 1: a + 2b <= 8.
  std::vector<ptb::SlotKernel> ks = {slotKernel("tc", 128), slotKernel("cd", 32, 8)};
  EXPECT_EQ(ptb::feasibleRatios(ks, ptb::FusionLimits{}),
            (Ratios{{1, 1}, {1, 2}, {1, 3}, {2, 1}, {2, 2}, {2, 3}, {3, 1}, {3, 2}, {4, 1}, {4, 2}, {5, 1}, {6, 1}}));
}

TEST(FeasibleRatios, TwoBy256) {
  std::vector<ptb::SlotKernel> ks = {slotKernel("a", 256), slotKernel("b", 256)};
  EXPECT_EQ(ptb::feasibleRatios(ks, ptb::FusionLimits{}), (Ratios{{1, 1}, {1, 2}, {1, 3}, {2, 1}, {2, 2}, {3, 1}}));
}

TEST(FeasibleRatios, SlotLimitBinds) {
  // 32-thread kernels: the 15 named barriers bind first (a + b <= 15), 1024 threads = 32 slots never does.
  std::vector<ptb::SlotKernel> ks = {slotKernel("a", 32), slotKernel("b", 32)};
  auto r = ptb::feasibleRatios(ks, ptb::FusionLimits{});
  EXPECT_EQ(r.size(), 105u); // pairs a, b >= 1 with a + b <= 15: 14 + 13 + ... + 1
  EXPECT_EQ(r.front(), (Ratio{1, 1}));
  EXPECT_EQ(r.back(), (Ratio{14, 1}));
  for (const Ratio &x : r) EXPECT_LE(x[0] + x[1], 15u);
}

TEST(FeasibleRatios, SharedLimitBinds) {
  // 20000 bytes of static variables per slot of a: 2 x (20000 + 128) + 128 <= 49152, 3 slots of a do not fit.
  std::vector<ptb::SlotKernel> ks = {slotKernel("a", 64, 1, 1, 20000), slotKernel("b", 64)};
  auto r = ptb::feasibleRatios(ks, ptb::FusionLimits{});
  for (const Ratio &x : r) EXPECT_LE(x[0], 2u) << ptb::ratioString(x);
  EXPECT_NE(std::find(r.begin(), r.end(), Ratio{2, 13}), r.end());
  EXPECT_EQ(std::find(r.begin(), r.end(), Ratio{2, 14}), r.end()); // 16 slots
  // Dynamic shared memory: 100000 bytes per slot of b: at most 2 slots of b in 227 KiB.
  std::vector<ptb::SlotKernel> dyn = {slotKernel("a", 64), slotKernel("b", 64, 1, 1, 0, 100000)};
  auto d = ptb::feasibleRatios(dyn, ptb::FusionLimits{});
  ASSERT_FALSE(d.empty());
  for (const Ratio &x : d) EXPECT_LE(x[1], 2u) << ptb::ratioString(x);
}

TEST(FeasibleRatios, NoneFits) {
  std::vector<ptb::SlotKernel> ks = {slotKernel("a", 1024), slotKernel("b", 32)};
  EXPECT_TRUE(ptb::feasibleRatios(ks, ptb::FusionLimits{}).empty());
}

TEST(FeasibleRatios, ThreeKernels) {
  std::vector<ptb::SlotKernel> ks = {slotKernel("a", 256), slotKernel("b", 256), slotKernel("c", 256)};
  EXPECT_EQ(ptb::feasibleRatios(ks, ptb::FusionLimits{}), (Ratios{{1, 1, 1}, {1, 1, 2}, {1, 2, 1}, {2, 1, 1}}));
}

// ---- assembleFusedOutput (hand-built files and kernels) ----

// The diagnostics as the tool prints them.
std::string printed(const std::vector<ptb::Diagnostic> &diagnostics) {
  std::string text;
  llvm::raw_string_ostream os(text);
  for (const ptb::Diagnostic &d : diagnostics) ptb::print(os, d);
  return text;
}

TEST(AssembleFusedOutput, OneRatio) {
  ptb::FusionFile f;
  f.path = "/src/in.cu";
  f.text = "// the input\n";
  std::vector<ptb::SlotKernel> ks = {slotKernel("tc", 128), slotKernel("cd", 64)};
  ptb::FusionJob job;
  job.ratios = {{1, 2}};
  std::vector<ptb::Diagnostic> diagnostics;
  auto assembled = ptb::assembleFusedOutput(job, {&f}, ks, ptb::FusionLimits{}, "9.9.9", diagnostics);
  ASSERT_TRUE(assembled) << printed(diagnostics);
  const std::string &out = *assembled;
  EXPECT_EQ(out.rfind("// Generated by fuse-kernels 9.9.9 from in.cu;", 0), 0u) << out;
  EXPECT_NE(out.find("#include \"ptb/ptb.cuh\"\n#line 1 \"/src/in.cu\"\n// the input\n"), std::string::npos) << out;
  EXPECT_NE(out.find("__global__ void __launch_bounds__(256) tc__cd__fused("), std::string::npos) << out;
  EXPECT_NE(out.find("static inline bool tc__cd__fused_launch("), std::string::npos) << out;
  EXPECT_NE(out.find("{\"1:2\", 256u, reinterpret_cast<const void*>(&tc__cd__fused), &tc__cd__fused_launch},"),
            std::string::npos)
      << out;
  EXPECT_EQ(
      printed(diagnostics)
          .rfind("note: tc__cd__fused: ratio 1:2, 256 threads, 3 slots; shared memory per block: 384 B static", 0),
      0u)
      << printed(diagnostics);
  EXPECT_EQ(diagnostics.size(), 1u);
}

TEST(AssembleFusedOutput, SeveralRatiosGetSuffixesAndTheName) {
  ptb::FusionFile a, b;
  a.path = "/src/a.cu";
  a.text = "int a_text;"; // no final newline: one is added
  b.path = "/src/b.cu";
  b.text = "int b_text;\n";
  std::vector<ptb::SlotKernel> ks = {slotKernel("x", 64), slotKernel("y", 64)};
  ptb::FusionJob job;
  job.ratios = {{1, 1}, {2, 1}};
  job.name = "xy";
  std::vector<ptb::Diagnostic> diagnostics;
  auto assembled = ptb::assembleFusedOutput(job, {&a, &b}, ks, ptb::FusionLimits{}, "1", diagnostics);
  ASSERT_TRUE(assembled) << printed(diagnostics);
  const std::string &out = *assembled;
  EXPECT_NE(out.find("from a.cu, b.cu;"), std::string::npos) << out;
  EXPECT_NE(out.find("#line 1 \"/src/a.cu\"\nint a_text;\n#line 1 \"/src/b.cu\"\nint b_text;\n"), std::string::npos)
      << out;
  EXPECT_NE(out.find(" xy_1_1("), std::string::npos) << out;
  EXPECT_NE(out.find(" xy_2_1("), std::string::npos) << out;
  EXPECT_NE(out.find("static const xy_candidate xy_candidates[] = {\n    {\"1:1\", 128u,"), std::string::npos) << out;
  EXPECT_EQ(diagnostics.size(), 2u); // a note per fused kernel
}

TEST(AssembleFusedOutput, InfeasibleRatioIsALocatedErrorAndNoText) {
  ptb::FusionFile f;
  f.path = "in.cu";
  std::vector<ptb::SlotKernel> ks = {slotKernel("a", 512), slotKernel("b", 512)};
  ptb::FusionJob job;
  job.ratios = {{1, 1}, {2, 1}};
  std::vector<ptb::Diagnostic> diagnostics;
  EXPECT_FALSE(ptb::assembleFusedOutput(job, {&f}, ks, ptb::FusionLimits{}, "1", diagnostics));
  // One error, no note.
  EXPECT_EQ(printed(diagnostics), "in.cu:3:17: error: ratio 2:1 cannot be fused: the fused block would have 1536 "
                                  "threads; at most 1024 are allowed\n");
}

TEST(AssembleFusedOutput, AllRatios) {
  ptb::FusionFile f;
  f.path = "in.cu";
  std::vector<ptb::SlotKernel> ks = {slotKernel("a", 512), slotKernel("b", 256)};
  ptb::FusionJob job;
  job.allRatios = true;
  std::vector<ptb::Diagnostic> diagnostics;
  auto out = ptb::assembleFusedOutput(job, {&f}, ks, ptb::FusionLimits{}, "1", diagnostics);
  ASSERT_TRUE(out) << printed(diagnostics);
  EXPECT_NE(out->find(" a__b__fused_1_1("), std::string::npos);
  EXPECT_NE(out->find(" a__b__fused_1_2("), std::string::npos);
  EXPECT_EQ(out->find(" a__b__fused_2_1("), std::string::npos);
  EXPECT_EQ(diagnostics.size(), 2u); // a note per fused kernel
  // None fits.
  ks[0].request.block[0] = 1024;
  diagnostics.clear();
  EXPECT_FALSE(ptb::assembleFusedOutput(job, {&f}, ks, ptb::FusionLimits{}, "1", diagnostics));
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_EQ(printed(diagnostics).rfind("in.cu:3:17: error: no ratio of these kernels fits one block: ", 0), 0u)
      << printed(diagnostics);
}

// ---- resolveJobKernels ----

TEST(ResolveJobKernels, TheJobsRequestsAndTheFilesInFirstUseOrder) {
  std::vector<ptb::FusionFile> files(2);
  files[0].path = "a.cu";
  files[0].kernels = {slotKernel("x", 64)};
  files[1].path = "b.cu";
  files[1].kernels = {slotKernel("y", 64), slotKernel("z", 64)};
  ptb::FusionJob job;
  job.kernels = {slotKernel("z", 128).request, slotKernel("x", 32).request, slotKernel("y", 32).request};
  std::vector<ptb::SlotKernel> kernels;
  std::vector<const ptb::FusionFile *> used;
  std::vector<ptb::Diagnostic> diagnostics;
  ASSERT_TRUE(ptb::resolveJobKernels(job, files, kernels, used, diagnostics)) << printed(diagnostics);
  ASSERT_EQ(kernels.size(), 3u);
  EXPECT_EQ(kernels[0].name, "z");
  EXPECT_EQ(kernels[0].request.threads(), 128u); // the job's block, not the one the file was prepared with
  EXPECT_EQ(kernels[1].name, "x");
  EXPECT_EQ(used, (std::vector<const ptb::FusionFile *>{&files[1], &files[0]}));
  EXPECT_TRUE(diagnostics.empty());
}

TEST(ResolveJobKernels, UnknownAndTwiceDefinedKernels) {
  std::vector<ptb::FusionFile> files(2);
  files[0].path = "a.cu";
  files[0].kernels = {slotKernel("x", 64)};
  files[1].path = "b.cu";
  files[1].kernels = {slotKernel("x", 64)};
  ptb::FusionJob job;
  job.kernels = {slotKernel("x", 64).request, slotKernel("w", 64).request};
  std::vector<ptb::SlotKernel> kernels;
  std::vector<const ptb::FusionFile *> used;
  std::vector<ptb::Diagnostic> diagnostics;
  EXPECT_FALSE(ptb::resolveJobKernels(job, files, kernels, used, diagnostics));
  EXPECT_EQ(printed(diagnostics), "error: kernel 'x' is defined in both a.cu and b.cu\n"
                                  "error: no kernel named 'w' in the input files\n");
}

} // namespace

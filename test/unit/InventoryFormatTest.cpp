// --list-kernels output (formatInventoryJson / formatInventoryText) of the shared inventory source of
// KernelInventoryTest.cpp: the JSON parsed back and checked key by key and value by value.
#include "InventoryFormat.h"
#include "CudaTestSupport.h"

#include "llvm/Support/JSON.h"

#include <algorithm>
#include <sstream>

using namespace ptbtest;

namespace {

using Strings = std::vector<std::string>;

Strings keysOf(const llvm::json::Object &o) {
  Strings keys;
  for (auto &kv : o) keys.push_back(kv.first.str());
  std::sort(keys.begin(), keys.end());
  return keys;
}

Strings sorted(Strings v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Strings of a JSON array of strings (a failure, and "<not a string>", for anything else).
Strings stringsOf(const llvm::json::Value *v) {
  Strings out;
  if (!v || !v->getAsArray()) {
    ADD_FAILURE() << "not an array";
    return out;
  }
  for (auto &e : *v->getAsArray()) {
    auto s = e.getAsString();
    if (!s) ADD_FAILURE() << "array element is not a string";
    out.push_back(s ? s->str() : "<not a string>");
  }
  return out;
}

void expectLocation(const llvm::json::Object *o, const std::string &file, Pos pos) {
  ASSERT_NE(o, nullptr) << "missing location object";
  EXPECT_EQ(keysOf(*o), (Strings{"column", "file", "line"}));
  EXPECT_EQ(o->getString("file"), std::optional<llvm::StringRef>(file));
  EXPECT_EQ(o->getInteger("line"), std::optional<int64_t>(pos.line));
  EXPECT_EQ(o->getInteger("column"), std::optional<int64_t>(pos.column));
}

class InventoryFormatTest : public ::testing::Test {
protected:
  void SetUp() override {
    PTB_REQUIRE_CUDA();
    tu = inventoryTU();
    ASSERT_NE(tu, nullptr);
    ASSERT_TRUE(tu->ok) << tu->diags->all();
  }
  static Pos at(const std::string &needle, unsigned skip = 0) { return posOf(inventorySource(), needle, skip); }
  // The inventory reduced to the named kernels (and the file's other launches).
  ptb::Inventory only(const Strings &kernels) const {
    ptb::Inventory inv;
    inv.mainFile = tu->inv.mainFile;
    inv.otherLaunches = tu->inv.otherLaunches;
    for (auto &name : kernels) {
      const ptb::Kernel *kernel = tu->kernel(name);
      if (!kernel)
        ADD_FAILURE() << "no kernel " << name;
      else
        inv.kernels.push_back(*kernel);
    }
    return inv;
  }
  // The one kernel object of the JSON for `inv` (must hold one kernel).
  const llvm::json::Object *kernelJson(const ptb::Inventory &inv) {
    std::string text = ptb::formatInventoryJson({inv});
    auto parsed = llvm::json::parse(text);
    if (!parsed) {
      ADD_FAILURE() << "formatInventoryJson is not JSON: " << llvm::toString(parsed.takeError()) << "\n" << text;
      return nullptr;
    }
    root = std::move(*parsed);
    auto *top = root.getAsObject();
    if (!top) return nullptr;
    auto *files = top->getArray("files");
    if (!files || files->size() != 1) return nullptr;
    auto *kernels = (*files)[0].getAsObject()->getArray("kernels");
    if (!kernels || kernels->size() != 1) return nullptr;
    return (*kernels)[0].getAsObject();
  }
  const ParsedTU *tu = nullptr;
  llvm::json::Value root = nullptr;
};

TEST_F(InventoryFormatTest, JsonTopLevelSchema) {
  std::string text = ptb::formatInventoryJson({only({"json_kernel"})});
  auto parsed = llvm::json::parse(text);
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  const llvm::json::Object *top = parsed->getAsObject();
  ASSERT_NE(top, nullptr);
  EXPECT_EQ(keysOf(*top), (Strings{"files", "version"}));
  EXPECT_EQ(top->getInteger("version"), std::optional<int64_t>(1));
  const llvm::json::Array *files = top->getArray("files");
  ASSERT_NE(files, nullptr);
  ASSERT_EQ(files->size(), 1u);
  const llvm::json::Object *file = (*files)[0].getAsObject();
  ASSERT_NE(file, nullptr);
  EXPECT_EQ(keysOf(*file), (Strings{"file", "included_files", "kernels", "other_launches"}));
  EXPECT_EQ(file->getString("file"), std::optional<llvm::StringRef>(inventoryFileName()));
  ASSERT_NE(file->getArray("kernels"), nullptr);
  EXPECT_EQ(file->getArray("kernels")->size(), 1u);
  // other_launches: the launch of declared_only, which has no definition in the file.
  const llvm::json::Array *others = file->getArray("other_launches");
  ASSERT_NE(others, nullptr);
  ASSERT_EQ(others->size(), 1u);
  const llvm::json::Object *other = (*others)[0].getAsObject();
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->getString("form"), std::optional<llvm::StringRef>("<<<>>>"));
  expectLocation(other->getObject("location"), inventoryFileName(), at("declared_only<<<"));
  // No input, no files; still valid JSON with the same top level.
  auto empty = llvm::json::parse(ptb::formatInventoryJson({}));
  ASSERT_TRUE(bool(empty));
  ASSERT_NE(empty->getAsObject(), nullptr);
  EXPECT_EQ(empty->getAsObject()->getArray("files")->size(), 0u);
  // Ends with a newline, as a command's output should.
  EXPECT_EQ(text.back(), '\n');
}

TEST_F(InventoryFormatTest, JsonOneKernelFieldByField) {
  const std::string file = inventoryFileName();
  const llvm::json::Object *k = kernelJson(only({"json_kernel"}));
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(keysOf(*k),
            sorted({"name", "qualified_name", "location", "template_parameters", "instantiations", "parameters",
                    "builtins", "barriers", "returns", "shared_memory", "callees", "tasks_independent", "task_coupling",
                    "blockers", "ptb_eligible", "launches", "parked_returns"}));
  EXPECT_EQ(k->getString("name"), std::optional<llvm::StringRef>("json_kernel"));
  EXPECT_EQ(k->getString("qualified_name"), std::optional<llvm::StringRef>("json_kernel"));
  expectLocation(k->getObject("location"), file, at("json_kernel(T *p"));
  EXPECT_EQ(stringsOf(k->get("template_parameters")), (Strings{"typename T"}));
  EXPECT_EQ(stringsOf(k->get("instantiations")), (Strings{"json_kernel<int>"}));

  // parameters
  const llvm::json::Array *params = k->getArray("parameters");
  ASSERT_NE(params, nullptr);
  ASSERT_EQ(params->size(), 2u);
  struct P {
    const char *name, *type;
  };
  P wantParams[] = {{"p", "T *"}, {"n", "int"}};
  for (size_t i = 0; i < 2; ++i) {
    const llvm::json::Object *p = (*params)[i].getAsObject();
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(keysOf(*p), (Strings{"name", "pack", "type"}));
    EXPECT_EQ(p->getString("name"), std::optional<llvm::StringRef>(wantParams[i].name));
    EXPECT_EQ(p->getString("type"), std::optional<llvm::StringRef>(wantParams[i].type));
    EXPECT_EQ(p->getBoolean("pack"), std::optional<bool>(false));
  }

  // builtins: all four, each with the same keys.
  const llvm::json::Object *builtins = k->getObject("builtins");
  ASSERT_NE(builtins, nullptr);
  EXPECT_EQ(keysOf(*builtins), (Strings{"blockDim", "blockIdx", "gridDim", "threadIdx"}));
  struct B {
    const char *var;
    bool used, direct;
    Strings macros;
    std::vector<Strings> chains;
  };
  B wantBuiltins[] = {{"blockIdx", true, true, {"BX"}, {{"readBlock"}}},
                      {"gridDim", false, false, {}, {}},
                      {"threadIdx", true, true, {}, {}},
                      {"blockDim", false, false, {}, {}}};
  for (const B &w : wantBuiltins) {
    SCOPED_TRACE(w.var);
    const llvm::json::Object *b = builtins->getObject(w.var);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(keysOf(*b), (Strings{"call_chains", "direct", "macros", "used"}));
    EXPECT_EQ(b->getBoolean("used"), std::optional<bool>(w.used));
    EXPECT_EQ(b->getBoolean("direct"), std::optional<bool>(w.direct));
    EXPECT_EQ(stringsOf(b->get("macros")), w.macros);
    const llvm::json::Array *chains = b->getArray("call_chains");
    ASSERT_NE(chains, nullptr);
    ASSERT_EQ(chains->size(), w.chains.size());
    for (size_t i = 0; i < w.chains.size(); ++i) EXPECT_EQ(stringsOf(&(*chains)[i]), w.chains[i]);
  }

  // barriers
  const llvm::json::Array *barriers = k->getArray("barriers");
  ASSERT_NE(barriers, nullptr);
  ASSERT_EQ(barriers->size(), 1u);
  const llvm::json::Object *bar = (*barriers)[0].getAsObject();
  ASSERT_NE(bar, nullptr);
  EXPECT_EQ(keysOf(*bar), (Strings{"block_wide", "kind", "location", "via"}));
  EXPECT_EQ(bar->getString("kind"), std::optional<llvm::StringRef>("__syncthreads"));
  EXPECT_EQ(bar->getBoolean("block_wide"), std::optional<bool>(true));
  expectLocation(bar->getObject("location"), file, at("__syncthreads();\n  p[threadIdx.x] = buf"));
  EXPECT_EQ(stringsOf(bar->get("via")), Strings{});

  // returns
  const llvm::json::Array *returns = k->getArray("returns");
  ASSERT_NE(returns, nullptr);
  ASSERT_EQ(returns->size(), 1u);
  const llvm::json::Object *ret = (*returns)[0].getAsObject();
  ASSERT_NE(ret, nullptr);
  EXPECT_EQ(keysOf(*ret), (Strings{"block_uniform", "location", "reason"}));
  expectLocation(ret->getObject("location"), file, at("return;\n  buf[threadIdx.x]"));
  EXPECT_EQ(ret->getBoolean("block_uniform"), std::optional<bool>(true));
  EXPECT_EQ(ret->getString("reason"), std::optional<llvm::StringRef>(""));

  // shared_memory
  const llvm::json::Object *shared = k->getObject("shared_memory");
  ASSERT_NE(shared, nullptr);
  EXPECT_EQ(keysOf(*shared), (Strings{"dynamic", "static", "static_bytes"}));
  EXPECT_EQ(shared->getInteger("static_bytes"), std::optional<int64_t>(128));
  const llvm::json::Array *statics = shared->getArray("static");
  ASSERT_NE(statics, nullptr);
  ASSERT_EQ(statics->size(), 1u);
  const llvm::json::Object *buf = (*statics)[0].getAsObject();
  ASSERT_NE(buf, nullptr);
  EXPECT_EQ(keysOf(*buf), (Strings{"bytes", "location", "name", "type"}));
  EXPECT_EQ(buf->getString("name"), std::optional<llvm::StringRef>("buf"));
  EXPECT_EQ(buf->getString("type"), std::optional<llvm::StringRef>("int[32]"));
  EXPECT_EQ(buf->getInteger("bytes"), std::optional<int64_t>(128));
  expectLocation(buf->getObject("location"), file, at("buf[32]"));
  ASSERT_NE(shared->getArray("dynamic"), nullptr);
  EXPECT_EQ(shared->getArray("dynamic")->size(), 0u);

  EXPECT_EQ(stringsOf(k->get("callees")), (Strings{"readBlock"}));
  ASSERT_NE(k->getArray("blockers"), nullptr);
  EXPECT_EQ(k->getArray("blockers")->size(), 0u);
  EXPECT_EQ(k->getBoolean("ptb_eligible"), std::optional<bool>(true));

  // launches
  const llvm::json::Array *launches = k->getArray("launches");
  ASSERT_NE(launches, nullptr);
  ASSERT_EQ(launches->size(), 1u);
  const llvm::json::Object *l = (*launches)[0].getAsObject();
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(keysOf(*l), sorted({"form", "location", "template_args", "in_macro", "macro", "in_macro_definition",
                                "function", "from_device_code"}));
  EXPECT_EQ(l->getString("form"), std::optional<llvm::StringRef>("<<<>>>"));
  expectLocation(l->getObject("location"), file, at("json_kernel<int><<<"));
  EXPECT_EQ(l->getString("template_args"), std::optional<llvm::StringRef>("int"));
  EXPECT_EQ(l->getBoolean("in_macro"), std::optional<bool>(false));
  EXPECT_EQ(l->getString("macro"), std::optional<llvm::StringRef>(""));
  EXPECT_EQ(l->getBoolean("in_macro_definition"), std::optional<bool>(false));
  EXPECT_EQ(l->getString("function"), std::optional<llvm::StringRef>("host"));
  EXPECT_EQ(l->getBoolean("from_device_code"), std::optional<bool>(false));
}

TEST_F(InventoryFormatTest, JsonRefusedKernelHasBlockersAndIsNotEligible) {
  const llvm::json::Object *k = kernelJson(only({"grid_sync"}));
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->getBoolean("ptb_eligible"), std::optional<bool>(false));
  const llvm::json::Array *blockers = k->getArray("blockers");
  ASSERT_NE(blockers, nullptr);
  ASSERT_EQ(blockers->size(), 1u);
  const llvm::json::Object *b = (*blockers)[0].getAsObject();
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(keysOf(*b), (Strings{"construct", "detail", "location"}));
  EXPECT_EQ(b->getString("construct"), std::optional<llvm::StringRef>("grid-wide sync"));
  ASSERT_TRUE(b->getString("detail").has_value());
  EXPECT_NE(b->getString("detail")->find("grid_group"), llvm::StringRef::npos);
  expectLocation(b->getObject("location"), inventoryFileName(), at("cg::this_grid()"));
}

TEST_F(InventoryFormatTest, JsonUnknownSharedSizesAreNull) {
  const llvm::json::Object *k = kernelJson(only({"shared_tpl"}));
  ASSERT_NE(k, nullptr);
  const llvm::json::Object *shared = k->getObject("shared_memory");
  ASSERT_NE(shared, nullptr);
  // tile[N] has no size in the pattern: the total is unknown too.
  ASSERT_NE(shared->get("static_bytes"), nullptr);
  EXPECT_EQ(shared->get("static_bytes")->kind(), llvm::json::Value::Null);
  const llvm::json::Array *statics = shared->getArray("static");
  ASSERT_NE(statics, nullptr);
  ASSERT_EQ(statics->size(), 2u);
  const llvm::json::Object *tile = (*statics)[0].getAsObject();
  EXPECT_EQ(tile->getString("name"), std::optional<llvm::StringRef>("tile"));
  ASSERT_NE(tile->get("bytes"), nullptr);
  EXPECT_EQ(tile->get("bytes")->kind(), llvm::json::Value::Null);
  const llvm::json::Object *counts = (*statics)[1].getAsObject();
  EXPECT_EQ(counts->getInteger("bytes"), std::optional<int64_t>(128));
  const llvm::json::Array *dynamic = shared->getArray("dynamic");
  ASSERT_NE(dynamic, nullptr);
  ASSERT_EQ(dynamic->size(), 1u);
  const llvm::json::Object *dyn = (*dynamic)[0].getAsObject();
  EXPECT_EQ(keysOf(*dyn), (Strings{"location", "name", "type"}));
  EXPECT_EQ(dyn->getString("name"), std::optional<llvm::StringRef>("dyn"));
  EXPECT_EQ(dyn->getString("type"), std::optional<llvm::StringRef>("float[]"));
}

TEST_F(InventoryFormatTest, JsonLaunchInMacroArgumentAndDefinition) {
  const llvm::json::Object *k = kernelJson(only({"direct_use"}));
  ASSERT_NE(k, nullptr);
  const llvm::json::Array *launches = k->getArray("launches");
  ASSERT_NE(launches, nullptr);
  ASSERT_EQ(launches->size(), 2u);
  const llvm::json::Object *arg = (*launches)[0].getAsObject(), *def = (*launches)[1].getAsObject();
  EXPECT_EQ(arg->getBoolean("in_macro"), std::optional<bool>(true));
  EXPECT_EQ(arg->getString("macro"), std::optional<llvm::StringRef>("RUN"));
  EXPECT_EQ(arg->getBoolean("in_macro_definition"), std::optional<bool>(false));
  EXPECT_EQ(def->getBoolean("in_macro"), std::optional<bool>(true));
  EXPECT_EQ(def->getString("macro"), std::optional<llvm::StringRef>("LAUNCH_IN_BODY"));
  EXPECT_EQ(def->getBoolean("in_macro_definition"), std::optional<bool>(true));
}

// --- Text --------------------------------------------------------------------------------------------

Strings linesOf(const std::string &text) {
  Strings lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST_F(InventoryFormatTest, TextHasTheExpectedLines) {
  std::string text = ptb::formatInventoryText({tu->inv});
  Strings lines = linesOf(text);
  const std::string f = inventoryFileName();
  auto L = [&](const std::string &needle, unsigned skip = 0) {
    Pos p = at(needle, skip);
    return f + ":" + std::to_string(p.line) + ":" + std::to_string(p.column);
  };
  Strings want = {
      f + ": " + std::to_string(tu->inv.kernels.size()) + " kernels",
      "chain_two  (" + L("chain_two(") + ")",
      "  parameters: int * out",
      "  blockIdx: via viaOne -> readBlock",
      "  blockIdx: macro BX; macro GLOBAL_ID",
      "json_kernel <typename T>  (" + L("json_kernel(T *p") + ")",
      "  instantiations: json_kernel<int>",
      "  blockIdx: direct; macro BX; via readBlock",
      "  barrier: cg::thread_block_tile::sync (warp-level) at " + L("tile.sync()"),
      "  barrier: __syncthreads at " + L("syncDeeper();\n  p[threadIdx.x] = o;") + " via syncDeeper -> syncHelper",
      "  return at " + L("return;\n  buf[threadIdx.x]") + ": block-uniform",
      "  return at " + L("return;\n  p[threadIdx.x] = 0;") + ": thread-dependent (threadIdx)",
      "  shared: static int[32] buf (128 bytes) at " + L("buf[32]"),
      "  shared: dynamic unsigned char[] raw at " + L("raw[];"),
      "grid_sync  (" + L("grid_sync(") + ")  [not PTB-eligible]",
      "  launch: " + L("json_kernel<int><<<") + " <<<>>> <int> in host",
      "  launch: " + L("direct_use<<<1, 32>>>") + " <<<>>> (in an argument of macro RUN) in host",
      "  launch: " + L("LAUNCH_IN_BODY(ip)") + " <<<>>> (in the definition of macro LAUNCH_IN_BODY) in host",
      "  launch: " + L("cudaLaunchKernel((const void") + " cudaLaunchKernel in host",
      "other launch: " + L("declared_only<<<") + " <<<>>> in host",
  };
  for (const std::string &w : want)
    EXPECT_NE(std::find(lines.begin(), lines.end(), w), lines.end()) << "missing line: '" << w << "'\nin:\n" << text;
  // The blocker line names the construct, place and detail.
  bool blockerLine = false;
  for (auto &l : lines)
    if (l.rfind("  blocks PTB: grid-wide sync at " + L("cg::this_grid()") + ": ", 0) == 0) blockerLine = true;
  EXPECT_TRUE(blockerLine) << text;
  // Unused built-ins are not listed: thread_only's block has no blockIdx line.
  size_t start = text.find("\nthread_only  ("), end = text.find("\n\n", start + 1);
  ASSERT_NE(start, std::string::npos);
  std::string threadOnly = text.substr(start, end - start);
  EXPECT_EQ(threadOnly.find("blockIdx"), std::string::npos) << threadOnly;
  EXPECT_NE(threadOnly.find("  threadIdx: direct; via tidOnly"), std::string::npos) << threadOnly;
}

TEST_F(InventoryFormatTest, TextOfOneKernelFile) {
  ptb::Inventory inv = only({"direct_use"});
  inv.otherLaunches.clear();
  std::string text = ptb::formatInventoryText({inv});
  EXPECT_EQ(linesOf(text).front(), std::string(inventoryFileName()) + ": 1 kernel");
}

} // namespace

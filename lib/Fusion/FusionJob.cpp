#include "FusionJob.h"

#include "clang/Basic/CharInfo.h"
#include "clang/Basic/IdentifierTable.h"
#include "clang/Basic/LangOptions.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"

#include <algorithm>

namespace ptb {

namespace {
llvm::Error failure(const std::string &message) {
  return llvm::make_error<llvm::StringError>(message, llvm::inconvertibleErrorCode());
}
} // namespace

// No block can have more dynamic shared memory than this (the largest SM today has 228 KiB); larger values
// are typing errors, and bounding them keeps the feasibility arithmetic far from overflow.
constexpr uint64_t kMaxDynamicShared = 1u << 20;

llvm::Error checkFusedName(llvm::StringRef name) {
  auto fail = [&](const std::string &why) {
    return failure("'" + name.str() + "' cannot name a fused kernel: " + why);
  };
  if (name.empty()) return fail("it is empty");
  if (!clang::isAsciiIdentifierStart(name[0]) ||
      !llvm::all_of(name, [](char c) { return clang::isAsciiIdentifierContinue(c); }))
    return fail("it is not a C++ identifier (letters, digits and '_', not starting with a digit)");
  if (name.starts_with("_")) return fail("names starting with '_' are reserved at file scope");
  if (name.contains("__")) return fail("names containing '__' are reserved");
  if (name.ends_with("_"))
    return fail("it ends in '_', and the names derived from it (" + name.str() + "_launch) would contain '__'");
  // C++17 with CUDA, as the output is compiled: keywords and alternative operator spellings (and, or, ...).
  clang::LangOptions lo;
  lo.CPlusPlus = lo.CPlusPlus11 = lo.CPlusPlus14 = lo.CPlusPlus17 = 1;
  lo.CUDA = 1;
  lo.Bool = lo.WChar = lo.CXXOperatorNames = 1;
  clang::IdentifierTable table(lo);
  if (table.get(name).isKeyword(lo) || table.get(name).isCPlusPlusOperatorKeyword()) return fail("it is a C++ keyword");
  return llvm::Error::success();
}

bool parseBlockShape(llvm::StringRef text, unsigned block[3]) {
  llvm::SmallVector<llvm::StringRef, 3> parts;
  text.split(parts, 'x');
  if (parts.empty() || parts.size() > 3) return false;
  unsigned b[3] = {1, 1, 1};
  for (size_t i = 0; i < parts.size(); ++i)
    if (parts[i].trim().getAsInteger(10, b[i]) || b[i] == 0 || b[i] > 1024) return false;
  std::copy(b, b + 3, block);
  return true;
}

llvm::Expected<FusionKernelRequest> parseKernelRequest(llvm::StringRef text) {
  auto [name, rest] = text.split('=');
  if (name.empty() || rest.empty())
    return failure("'" + text.str() +
                   "': expected NAME=BLOCK[,DYNAMIC_SHARED_BYTES], e.g. stencil=32x8 or hash=256,4096");
  auto [shape, shmem] = rest.split(',');
  FusionKernelRequest r;
  r.name = name.str();
  if (!parseBlockShape(shape, r.block))
    return failure("'" + text.str() + "': block shape '" + shape.str() + "' is not X, XxY or XxYxZ (each 1..1024)");
  if ((rest.contains(',') && shmem.empty()) ||
      (!shmem.empty() && (shmem.getAsInteger(10, r.dynamicShared) || r.dynamicShared > kMaxDynamicShared)))
    return failure("'" + text.str() + "': dynamic shared memory '" + shmem.str() +
                   "' is not a number of bytes (at most " + std::to_string(kMaxDynamicShared) + ")");
  return r;
}

namespace {
// "a:b[:c...]": two or more counts, each one `accept` takes.
template <class Accept> bool parseCounts(llvm::StringRef text, std::vector<unsigned> &out, Accept accept) {
  llvm::SmallVector<llvm::StringRef, 4> parts;
  text.split(parts, ':');
  std::vector<unsigned> r;
  for (llvm::StringRef p : parts) {
    unsigned v = 0;
    if (p.trim().getAsInteger(10, v) || !accept(v)) return false;
    r.push_back(v);
  }
  if (r.size() < 2) return false;
  out = r;
  return true;
}
} // namespace

bool parseRatio(llvm::StringRef text, std::vector<unsigned> &out) {
  return parseCounts(text, out, [](unsigned v) { return v >= 1 && v <= 15; });
}

std::string ratioString(const std::vector<unsigned> &slots) {
  std::vector<std::string> parts;
  for (unsigned s : slots) parts.push_back(std::to_string(s));
  return llvm::join(parts, ":");
}

bool parseCandidateLabel(llvm::StringRef text, std::vector<unsigned> &slots, unsigned &minBlocks) {
  std::vector<unsigned> budgets;
  return parseCandidateLabel(text, slots, minBlocks, budgets) && budgets.empty();
}

bool parseRegisterCounts(llvm::StringRef text, std::vector<unsigned> &out) {
  return parseCounts(text, out, [](unsigned v) { return v >= 24 && v <= 256 && v % 8 == 0; });
}

bool parseCandidateLabel(llvm::StringRef text, std::vector<unsigned> &slots, unsigned &minBlocks,
                         std::vector<unsigned> &budgets) {
  auto [candidate, registers] = text.split('@');
  std::vector<unsigned> b;
  if (text.contains('@') && (!parseRegisterCounts(registers, b))) return false;
  auto [ratio, blocks] = candidate.split('/');
  unsigned m = b.empty() ? 1 : 0;
  if (candidate.contains('/') && (blocks.getAsInteger(10, m) || m == 0 || m > 32)) return false;
  std::vector<unsigned> r;
  if (!parseRatio(ratio, r) || (!b.empty() && b.size() != r.size())) return false;
  slots = r;
  minBlocks = m;
  budgets = b;
  return true;
}

llvm::Expected<RegisterBudget> parseRegisterBudget(llvm::StringRef text) {
  RegisterBudget b;
  if (!text.contains('@')) {
    if (parseRegisterCounts(text, b.registers)) return b;
  } else if (parseCandidateLabel(text, b.slots, b.minBlocks, b.registers)) {
    return b;
  }
  return failure("'" + text.str() +
                 "': expected register counts per kernel (R:R, each a multiple of 8 from 24 to 256, "
                 "as setmaxnreg takes), optionally for one ratio (A:B[/BLOCKS]@R:R), e.g. 112:32 or 1:2@112:32");
}

namespace {

// Where the text first nests arrays and objects deeper than kMaxConfigNesting ("line L, column C"), or "".
// llvm::json::parse recurses once per level: a deep enough text overflows the stack.
std::string tooDeep(llvm::StringRef json) {
  unsigned depth = 0, line = 1, column = 0;
  bool inString = false, escaped = false;
  for (char c : json) {
    ++column;
    if (c == '\n') {
      ++line;
      column = 0;
    }
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"')
      inString = true;
    else if (c == '[' || c == '{') {
      if (++depth > kMaxConfigNesting) return "line " + std::to_string(line) + ", column " + std::to_string(column);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return "";
}

// An error for each key of `o` that is not one of `known` (a misspelt key would otherwise be ignored).
llvm::Error checkKeys(const llvm::json::Object &o, llvm::ArrayRef<llvm::StringRef> known, const std::string &where) {
  std::vector<std::string> unknown;
  for (const auto &kv : o)
    if (!llvm::is_contained(known, llvm::StringRef(kv.first))) unknown.push_back("\"" + kv.first.str() + "\"");
  if (unknown.empty()) return llvm::Error::success();
  std::sort(unknown.begin(), unknown.end());
  std::vector<std::string> names;
  for (llvm::StringRef k : known) names.push_back("\"" + k.str() + "\"");
  return failure(where + "unknown key" + (unknown.size() > 1 ? "s " : " ") + llvm::join(unknown, ", ") +
                 " (known: " + llvm::join(names, ", ") + ")");
}

} // namespace

llvm::Expected<std::vector<FusionJob>> parseFusionConfig(llvm::StringRef json) {
  std::vector<FusionJob> jobs;
  if (std::string at = tooDeep(json); !at.empty())
    return failure("invalid JSON: arrays and objects nest deeper than " + std::to_string(kMaxConfigNesting) +
                   " levels at " + at);
  auto parsed = llvm::json::parse(json);
  if (!parsed) return failure("invalid JSON: " + llvm::toString(parsed.takeError()));
  const llvm::json::Object *root = parsed->getAsObject();
  const llvm::json::Array *fusions = root ? root->getArray("fusions") : nullptr;
  if (!fusions) return failure("expected an object with a \"fusions\" array");
  if (llvm::Error e = checkKeys(*root, {"fusions"}, "")) return std::move(e);
  for (size_t i = 0; i < fusions->size(); ++i) {
    const std::string where = "fusions[" + std::to_string(i) + "]";
    const llvm::json::Object *f = (*fusions)[i].getAsObject();
    const llvm::json::Array *ks = f ? f->getArray("kernels") : nullptr;
    if (!ks || ks->size() < 2) return failure(where + ": expected \"kernels\": an array of at least two kernels");
    if (llvm::Error e =
            checkKeys(*f, {"kernels", "ratio", "ratios", "all_ratios", "min_blocks", "reg_budgets", "name", "output"},
                      where + ": "))
      return std::move(e);
    FusionJob job;
    for (size_t ki = 0; ki < ks->size(); ++ki) {
      const llvm::json::Value &kv = (*ks)[ki];
      const llvm::json::Object *k = kv.getAsObject();
      auto name = k ? k->getString("name") : std::nullopt;
      auto block = k ? k->getString("block") : std::nullopt;
      if (!name || !block) return failure(where + ": each kernel needs \"name\" and \"block\" (e.g. \"32x8\")");
      if (llvm::Error e =
              checkKeys(*k, {"name", "block", "dynamic_shared"}, where + ".kernels[" + std::to_string(ki) + "]: "))
        return std::move(e);
      FusionKernelRequest r;
      r.name = name->str();
      if (!parseBlockShape(*block, r.block))
        return failure(where + ": kernel '" + r.name + "': block '" + block->str() + "' is not X, XxY or XxYxZ");
      if (const llvm::json::Value *d = k->get("dynamic_shared")) {
        auto n = d->getAsInteger();
        if (!n || *n < 0 || static_cast<uint64_t>(*n) > kMaxDynamicShared)
          return failure(where + ": kernel '" + r.name + "': \"dynamic_shared\" must be a number of bytes (0.." +
                         std::to_string(kMaxDynamicShared) + ")");
        r.dynamicShared = static_cast<uint64_t>(*n);
      }
      job.kernels.push_back(r);
    }
    if (auto all = f->getBoolean("all_ratios")) job.allRatios = *all;
    std::vector<std::string> ratios;
    if (auto r = f->getString("ratio")) ratios.push_back(r->str());
    if (auto *rs = f->getArray("ratios"))
      for (const llvm::json::Value &v : *rs)
        if (auto s = v.getAsString()) ratios.push_back(s->str());
    for (const std::string &r : ratios) {
      std::vector<unsigned> v;
      if (!parseRatio(r, v) || v.size() != job.kernels.size())
        return failure(where + ": ratio '" + r + "' must give one slot count (1..15) per kernel, like 1:2");
      job.ratios.push_back(v);
    }
    if (auto *mb = f->getArray("min_blocks")) {
      job.minBlocks.clear();
      for (const llvm::json::Value &v : *mb) {
        auto m = v.getAsInteger();
        if (!m || *m < 1 || *m > 32)
          return failure(where + ": \"min_blocks\" must list numbers of blocks per SM (1..32)");
        job.minBlocks.push_back(static_cast<unsigned>(*m));
      }
    }
    if (const llvm::json::Value *rb = f->get("reg_budgets")) {
      const llvm::json::Array *items = rb->getAsArray();
      if (!items) return failure(where + ": \"reg_budgets\" must list register budgets (\"112:32\" or \"1:2@112:32\")");
      for (const llvm::json::Value &v : *items) {
        auto s = v.getAsString();
        if (!s) return failure(where + ": \"reg_budgets\" must list register budgets (\"112:32\" or \"1:2@112:32\")");
        llvm::Expected<RegisterBudget> b = parseRegisterBudget(*s);
        if (!b) return failure(where + ": \"reg_budgets\": " + llvm::toString(b.takeError()));
        if (!b->fits(job.kernels.size()))
          return failure(where + ": \"reg_budgets\": '" + s->str() + "' must give one count per kernel");
        job.budgets.push_back(*b);
      }
    }
    if (job.ratios.empty() && !job.allRatios && job.budgets.empty())
      return failure(where + ": give \"ratio\", \"ratios\" or \"all_ratios\": true");
    // Budgets for one ratio each and no ratio: only those candidates.
    if (job.ratios.empty() && !job.allRatios) job.plain = false;
    for (const RegisterBudget &b : job.budgets)
      if (b.slots.empty() && job.ratios.empty() && !job.allRatios)
        return failure(where + ": \"reg_budgets\" without a ratio need \"ratio\", \"ratios\" or \"all_ratios\"");
    if (auto n = f->getString("name")) {
      job.name = n->str();
      if (llvm::Error e = checkFusedName(job.name))
        return failure(where + ": \"name\": " + llvm::toString(std::move(e)));
    }
    if (auto o = f->getString("output")) job.output = o->str();
    jobs.push_back(std::move(job));
  }
  if (jobs.empty()) return failure("\"fusions\" is empty");
  return jobs;
}

std::vector<FusionKernelRequest> distinctKernels(const std::vector<FusionJob> &jobs) {
  std::vector<FusionKernelRequest> all;
  for (const FusionJob &j : jobs)
    for (const FusionKernelRequest &r : j.kernels)
      if (std::none_of(all.begin(), all.end(), [&](const FusionKernelRequest &a) { return a.name == r.name; }))
        all.push_back(r);
  return all;
}

} // namespace ptb

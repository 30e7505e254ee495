// What to fuse (parsed from the command line or a JSON batch) and the assembly of one fused output.
#include "FileSelection.h"
#include "FuseRewrite.h"
#include "SourceText.h"

#include "clang/Basic/CharInfo.h"
#include "clang/Basic/IdentifierTable.h"
#include "clang/Basic/LangOptions.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

#include <fmt/core.h>

namespace ptb {

// No block can have more dynamic shared memory than this (the largest SM today has 228 KiB); larger values
// are typing errors, and bounding them keeps the feasibility arithmetic far from overflow.
constexpr uint64_t kMaxDynamicShared = 1u << 20;

bool checkFusedName(llvm::StringRef name, std::string &error) {
  auto fail = [&](const std::string &why) {
    error = "'" + name.str() + "' cannot name a fused kernel: " + why;
    return false;
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
  if (table.get(name).isKeyword(lo) || table.get(name).isCPlusPlusOperatorKeyword())
    return fail("it is a C++ keyword");
  return true;
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

bool parseKernelRequest(llvm::StringRef text, FusionKernelRequest &out, std::string &error) {
  auto [name, rest] = text.split('=');
  if (name.empty() || rest.empty()) {
    error = "'" + text.str() + "': expected NAME=BLOCK[,DYNAMIC_SHARED_BYTES], e.g. stencil=32x8 or hash=256,4096";
    return false;
  }
  auto [shape, shmem] = rest.split(',');
  FusionKernelRequest r;
  r.name = name.str();
  if (!parseBlockShape(shape, r.block)) {
    error = "'" + text.str() + "': block shape '" + shape.str() + "' is not X, XxY or XxYxZ (each 1..1024)";
    return false;
  }
  if ((rest.contains(',') && shmem.empty()) ||
      (!shmem.empty() && (shmem.getAsInteger(10, r.dynamicShared) || r.dynamicShared > kMaxDynamicShared))) {
    error = "'" + text.str() + "': dynamic shared memory '" + shmem.str() + "' is not a number of bytes (at most " +
            std::to_string(kMaxDynamicShared) + ")";
    return false;
  }
  out = r;
  return true;
}

bool parseRatio(llvm::StringRef text, std::vector<unsigned> &out) {
  llvm::SmallVector<llvm::StringRef, 4> parts;
  text.split(parts, ':');
  std::vector<unsigned> r;
  for (llvm::StringRef p : parts) {
    unsigned v = 0;
    if (p.trim().getAsInteger(10, v) || v == 0 || v > 15) return false;
    r.push_back(v);
  }
  if (r.size() < 2) return false;
  out = r;
  return true;
}

bool parseCandidateLabel(llvm::StringRef text, std::vector<unsigned> &slots, unsigned &minBlocks) {
  auto [ratio, blocks] = text.split('/');
  unsigned m = 1;
  if (!blocks.empty() && (blocks.getAsInteger(10, m) || m == 0 || m > 32)) return false;
  if (!parseRatio(ratio, slots)) return false;
  minBlocks = m;
  return true;
}

bool ratioFromHarnessOutput(llvm::StringRef text, std::vector<unsigned> &out, std::string &error,
                            unsigned *minBlocks) {
  llvm::SmallVector<llvm::StringRef, 64> lines;
  text.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    line = line.trim();
    if (!line.consume_front("winner ")) continue;
    llvm::StringRef ratio = line.trim().split(' ').first;
    if (ratio == "none") {
      error = "the harness found no ratio faster than running the kernels one after the other (winner none)";
      return false;
    }
    unsigned m = 1;
    if (!parseCandidateLabel(ratio, out, m) || (m > 1 && !minBlocks)) {
      error = "the harness's winner line names '" + ratio.str() + "', not a ratio";
      return false;
    }
    if (minBlocks) *minBlocks = m;
    return true;
  }
  error = "no 'winner <ratio>' line in the harness output";
  return false;
}

bool parseFusionConfig(llvm::StringRef json, std::vector<FusionJob> &jobs, std::string &error) {
  auto parsed = llvm::json::parse(json);
  if (!parsed) {
    error = "invalid JSON: " + llvm::toString(parsed.takeError());
    return false;
  }
  const llvm::json::Object *root = parsed->getAsObject();
  const llvm::json::Array *fusions = root ? root->getArray("fusions") : nullptr;
  if (!fusions) {
    error = "expected an object with a \"fusions\" array";
    return false;
  }
  for (size_t i = 0; i < fusions->size(); ++i) {
    const std::string where = "fusions[" + std::to_string(i) + "]";
    const llvm::json::Object *f = (*fusions)[i].getAsObject();
    const llvm::json::Array *ks = f ? f->getArray("kernels") : nullptr;
    if (!ks || ks->size() < 2) {
      error = where + ": expected \"kernels\": an array of at least two kernels";
      return false;
    }
    FusionJob job;
    for (const llvm::json::Value &kv : *ks) {
      const llvm::json::Object *k = kv.getAsObject();
      auto name = k ? k->getString("name") : std::nullopt;
      auto block = k ? k->getString("block") : std::nullopt;
      if (!name || !block) {
        error = where + ": each kernel needs \"name\" and \"block\" (e.g. \"32x8\")";
        return false;
      }
      FusionKernelRequest r;
      r.name = name->str();
      if (!parseBlockShape(*block, r.block)) {
        error = where + ": kernel '" + r.name + "': block '" + block->str() + "' is not X, XxY or XxYxZ";
        return false;
      }
      if (const llvm::json::Value *d = k->get("dynamic_shared")) {
        auto n = d->getAsInteger();
        if (!n || *n < 0 || static_cast<uint64_t>(*n) > kMaxDynamicShared) {
          error = where + ": kernel '" + r.name + "': \"dynamic_shared\" must be a number of bytes (0.." +
                  std::to_string(kMaxDynamicShared) + ")";
          return false;
        }
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
      if (!parseRatio(r, v) || v.size() != job.kernels.size()) {
        error = where + ": ratio '" + r + "' must give one slot count (1..15) per kernel, like 1:2";
        return false;
      }
      job.ratios.push_back(v);
    }
    if (auto *mb = f->getArray("min_blocks")) {
      job.minBlocks.clear();
      for (const llvm::json::Value &v : *mb) {
        auto m = v.getAsInteger();
        if (!m || *m < 1 || *m > 32) {
          error = where + ": \"min_blocks\" must list numbers of blocks per SM (1..32)";
          return false;
        }
        job.minBlocks.push_back(static_cast<unsigned>(*m));
      }
    }
    if (job.ratios.empty() && !job.allRatios) {
      error = where + ": give \"ratio\", \"ratios\" or \"all_ratios\": true";
      return false;
    }
    if (auto n = f->getString("name")) {
      job.name = n->str();
      if (!checkFusedName(job.name, error)) {
        error = where + ": \"name\": " + error;
        return false;
      }
    }
    if (auto o = f->getString("output")) job.output = o->str();
    jobs.push_back(std::move(job));
  }
  if (jobs.empty()) {
    error = "\"fusions\" is empty";
    return false;
  }
  return true;
}

std::string assembleFusedOutput(const FusionJob &job, const std::vector<const FusionFile *> &files,
                                const std::vector<SlotKernel> &kernels, const FusionLimits &limits,
                                const std::string &toolVersion, std::vector<std::string> &errors,
                                std::vector<std::string> &notes) {
  std::string base = job.name;
  if (base.empty()) {
    std::vector<std::string> names;
    for (const SlotKernel &k : kernels) names.push_back(k.name);
    base = llvm::join(names, "__") + "__fused";
  }
  // The candidates: every ratio with every number of blocks per SM asked for. Explicit ones must be
  // feasible; with --all-ratios the infeasible ones are left out.
  std::vector<FusedCandidate> candidates;
  std::vector<std::vector<unsigned>> ratios = job.allRatios ? feasibleRatios(kernels, limits) : job.ratios;
  if (ratios.empty())
    errors.push_back(kernels.front().loc.str() + ": error: no ratio of these kernels fits one block: " +
                     llvm::join(fusionProblems(kernels, std::vector<unsigned>(kernels.size(), 1), limits), "; "));
  const bool several = ratios.size() * job.minBlocks.size() > 1 || job.allRatios;
  for (const auto &r : ratios)
    for (unsigned m : job.minBlocks) {
      FusedCandidate c;
      c.slots = r;
      c.minBlocks = m;
      auto problems = fusionProblems(kernels, r, limits, m);
      if (!problems.empty()) {
        if (!job.allRatios)
          for (const std::string &p : problems)
            errors.push_back(kernels.front().loc.str() + ": error: ratio " + c.label() + " cannot be fused: " + p);
        continue;
      }
      c.name = base;
      if (several) {
        for (unsigned s : r) c.name += "_" + std::to_string(s);
        if (m > 1) c.name += "_mb" + std::to_string(m);
      }
      candidates.push_back(c);
    }
  if (!errors.empty()) return "";

  std::vector<std::string> sources;
  for (const FusionFile *f : files) sources.push_back(llvm::sys::path::filename(f->path).str());
  std::string out = std::string(kFusedMarker) + " " + toolVersion + " from " + llvm::join(sources, ", ") +
                    "; edit the originals, not this file (docs/fuse-kernels.md).\n#include \"ptb/ptb.cuh\"\n";
  for (const FusionFile *f : files) {
    // Quoted #includes found beside the input point at their files from the output's directory (with
    // the output on stdout, where it goes is not known: they stay).
    std::string relocated = f->text;
    if (!job.output.empty()) {
      std::string includerDir = llvm::sys::path::parent_path(absolutePath(f->path)).str();
      std::string outputDir = llvm::sys::path::parent_path(absolutePath(job.output)).str();
      for (auto it = f->localIncludes.rbegin(); it != f->localIncludes.rend(); ++it) {
        std::string name = relocatedInclude(*it, includerDir, outputDir);
        if (!name.empty()) relocated.replace(it->offset, it->length, name);
      }
    }
    // A UTF-8 byte-order mark can only be first in a file: dropped (nvcc rejects one anywhere else).
    llvm::StringRef text = relocated;
    text.consume_front("\xEF\xBB\xBF");
    out += "#line 1 \"" + quoteForLineDirective(f->path) + "\"\n" + text.str();
    if (!f->text.empty() && f->text.back() != '\n') out += "\n";
  }
  for (const FusedCandidate &c : candidates) {
    const std::vector<unsigned> &r = c.slots;
    out += "#line " + std::to_string(kernels.front().loc.line) + " \"" + quoteForLineDirective(kernels.front().loc.file) + "\"";
    out += emitFusedKernel(kernels, r, c.name, c.minBlocks);
    const FusedShape f = fusedShape(kernels, r);
    notes.push_back(fmt::format("{}: ratio {}, {} threads, {} slots; shared memory per block: {} B static (slots' "
                                "variables and bookkeeping) + {} B dynamic; registers: {}",
                                c.name, c.label(), f.threads, f.slots, f.staticShared, f.dynamicShared,
                                c.minBlocks > 1 ? fmt::format("at most {} per thread ({} blocks per SM asked for)",
                                                              limits.registersPerSm / (c.minBlocks * f.threads) / 8 * 8,
                                                              c.minBlocks)
                                                : std::string("see the harness or nvcc -Xptxas -v")));
  }
  out += emitCandidateTable(kernels, base, candidates);
  return out;
}

} // namespace ptb

// What to fuse (parsed from the command line or a JSON batch) and the assembly of one fused output.
#include "FuseRewrite.h"
#include "SourceText.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

#include <fmt/core.h>

namespace ptb {

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
  if (!shmem.empty() && shmem.getAsInteger(10, r.dynamicShared)) {
    error = "'" + text.str() + "': dynamic shared memory '" + shmem.str() + "' is not a number of bytes";
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

bool ratioFromHarnessOutput(llvm::StringRef text, std::vector<unsigned> &out, std::string &error) {
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
    if (!parseRatio(ratio, out)) {
      error = "the harness's winner line names '" + ratio.str() + "', not a ratio";
      return false;
    }
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
      if (auto d = k->getInteger("dynamic_shared")) r.dynamicShared = static_cast<uint64_t>(*d);
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
    if (job.ratios.empty() && !job.allRatios) {
      error = where + ": give \"ratio\", \"ratios\" or \"all_ratios\": true";
      return false;
    }
    if (auto n = f->getString("name")) job.name = n->str();
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
  std::vector<std::vector<unsigned>> ratios = job.ratios;
  if (job.allRatios) {
    ratios = feasibleRatios(kernels, limits);
    if (ratios.empty()) {
      errors.push_back(kernels.front().loc.str() + ": error: no ratio of these kernels fits one block: " +
                       llvm::join(fusionProblems(kernels, std::vector<unsigned>(kernels.size(), 1), limits), "; "));
      return "";
    }
  }
  for (const auto &r : ratios) {
    auto problems = fusionProblems(kernels, r, limits);
    for (const std::string &p : problems)
      errors.push_back(kernels.front().loc.str() + ": error: ratio " + ratioString(r) + " cannot be fused: " + p);
  }
  if (!errors.empty()) return "";

  std::vector<std::string> sources;
  for (const FusionFile *f : files) sources.push_back(llvm::sys::path::filename(f->path).str());
  std::string out = std::string(kFusedMarker) + " " + toolVersion + " from " + llvm::join(sources, ", ") +
                    "; edit the originals, not this file (docs/fuse-kernels.md).\n#include \"ptb/ptb.cuh\"\n";
  for (const FusionFile *f : files) {
    out += "#line 1 \"" + quoteForLineDirective(f->path) + "\"\n" + f->text;
    if (!f->text.empty() && f->text.back() != '\n') out += "\n";
  }
  std::vector<std::pair<std::string, std::vector<unsigned>>> fused;
  for (const auto &r : ratios) {
    std::string name = base;
    if (ratios.size() > 1 || job.allRatios)
      for (unsigned s : r) name += "_" + std::to_string(s);
    out += "#line " + std::to_string(kernels.front().loc.line) + " \"" + quoteForLineDirective(kernels.front().loc.file) + "\"";
    out += emitFusedKernel(kernels, r, name);
    fused.push_back({name, r});
    unsigned threads = 0;
    uint64_t dyn = 0;
    for (size_t i = 0; i < kernels.size(); ++i) {
      threads += r[i] * kernels[i].request.threads();
      dyn += r[i] * ((kernels[i].request.dynamicShared + 15) / 16 * 16);
    }
    notes.push_back(fmt::format("{}: ratio {}, {} threads, {} slots; shared memory per block: {} B static (slots' "
                                "variables and bookkeeping) + {} B dynamic; registers: see the harness or "
                                "nvcc -Xptxas -v",
                                name, ratioString(r), threads, [&] {
                                  unsigned n = 0;
                                  for (unsigned s : r) n += s;
                                  return n;
                                }(),
                                fusedStaticShared(kernels, r), dyn));
  }
  out += emitCandidateTable(kernels, base, fused);
  return out;
}

} // namespace ptb

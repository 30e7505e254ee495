#include "RewriteOutputs.h"

#include <set>

namespace ptb {

llvm::Error collectOutputs(const std::vector<RewriteResult> &results, std::map<std::string, std::string> &files) {
  std::map<std::string, std::string> producer; // destination -> the input whose translation unit wrote it
  std::set<std::string> mainAt;                // destinations of main files
  for (const RewriteResult &r : results)
    for (const FileOutput &f : r.files) {
      if (f.destination.empty()) continue;
      auto [it, fresh] = files.emplace(f.destination, f.output);
      if (fresh) {
        producer[f.destination] = r.file;
        if (f.isMain) mainAt.insert(f.destination);
        continue;
      }
      if (f.isMain || mainAt.count(f.destination)) { // two inputs with one output path: no copy to share
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       "the output of '" + producer[f.destination] + "' and the output of '" + r.file +
                                           "' would both be written to '" + f.destination + "' (nothing written)");
      }
      if (it->second == f.output) continue;
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "'" + f.destination + "' would be written twice with different contents (from " +
                                         producer[f.destination] + " and from " + r.file +
                                         (f.isMain ? "" : ", which both include " + f.source) +
                                         "); transform these inputs in separate runs or to separate directories");
    }
  return llvm::Error::success();
}

std::string describeFileOutput(const FileOutput &f) {
  auto count = [](size_t n, const char *one, const char *many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  std::string to = f.destination.empty() ? "stdout" : f.destination == f.source ? "in place" : f.destination;
  if (f.isTwinsPart)
    return "ptb-transform: " + f.source + " -> " + to + ": " +
           (f.twinsApart
                ? count(f.twinsApart, "twin", "twins") + " compiled apart, in a module of their own"
                : "empty, no twins apart" + (f.twinsKeptBecause.empty() ? std::string() : ": " + f.twinsKeptBecause));
  std::string line = "ptb-transform: " + f.source + " -> " + to + ": " +
                     count(f.transformedKernels.size(), "kernel", "kernels") + " made PTB, " +
                     std::to_string(f.skippedKernels.size()) + " left as " +
                     (f.skippedKernels.size() == 1 ? "it is" : "they are") + ", " +
                     count(f.rewrittenLaunches, "launch", "launches") + " rewritten";
  if (f.clonedFunctions) line += ", " + count(f.clonedFunctions, "device function", "device functions") + " cloned";
  if (f.redirectedIncludes)
    line += ", " + count(f.redirectedIncludes, "#include", "#includes") + " pointed at transformed copies";
  if (f.relocatedIncludes)
    line +=
        ", " + count(f.relocatedIncludes, "#include", "#includes") + " of local files pointed at them from the output";
  return line;
}

} // namespace ptb

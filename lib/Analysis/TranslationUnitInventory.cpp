#include "TranslationUnitInventory.h"
#include "KernelBuilder.h"
#include "KernelsAndLaunches.h"

#include <set>

using namespace clang;

namespace ptb {

Inventory analyzeTranslationUnit(ASTContext &ctx, const FileSelection &selection) {
  Inventory inv;
  SourceManager &sm = ctx.getSourceManager();
  if (auto fe = sm.getFileEntryRefForID(sm.getMainFileID())) inv.mainFile = fe->getName().str();
  inv.analysis = std::make_shared<analysis::Analyzer>(ctx, selection);
  analysis::Analyzer &a = *inv.analysis;
  if (selection.selectsIncludedFiles()) {
    std::set<std::string> seen;
    for (unsigned i = 0, n = sm.local_sloc_entry_size(); i < n; ++i) {
      const SrcMgr::SLocEntry &e = sm.getLocalSLocEntry(i);
      if (!e.isFile()) continue;
      FileID fid = sm.getFileID(SourceLocation::getFromRawEncoding(e.getOffset()));
      if (fid == sm.getMainFileID() || !a.selected.contains(fid)) continue;
      if (auto fe = sm.getFileEntryRefForID(fid); fe && seen.insert(fe->getName().str()).second)
        inv.includedFiles.push_back(fe->getName().str());
    }
  }
  analysis::KernelsAndLaunches found = analysis::findKernelsAndLaunches(a);
  std::set<const FunctionDecl *> known;
  for (const FunctionDecl *fd : found.kernels) {
    Kernel k = analysis::buildKernel(a, fd);
    auto it = found.launchesByKernel.find(fd);
    if (it != found.launchesByKernel.end()) k.launches = it->second;
    known.insert(fd);
    inv.kernels.push_back(std::move(k));
  }
  for (auto &[fd, sites] : found.launchesByKernel)
    if (!known.count(fd)) inv.otherLaunches.insert(inv.otherLaunches.end(), sites.begin(), sites.end());
  inv.otherLaunches.insert(inv.otherLaunches.end(), found.otherLaunches.begin(), found.otherLaunches.end());
  return inv;
}

} // namespace ptb

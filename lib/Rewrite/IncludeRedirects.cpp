#include "IncludeRedirects.h"

#include "Diagnostics.h"
#include "LocalIncludes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Path.h"

namespace ptb::rewrite {

const std::vector<IncludeRedirects::Inclusion> &IncludeRedirects::inclusions() {
  if (!inclusionList.empty()) return inclusionList;
  for (unsigned i = 0, n = sm.local_sloc_entry_size(); i < n; ++i) {
    const SrcMgr::SLocEntry &e = sm.getLocalSLocEntry(i);
    if (!e.isFile()) continue;
    FileID fid = sm.getFileID(SourceLocation::getFromRawEncoding(e.getOffset()));
    if (fid.isInvalid() || fid == mainFile) continue;
    SourceLocation where = e.getFile().getIncludeLoc();
    FileID includer = where.isValid() ? cx.canon(sm.getFileID(sm.getExpansionLoc(where))) : FileID();
    inclusionList.push_back({cx.canon(fid), includer, where.isValid() ? sm.getExpansionLoc(where) : where});
  }
  // Directives the parse did not enter: a header skipped by #pragma once or its include guard (two
  // headers that include each other) is still opened by nvcc through that directive, so it must name
  // the transformed copy too. Found in the text, as LocalIncludes finds them: quoted names beside the
  // includer, of selected files of this translation unit.
  std::set<std::pair<FileID, unsigned>> entered;
  for (const Inclusion &inc : inclusionList)
    if (inc.includer.isValid() && inc.where.isValid()) entered.insert({inc.includer, offsetOf(inc.where)});
  std::vector<FileID> files{mainFile};
  for (const Inclusion &inc : inclusionList)
    if (cx.selected.contains(inc.file) && llvm::find(files, inc.file) == files.end()) files.push_back(inc.file);
  std::vector<Inclusion> skipped;
  for (FileID f : files)
    for (const LocalInclude &li : localIncludes(sm.getBufferData(f), cx.nameOf(f))) {
      if (entered.count({f, li.offset})) continue;
      auto fe = sm.getFileManager().getOptionalFileRef(li.target);
      FileID target = fe ? cx.canon(sm.translateFile(*fe)) : FileID();
      if (target.isInvalid() || target == mainFile || !cx.selected.contains(target)) continue;
      skipped.push_back({target, f, sm.getLocForStartOfFile(f).getLocWithOffset(li.offset)});
    }
  inclusionList.insert(inclusionList.end(), skipped.begin(), skipped.end());
  return inclusionList;
}

std::vector<FileID> IncludeRedirects::includedInOrder() {
  std::vector<FileID> out;
  std::set<FileID> seen;
  for (const Inclusion &inc : inclusions())
    if (cx.selected.contains(inc.file) && seen.insert(inc.file).second) out.push_back(inc.file);
  return out;
}

bool IncludeRedirects::redirectIncludes(std::set<FileID> &written) {
  bool inPlace = cx.opts.layout.mode == OutputLayout::Mode::InPlace;
  for (bool changed = true; changed && !inPlace;) {
    changed = false;
    for (const Inclusion &inc : inclusions())
      if (written.count(inc.file) && inc.includer.isValid() && written.insert(inc.includer).second) changed = true;
  }
  std::set<std::pair<unsigned, unsigned>> done;
  for (const Inclusion &inc : inclusions()) {
    if (!written.count(inc.file) || inc.file == mainFile) continue;
    if (cx.destinationOf(inc.file).empty()) {
      report(cx.diags, inc.where.isValid() ? inc.where : sm.getLocForStartOfFile(inc.file), DiagnosticsEngine::Error,
             "'" + cx.nameOf(inc.file) +
                 "' is included and changes (kernels made PTB, launches rewritten), but "
                 "its transformed copy cannot go to stdout with the main file: use -o, --output-dir or -i");
      return false;
    }
    if (inPlace) continue;
    if (!inc.includer.isValid() || !cx.selected.contains(inc.includer)) {
      report(cx.diags, inc.where.isValid() ? inc.where : sm.getLocForStartOfFile(inc.file), DiagnosticsEngine::Error,
             "'" + cx.nameOf(inc.file) +
                 "' changes, but it is included from a file that --header-filter does not "
                 "select, so that #include cannot be pointed at its transformed copy; select that file too");
      return false;
    }
    unsigned off = offsetOf(inc.where);
    if (!done.insert({inc.includer.getHashValue(), off}).second) continue;
    llvm::StringRef text = sm.getBufferData(inc.includer).substr(off);
    char close = text.starts_with("\"") ? '"' : text.starts_with("<") ? '>' : 0;
    size_t end = close ? text.find_first_of(std::string(1, close) + "\n", 1) : llvm::StringRef::npos;
    if (!close || end == llvm::StringRef::npos || text[end] != close) {
      report(cx.diags, inc.where, DiagnosticsEngine::Error,
             "this #include names '" + cx.nameOf(inc.file) +
                 "', which changes, through a macro: it cannot be "
                 "pointed at the transformed copy; write the file name in the #include");
      return false;
    }
    std::string from = llvm::sys::path::parent_path(absolutePath(cx.destinationOf(inc.includer))).str();
    cx.addEdit(inc.includer, off, unsigned(end + 1), "\"" + relativePath(from, cx.destinationOf(inc.file)) + "\"");
    ++cx.stats[inc.includer].includes;
  }
  if (inPlace) return true;
  // A quoted #include of a file that keeps its text, found beside the includer ("kernels.h" next to
  // app.cu), is pointed at that file from where the output goes: the output compiles with the flags
  // the original compiles with, wherever it is written (stdout: where it goes is not known).
  for (FileID f : written) {
    std::string dest = cx.destinationOf(f);
    if (dest.empty()) continue;
    std::string source = f == mainFile ? cx.inv.mainFile : cx.nameOf(f);
    std::string includerDir = llvm::sys::path::parent_path(absolutePath(source)).str();
    std::string outputDir = llvm::sys::path::parent_path(absolutePath(dest)).str();
    for (const LocalInclude &li : localIncludes(sm.getBufferData(f), source)) {
      if (done.count({f.getHashValue(), li.offset})) continue; // pointed at a transformed copy above
      std::string name = relocatedInclude(li, includerDir, outputDir);
      if (name.empty()) continue;
      cx.addEdit(f, li.offset, li.length, name);
      ++cx.stats[f].localIncludes;
    }
  }
  return true;
}

} // namespace ptb::rewrite

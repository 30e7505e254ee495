#include "CallRedirects.h"

#include "Diagnostics.h"

#include <algorithm>
#include <vector>

namespace ptb::rewrite {

void CallRedirects::add(const Kernel &k) {
  for (const VirtualizedCall &c : k.virtualizedCalls)
    redirects[c.nameLoc.getRawEncoding()] = {c.nameLoc, callCloneEdits(c.site, sm)};
  for (const TaskBarrierEdit &e : taskEdits(k, sm, lo)) taskBarrierEdits[{e.at.getRawEncoding(), e.length}] = e;
}

std::string CallRedirects::bodyWithRedirects(const FunctionDecl *fd) const {
  return textWithRedirects(sm.getExpansionLoc(fd->getBody()->getBeginLoc()),
                           afterToken(sm.getExpansionLoc(fd->getBody()->getEndLoc())));
}

std::string CallRedirects::textWithRedirects(SourceLocation b, SourceLocation e) const {
  FileID f = sm.getFileID(b);
  unsigned bo = offsetOf(b), eo = offsetOf(e);
  // Redirected calls (their CallEdits) and, in a parking kernel's body and clones, barriers made task
  // barriers (a replacement of the barrier's name, or an insertion before a group and a replacement of
  // its `.sync()`, taken as an innermost opening).
  std::vector<CallEdit> inside;
  for (auto &entry : redirects) {
    const Redirect &call = entry.second;
    unsigned off = offsetOf(call.at);
    if (sm.getFileID(call.at) != f || off < bo || off >= eo) continue;
    for (const CallEdit &edit : call.edits)
      if (sm.getFileID(edit.loc) == f && offsetOf(edit.loc) >= bo && offsetOf(edit.loc) + edit.length <= eo)
        inside.push_back(edit);
  }
  for (auto &entry : taskBarrierEdits) {
    const TaskBarrierEdit &edit = entry.second;
    unsigned off = offsetOf(edit.at);
    if (sm.getFileID(edit.at) == f && off >= bo && off + edit.length <= eo)
      inside.push_back(
          {edit.length ? CallEdit::Kind::Replace : CallEdit::Kind::Open, edit.at, edit.length, edit.text, 0});
  }
  auto rank = [](const CallEdit &x) {
    return x.kind == CallEdit::Kind::Close ? 0 : x.kind == CallEdit::Kind::Open ? 1 : 2;
  };
  std::stable_sort(inside.begin(), inside.end(), [&](const CallEdit &x, const CallEdit &y) {
    unsigned xo = offsetOf(x.loc), yo = offsetOf(y.loc);
    if (xo != yo) return xo < yo;
    if (rank(x) != rank(y)) return rank(x) < rank(y);
    if (x.kind == CallEdit::Kind::Close) return x.extent < y.extent;
    if (x.kind == CallEdit::Kind::Open) return x.extent > y.extent;
    return false;
  });
  llvm::StringRef buffer = sm.getBufferData(f);
  std::string text;
  unsigned at = bo;
  for (const CallEdit &edit : inside) {
    unsigned off = offsetOf(edit.loc);
    if (off < at) { // not produced by the analysis
      report(cx.diags, edit.loc, DiagnosticsEngine::Error,
             "internal error: overlapping edits of calls sent to PTB clones; please report this input");
      continue;
    }
    text += buffer.substr(at, off - at).str();
    text += edit.text;
    at = off + edit.length;
  }
  text += buffer.substr(at, eo - at).str();
  return text;
}

} // namespace ptb::rewrite

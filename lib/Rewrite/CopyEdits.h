// What the twin and the clone edits share (TwinEdits.h, CloneEdits.h): each adds a copy of a function's
// definition after the original, its body with the calls sent to clones (CallRedirects), and, where the
// function is declared before its definition, a declaration after that first one. Internal to lib/Rewrite.
#pragma once

#include "CallRedirects.h"
#include "EditContext.h"
#include "TwinsApartEdits.h"

#include <string>

namespace ptb::rewrite {

using namespace clang;

class CopyEdits : protected SourceText {
public:
  CopyEdits(EditContext &cx, CallRedirects &redirects, TwinsApartEdits &twinsApart)
      : SourceText(cx), cx(cx), redirects(redirects), twinsApart(twinsApart) {}

protected:
  // Just after the definition's closing brace, where its copy goes.
  SourceLocation afterBody(const FunctionDecl *fd) const {
    return afterToken(sm.getExpansionLoc(fd->getBody()->getEndLoc()));
  }

  // The copy's body: a #line directive to the original's, then its text with the calls sent to clones.
  std::string copiedBody(const FunctionDecl *fd, FileID f) const {
    return lineDirective(f, lineOf(sm.getExpansionLoc(fd->getBody()->getBeginLoc()))) + redirects.bodyWithRedirects(fd);
  }

  // `text` inserted at `at` in `f`, followed by a #line directive back to the original's text there.
  void insertAt(FileID f, SourceLocation at, const std::string &text) {
    cx.addEdit(f, offsetOf(at), 0, text + lineDirective(f, lineOf(at)));
  }

  // `declaration` after `first`, the first declaration of `fd`, below `fd`'s template header if it has one.
  void declareAfter(const FunctionDecl *first, const FunctionDecl *fd, const std::string &declaration) {
    const std::string tmpl = templateHeader(fd);
    cx.declareAfterFirstDeclaration(first, (tmpl.empty() ? "" : tmpl + "\n") + declaration);
  }

  EditContext &cx;
  CallRedirects &redirects;
  TwinsApartEdits &twinsApart;
};

} // namespace ptb::rewrite

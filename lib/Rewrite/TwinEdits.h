// A kernel's PTB twin, beside the kernel: its task function (the body, calls sent to clones), the twin
// that runs the tasks, and the launcher that launches it (docs/generated-code.md). Internal to
// lib/Rewrite.
#pragma once

#include "CallRedirects.h"
#include "EditContext.h"
#include "TwinsApartEdits.h"

namespace ptb::rewrite {

using namespace clang;

class TwinEdits : SourceText {
public:
  TwinEdits(EditContext &cx, CallRedirects &redirects, TwinsApartEdits &twinsApart)
      : SourceText(cx), cx(cx), redirects(redirects), twinsApart(twinsApart) {}

  void emitTwin(const Kernel &k);

private:
  EditContext &cx;
  CallRedirects &redirects;
  TwinsApartEdits &twinsApart;
};

} // namespace ptb::rewrite

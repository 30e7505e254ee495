// A kernel's PTB twin, beside the kernel: its task function (the body, calls sent to clones), the twin
// that runs the tasks, and the launcher that launches it (docs/generated-code.md). Internal to
// lib/Rewrite.
#pragma once

#include "CopyEdits.h"

namespace ptb::rewrite {

using namespace clang;

class TwinEdits : CopyEdits {
public:
  using CopyEdits::CopyEdits;

  void emitTwin(const Kernel &k);
};

} // namespace ptb::rewrite

// The text edits that send a call to its callee's PTB clone (docs/generated-code.md): from how the call is
// written (CloneCallSite, found by lib/Analysis), the clone's name and the virtual indices put in. Internal
// to lib/Rewrite.
#pragma once

#include "KernelInventory.h"

#include "clang/Basic/SourceManager.h"

#include <string>
#include <vector>

namespace ptb::rewrite {

// One text edit of a call, at a file location. Edits of nested calls can meet at one offset: there the
// closing ones come first (inner call first), then the opening ones (outer call first), then the
// replacement of the token found there.
struct CallEdit {
  enum class Kind { Close, Open, Replace };
  Kind kind = Kind::Replace;
  clang::SourceLocation loc;
  unsigned length = 0; // characters replaced (0: an insertion)
  std::string text;
  unsigned extent = 0; // length of the call's text: orders the edits of nested calls at one offset
};

// The edits that send the call written at `site` to the clone: a named call's name becomes the clone's
// and the virtual indices go first among its arguments (`f(x)` -> `f__ptb(blockIdx, gridDim, x)`); an
// overloaded operator is written as a call of the clone, a member (`a + b` ->
// `(a).operatorPlus__ptb(blockIdx, gridDim, b)`, `x[i]` -> `x.operatorSubscript__ptb(blockIdx, gridDim, i)`,
// `f(a)` -> `f.operatorCall__ptb(blockIdx, gridDim, a)`, `-a` -> `(a).operatorMinus__ptb(blockIdx, gridDim)`,
// `a++` -> `(a).operatorPlusPlus__ptb(blockIdx, gridDim, 0)`) or not (`a + b` ->
// `freeOperatorPlus__ptb(blockIdx, gridDim, a, b)`); a constructor's clone takes a ::ptb::VirtualBlock first
// (`W w(a)` -> `W w(::ptb::VirtualBlock{}, blockIdx, gridDim, a)`, `W w;` -> `W w(::ptb::VirtualBlock{},
// blockIdx, gridDim);`).
std::vector<CallEdit> callCloneEdits(const CloneCallSite &site, const clang::SourceManager &sm);

} // namespace ptb::rewrite

// The text of a function body in a twin or a clone: each call of a function that reads blockIdx/gridDim
// sent to its PTB clone (VirtualizedCall; the edits: CallCloneEdits.h) and, in a parking kernel's body and
// clones, each block barrier made a task barrier and the task left at each exit (TaskBarrierEdits.h).
// Internal to lib/Rewrite.
#pragma once

#include "CallCloneEdits.h"
#include "EditContext.h"
#include "TaskBarrierEdits.h"

#include <map>
#include <string>
#include <utility>

namespace ptb::rewrite {

using namespace clang;

class CallRedirects : SourceText {
public:
  explicit CallRedirects(EditContext &cx) : SourceText(cx), cx(cx) {}

  // The calls and barriers of a kernel made PTB, and of the functions cloned for it.
  void add(const Kernel &k);

  // A function body with calls redirected to PTB clones (edits only inside the body's own text).
  std::string bodyWithRedirects(const FunctionDecl *fd) const;

  // The text [b, e) with the calls written there sent to PTB clones (the edits of each call whose
  // identifying location is inside). At one offset: closing insertions first (inner calls first), then
  // opening ones (outer calls first), then the replacement of the text there.
  std::string textWithRedirects(SourceLocation b, SourceLocation e) const;

private:
  EditContext &cx;
  struct Redirect {
    SourceLocation at; // what identifies the call (VirtualizedCall::nameLoc)
    std::vector<CallEdit> edits;
  };
  std::map<unsigned, Redirect> redirects; // by the callee name's location (raw encoding)
  std::map<std::pair<unsigned, unsigned>, TaskBarrierEdit> taskBarrierEdits; // by (location, length)
};

} // namespace ptb::rewrite

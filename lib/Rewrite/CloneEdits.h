// The PTB clones of the device functions a twin calls that read blockIdx/gridDim (docs/generated-code.md):
// a free function's clone beside it (or before the kernel, when it is in a file not transformed), a
// member's in its class. Internal to lib/Rewrite.
#pragma once

#include "CopyEdits.h"

#include <set>

namespace ptb::rewrite {

using namespace clang;

class CloneEdits : CopyEdits {
public:
  using CopyEdits::CopyEdits;

  void cloneCallee(const FunctionDecl *fd, const Kernel &k);

private:
  // A member function, constructor or operator (docs/ptb-transform.md): its clone is a member of the same
  // class, defined after the original's definition, in the class or out of it; out of it, the clone is
  // also declared after the original's declaration in the class. A constructor's clone is a constructor
  // whose first parameter is a ::ptb::VirtualBlock. Member initializers are copied with their calls
  // sent to clones too.
  void cloneMember(const CXXMethodDecl *md);

  std::set<const FunctionDecl *> cloned;
};

} // namespace ptb::rewrite

// The name of the PTB clone of a device function (docs/ptb-transform.md).
#pragma once

#include "clang/AST/Decl.h"

#include <string>

namespace ptb {

// `f__ptb`; for an operator `operatorPlus__ptb` (a member) or `freeOperatorPlus__ptb` (not a member); a
// constructor's clone is a constructor (its name is the class's), told apart by its first parameter, a
// `::ptb::VirtualBlock`.
std::string ptbCloneName(const clang::FunctionDecl *fd);

} // namespace ptb

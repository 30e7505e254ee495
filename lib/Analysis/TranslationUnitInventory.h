// The entry point of lib/Analysis: the inventory of a parsed translation unit.
#pragma once

#include "FileSelection.h"
#include "KernelInventory.h"

#include "clang/AST/ASTContext.h"

namespace ptb {

// Builds the inventory of the main file of `ctx` and of the included files `selection` selects (none by
// default). Macro expansions are read through `ctx`'s SourceManager.
Inventory analyzeTranslationUnit(clang::ASTContext &ctx, const FileSelection &selection = FileSelection());

} // namespace ptb

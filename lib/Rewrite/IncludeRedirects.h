// The #include directives of the outputs: the files that must be written because they include one that
// changes, their #includes pointed at the transformed copies (OutputPaths.h), and quoted #includes of
// unchanged local files pointed at them from where the output goes (LocalIncludes.h). Internal to
// lib/Rewrite.
#pragma once

#include "EditContext.h"

#include <set>
#include <vector>

namespace ptb::rewrite {

using namespace clang;

class IncludeRedirects : SourceText {
public:
  explicit IncludeRedirects(EditContext &cx) : SourceText(cx), cx(cx) {}

  // The selected included files, in the order they were first entered.
  std::vector<FileID> includedInOrder();

  // Adds to `written` every file that includes one in it, and edits their #include directives to name the
  // transformed copies (not with -i, where every file keeps its name). False after an error.
  bool redirectIncludes(std::set<FileID> &written);

private:
  // Every entry of a file into the translation unit: the file and where it was included.
  struct Inclusion {
    FileID file;          // canonical
    FileID includer;      // canonical; invalid for the main file
    SourceLocation where; // the included file name in the includer (for a macro, the macro's end)
  };

  const std::vector<Inclusion> &inclusions();

  EditContext &cx;
  std::vector<Inclusion> inclusionList;
};

} // namespace ptb::rewrite

// The launches: each launch of a kernel made PTB (`<<<>>>`, cudaLaunchKernel) sent to its launcher or the
// runtime, and the launches that stay plain, reported. Internal to lib/Rewrite.
#pragma once

#include "EditContext.h"
#include "TwinsApartEdits.h"

#include <set>
#include <utility>

namespace ptb::rewrite {

using namespace clang;

class LaunchEdits : SourceText {
public:
  LaunchEdits(EditContext &cx, TwinsApartEdits &twinsApart) : SourceText(cx), cx(cx), twinsApart(twinsApart) {}

  // Sends a launch of `k` to its launcher (`<<<>>>`) or to the runtime (cudaLaunchKernel). False, with a
  // warning (an error with --strict), when it stays a plain launch of the original kernel.
  bool rewriteLaunch(const Kernel &k, const LaunchSite &s);

  // A launch, in a selected file, of a kernel defined in a file that is not selected: it stays a plain
  // launch of the original kernel, which the runtime does not confine.
  void reportUnselectedKernel(const LaunchSite &s);

private:
  // Spelling location of a token of a launch in the file being edited (`launchFile`), or invalid.
  SourceLocation mainSpelling(SourceLocation l) const;

  EditContext &cx;
  TwinsApartEdits &twinsApart;
  std::set<std::pair<unsigned, unsigned>> rewrittenLaunchText; // (file, offset) of launches already edited
  FileID launchFile;                                           // the file of the launch being rewritten
};

} // namespace ptb::rewrite

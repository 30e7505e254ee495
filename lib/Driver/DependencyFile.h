// A Make-style dependency file (what `cc -MD` writes): the outputs, then every file that was read to
// produce them, so that a build system (Ninja's and Make's depfile, CMake's DEPFILE) runs the tool again
// when the input or any header it includes changes.
#pragma once

#include <string>
#include <vector>

namespace ptb {

// `targets: inputs read` with Make's escapes (spaces, '#', '$'), one prerequisite per continued line: the
// inputs in their order, then the other files read in sorted order (the same text for the same build),
// each once, as absolute paths without `.`/`..`. Files that are not on disk (headers the front end serves
// from memory) are left out, since a build system would count a missing file as always changed.
std::string dependencyRule(const std::vector<std::string> &targets, const std::vector<std::string> &inputs,
                           const std::vector<std::string> &read);

} // namespace ptb

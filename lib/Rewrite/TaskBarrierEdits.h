// The text edits of a parking kernel's twin (docs/ptb-transform.md, "Parking"): each block barrier of the
// task body, or of a device function cloned for it, becomes the runtime's task barrier (`__syncthreads()`
// -> `::ptb::task_sync()`), and each thread leaves the task where it returns and at the body's end
// (`::ptb::task_exit()`). From the facts lib/Analysis found (TaskBarrierSite, TaskExit); applied to the
// copy of the body, never to the original.
#pragma once

#include "KernelInventory.h"

#include "clang/Basic/LangOptions.h"
#include "clang/Basic/SourceManager.h"

#include <string>
#include <vector>

namespace ptb::rewrite {

struct TaskBarrierEdit {
  clang::SourceLocation at; // a file location in the body's text
  unsigned length = 0;      // characters replaced (0: an insertion)
  std::string text;
};

// A barrier made a task barrier: its name replaced (`__syncthreads` -> `::ptb::task_sync`, `cg::sync` ->
// `::ptb::task_group_sync`), or `block.sync()` -> `::ptb::task_group_sync(block)`.
std::vector<TaskBarrierEdit> taskBarrierEdits(const TaskBarrierSite &barrier);

// The task left first: `return;` -> `{ ::ptb::task_exit(); return; }`, `return e;` (e of type void) ->
// `{ e; ::ptb::task_exit(); return; }`; at the body's end, on a line of its own before the closing brace,
// indented one step more (a brace that ends a line of code gets it on that line).
std::vector<TaskBarrierEdit> taskExitEdits(const TaskExit &exit, const clang::SourceManager &sm,
                                           const clang::LangOptions &lo);

// All of a parking kernel's: its barriers', the clones' included, and its exits'.
std::vector<TaskBarrierEdit> taskEdits(const Kernel &k, const clang::SourceManager &sm, const clang::LangOptions &lo);

} // namespace ptb::rewrite

#include "TaskBarrierEdits.h"

#include "clang/Lex/Lexer.h"

namespace ptb::rewrite {

using namespace clang;

namespace {

// The runtime's task barrier for a block barrier (Barrier::kind).
std::string taskBarrierName(const std::string &kind) {
  if (kind == "__syncthreads") return "::ptb::task_sync";
  if (kind == "__syncthreads_count") return "::ptb::task_sync_count";
  if (kind == "__syncthreads_and") return "::ptb::task_sync_and";
  if (kind == "__syncthreads_or") return "::ptb::task_sync_or";
  if (kind == "cg::thread_block::sync") return "::ptb::task_group_sync";
  return "::ptb::task_barrier_sync"; // __barrier_sync(0)
}

} // namespace

std::vector<TaskBarrierEdit> taskBarrierEdits(const TaskBarrierSite &b) {
  const std::string to = taskBarrierName(b.kind);
  switch (b.form) {
  case TaskBarrierSite::Form::Name: return {{b.at, b.length, to}};
  case TaskBarrierSite::Form::NameAndCall: return {{b.at, b.length, to + "()"}};
  case TaskBarrierSite::Form::Member:
    return {{b.at, 0, to + "(" + (b.arrow ? "*" : "")}, {b.memberOp, b.memberLength, ")"}};
  }
  return {};
}

std::vector<TaskBarrierEdit> taskExitEdits(const TaskExit &x, const SourceManager &sm, const LangOptions &lo) {
  switch (x.form) {
  case TaskExit::Form::Return:
    return {{x.at, Lexer::MeasureTokenLength(x.at, sm, lo), "{ ::ptb::task_exit(); return"}, {x.semicolon, 1, "; }"}};
  case TaskExit::Form::ReturnVoidValue:
    return {{x.at, Lexer::MeasureTokenLength(x.at, sm, lo), "{"}, {x.semicolon, 1, "; ::ptb::task_exit(); return; }"}};
  case TaskExit::Form::BodyEnd: {
    llvm::StringRef line = sm.getBufferData(sm.getFileID(x.at)).substr(0, sm.getFileOffset(x.at));
    llvm::StringRef indent = line.substr(line.rfind('\n') + 1);
    return {{x.at, 0,
             indent.trim(" \t").empty() ? "  ::ptb::task_exit();\n" + indent.str()
             : indent.ends_with(" ")    ? "::ptb::task_exit(); "
                                        : " ::ptb::task_exit(); "}};
  }
  }
  return {};
}

std::vector<TaskBarrierEdit> taskEdits(const Kernel &k, const SourceManager &sm, const LangOptions &lo) {
  std::vector<TaskBarrierEdit> out;
  for (const TaskBarrierSite &b : k.taskBarriers)
    for (TaskBarrierEdit &e : taskBarrierEdits(b)) out.push_back(std::move(e));
  for (const TaskExit &x : k.taskExits)
    for (TaskBarrierEdit &e : taskExitEdits(x, sm, lo)) out.push_back(std::move(e));
  return out;
}

} // namespace ptb::rewrite

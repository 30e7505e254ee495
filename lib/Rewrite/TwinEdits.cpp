#include "TwinEdits.h"

namespace ptb::rewrite {

void TwinEdits::emitTwin(const Kernel &k) {
  const FunctionDecl *fd = k.decl;
  std::string name = fd->getNameAsString();
  std::string tmpl = templateHeader(fd);
  std::string targs = templateArgsForward(fd);
  std::string params = paramList(fd, false);
  std::string args = argForward(fd);
  SourceLocation start = declStart(fd);
  SourceLocation end = afterBody(fd);
  const FunctionDecl *first = fd->getFirstDecl();
  bool priorInMain = first != fd && cx.selected.containsLoc(first->getLocation());
  FileID kf = sm.getFileID(end);
  // The generated heads map to where the kernel's declaration starts (its template header, if any).
  unsigned kernelLine = lineOf(start);

  std::string t;
  t += "\n// PTB twin of " + k.qualifiedName + " (ptb-transform; docs/generated-code.md).\n";
  if (k.parks())
    t += "// Threads that return before a barrier park until the task ends: its barriers are task barriers\n"
         "// (TaskSync::parked; docs/ptb-transform.md, \"Parking\").\n";
  const bool apart = twinsApart.twinApart(k);
  if (apart) {
    t += "#ifdef PTB_TWINS_PART\n";
    ++twinsApart.twinsApartCount;
  }
  t += lineDirective(kf, kernelLine);
  t += (tmpl.empty() ? "" : tmpl + "\n") + "static __device__ __forceinline__ void " + name + "__ptb_task(" +
       joinNonEmpty("const uint3 blockIdx, const dim3 gridDim", params) + ")\n";
  t += copiedBody(fd, kf) + "\n";
  t += lineDirective(kf, kernelLine);
  t += cx.headBeforeUnqualifiedName(fd) + name + "__ptb(" +
       joinNonEmpty(paramList(fd, false, true), "const ::ptb::Launch ptb_launch") + ")" + headAfterParams(fd) + "{\n";
  // Tasks whose threads never meet (docs/generated-code.md) need no barrier between them.
  t += std::string("  ::ptb::run_tasks") +
       (k.parks()            ? "<::ptb::TaskSync::parked>"
        : k.tasksIndependent ? "<::ptb::TaskSync::none>"
                             : "") +
       "(ptb_launch, [&](const uint3 ptb_block, const dim3 ptb_grid) {\n";
  t += "    " + name + "__ptb_task" + targs + "(" + joinNonEmpty("ptb_block, ptb_grid", args) + ");\n";
  t += "  });\n}\n";
  const std::string launchedBy = twinsApart.apartLaunch(fd);
  if (!launchedBy.empty()) // the program's compile declares the launch functions; the twins part defines them
    t += "#endif\n" + lineDirective(kf, kernelLine) +
         (twinsApart.templateApart.count(fd) ? twinsApart.launchStruct(fd)
          : fd->isInAnonymousNamespace()     ? ""
                                             : twinsApart.staticLaunchFunctions(fd));
  else if (apart) // the program's compile declares the twin; the twins part defines it
    t += "#else\n" + lineDirective(kf, kernelLine) + cx.headBeforeUnqualifiedName(fd) + name + "__ptb(" +
         joinNonEmpty(paramList(fd, false, true), "const ::ptb::Launch ptb_launch") + ");\n#endif\n";
  t += (tmpl.empty() ? "" : tmpl + "\n") + "static inline void " + name + "__ptb_launch(" +
       joinNonEmpty("const ::ptb::LaunchConfig& ptb_config", paramList(fd, !priorInMain)) + ") {\n";
  if (!launchedBy.empty())
    t += "  ::ptb::launch_apart(" + joinNonEmpty("ptb_config, " + name + targs + ", " + launchedBy, args) + ");\n}\n";
  else
    t += "  ::ptb::launch(" + joinNonEmpty("ptb_config, " + name + targs + ", " + name + "__ptb" + targs, args) +
         ");\n}\n";
  const EditContext::NamespaceWrap wrap = cx.namespaceWrap(fd);
  insertAt(kf, end, wrap.open + t + wrap.close);

  // Launches may come before the definition: declare the launcher after the first declaration.
  if (priorInMain)
    declareAfter(first, fd,
                 "static inline void " + name + "__ptb_launch(" +
                     joinNonEmpty("const ::ptb::LaunchConfig& ptb_config", paramList(fd, true)) + ");");
}

} // namespace ptb::rewrite

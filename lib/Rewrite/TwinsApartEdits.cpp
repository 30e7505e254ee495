#include "TwinsApartEdits.h"

#include "Diagnostics.h"

#include "clang/Lex/Lexer.h"
#include "llvm/Support/Path.h"

namespace ptb::rewrite {

void TwinsApartEdits::planApart(ASTContext &ctx, bool remark) {
  plan = planTwinsApart(ctx);
  if (!plan.keptBecause.empty()) {
    if (remark)
      report(cx.diags, plan.keptAt, DiagnosticsEngine::Remark,
             "the twins stay in the program's module (no twins apart): " + plan.keptBecause);
    return;
  }
  for (const TwinsApartPlan::Guard &g : plan.guards) {
    const std::string keepIf = keepCondition(g.hostPassOnly);
    const auto *fd = dyn_cast<FunctionDecl>(g.decl);
    if (g.bodyOnly) { // the declaration stays: `;` for the body
      guardMain(sm.getExpansionLoc(fd->getBody()->getBeginLoc()),
                afterToken(sm.getExpansionLoc(fd->getBody()->getEndLoc())), keepIf, ";");
    } else {
      SourceLocation e = endOfDeclaration(g.decl);
      if (e.isInvalid()) continue;
      guardMain(sm.getExpansionLoc(g.decl->getBeginLoc()), e, keepIf, "");
    }
    if (fd) guarded[fd] = g;
  }
  for (const auto &group : plan.madeExtern) {
    SourceLocation b = sm.getExpansionLoc(group.front()->getBeginLoc()), e = endOfDeclaration(group.back());
    if (e.isInvalid()) continue;
    std::string externs;
    for (const VarDecl *v : group) externs += externDeclaration(v, ctx) + "\n";
    cx.addEdit(mainFile, offsetOf(b), 0,
               newLineAt(b) + "#ifdef PTB_TWINS_PART\n" + externs + "#else\n" + lineDirective(mainFile, lineOf(b)));
    cx.addEdit(mainFile, offsetOf(e), 0, "\n#endif\n" + lineDirective(mainFile, lineOf(e)), true);
  }
}

void TwinsApartEdits::guardMain(SourceLocation b, SourceLocation e, const std::string &keepIf,
                                const std::string &otherwise) {
  cx.addEdit(mainFile, offsetOf(b), 0, newLineAt(b) + "#if " + keepIf + "\n" + lineDirective(mainFile, lineOf(b)));
  cx.addEdit(mainFile, offsetOf(e), 0, guardEnd(otherwise) + lineDirective(mainFile, lineOf(e)), /*first=*/true);
}

std::string TwinsApartEdits::guardEnd(const std::string &otherwise) {
  return "\n" + (otherwise.empty() ? "" : "#else\n" + otherwise + "\n") + "#endif\n";
}

SourceLocation TwinsApartEdits::endOfDeclaration(const Decl *d) const {
  if (const auto *fd = dyn_cast<FunctionDecl>(d); fd && fd->getBody())
    return afterToken(sm.getExpansionLoc(fd->getBody()->getEndLoc()));
  auto semi = Lexer::findNextToken(sm.getExpansionLoc(d->getEndLoc()), sm, lo);
  if (!semi || !semi->is(tok::semi)) return {};
  return semi->getEndLoc();
}

void TwinsApartEdits::planLaunchedApart(const Kernel &k) {
  if (!sm.isInMainFile(sm.getExpansionLoc(k.decl->getLocation()))) return;
  auto keep = [&](const std::string &why) {
    report(cx.diags, k.decl->getLocation(), DiagnosticsEngine::Remark,
           "the twin of kernel '" + k.qualifiedName + "' stays in the program's module: " + why);
  };
  if (k.decl->isInAnonymousNamespace()) {
    const NamespaceDecl *ns = nullptr;
    if (std::string why = anonymousTwinKeptBecause(k.decl, ns); !why.empty()) return keep(why);
    staticApart[k.decl] = uniqueSuffix(cx.inv.mainFile, k.qualifiedName);
    declareBeforeAnonymousNamespace(k.decl, ns);
    return;
  }
  if (k.decl->getStorageClass() == SC_Static && !k.decl->getDescribedFunctionTemplate()) {
    if (std::string why = staticTwinKeptBecause(k.decl); !why.empty()) return keep(why);
    staticApart[k.decl] = uniqueSuffix(cx.inv.mainFile, k.qualifiedName);
    return;
  }
  if (!k.decl->getDescribedFunctionTemplate()) {
    if (!guarded.count(k.decl)) keep("the kernel is inline (its definition is one the twins part would repeat)");
    return;
  }
  TemplateTwinPlan t = planTemplateTwin(k.decl, cx.astContext);
  if (!t.keptBecause.empty()) return keep(t.keptBecause);
  templateApart[k.decl] = std::move(t);
  templateApartOrder.push_back(k.decl);
}

bool TwinsApartEdits::twinApart(const Kernel &k) const {
  return guarded.count(k.decl) != 0 || templateApart.count(k.decl) != 0 || staticApart.count(k.decl) != 0;
}

std::string TwinsApartEdits::apartLaunch(const FunctionDecl *fd) const {
  if (templateApart.count(fd)) return fd->getNameAsString() + "__ptb_twin" + templateArgsForward(fd) + "::launch";
  if (auto it = staticApart.find(fd); it != staticApart.end())
    return fd->getNameAsString() + "__ptb_apart_" + it->second;
  return "";
}

std::string TwinsApartEdits::keepCondition(bool hostPassOnly) {
  return hostPassOnly ? "!defined(PTB_TWINS_PART) || defined(__CUDA_ARCH__)" : "!defined(PTB_TWINS_PART)";
}

std::string TwinsApartEdits::guardedClone(const FunctionDecl *original, const std::string &text, bool whole) const {
  auto it = guarded.find(original);
  if (it == guarded.end()) return text;
  return "#if " + keepCondition(it->second.hostPassOnly) + "\n" + text + guardEnd(whole ? "" : ";");
}

FileOutput TwinsApartEdits::twinsPart(const FileOutput &main) const {
  FileOutput fo;
  fo.isTwinsPart = true;
  fo.source = main.source;
  fo.destination = twinsPartPath(main.destination);
  fo.twinsApart = twinsApartCount;
  fo.twinsKeptBecause = plan.keptBecause;
  std::string mainName = llvm::sys::path::filename(main.destination).str();
  fo.output = std::string(kGeneratedMarker) + " " + cx.opts.toolVersion + " from " +
              llvm::sys::path::filename(main.source).str() +
              ": its twins part (docs/generated-code.md, \"Twins "
              "apart\").\n// Compile it and link it with " +
              mainName + ": the twins that " + mainName +
              " declares are defined here, in a module of their own\n// that loads only when one of them first runs.\n";
  if (!plan.keptBecause.empty() || twinsApartCount == 0) {
    fo.output += "// No twins apart: " +
                 (plan.keptBecause.empty() ? std::string("no kernel of this file has a twin that can go apart")
                                           : plan.keptBecause) +
                 ". This file is empty.\n";
    return fo;
  }
  fo.output += std::string(kTwinsPartDefine) +
               "\n"
               "// What the program's compile uses and this one does not: static functions, static variables.\n"
               "#pragma nv_diag_suppress 177\n"
               "#pragma GCC diagnostic ignored \"-Wunused-function\"\n"
               "#pragma GCC diagnostic ignored \"-Wunused-variable\"\n"
               "#include \"" +
               mainName + "\"\n";
  std::string instantiations;
  for (const FunctionDecl *kernel : templateApartOrder)
    for (const std::string &args : templateApart.at(kernel).argumentLists)
      instantiations += "template struct " + templateApart.at(kernel).scope + kernel->getNameAsString() +
                        "__ptb_twin<" + args + ">;\n";
  if (!instantiations.empty())
    fo.output +=
        "// The twins of this file's template kernels, for each template argument list they were instantiated with.\n" +
        instantiations;
  return fo;
}

std::string TwinsApartEdits::launchStruct(const FunctionDecl *fd) const {
  const std::string name = fd->getNameAsString(), twin = name + "__ptb" + templateArgsForward(fd);
  const std::string launch =
      "static void launch(" +
      joinNonEmpty("const ::ptb::LaunchConfig& ptb_config, const void* ptb_original", paramList(fd, false)) + ")";
  const std::string launchArgs =
      "static cudaError_t launch_args(const void* ptb_original, dim3 ptb_grid, dim3 ptb_block, "
      "void** ptb_args, size_t ptb_shmem, cudaStream_t ptb_stream)";
  return templateHeader(fd) + "\nstruct " + name + "__ptb_twin {\n#ifdef PTB_TWINS_PART\n  " + launch + " {\n" +
         "    ::ptb::launch_twin(" + joinNonEmpty("ptb_config, ptb_original, " + twin, argForward(fd)) + ");\n  }\n  " +
         launchArgs + " {\n    return ::ptb::launch_kernel_args_twin(ptb_original, " + twin +
         ", ptb_grid, ptb_block, ptb_args, ptb_shmem, ptb_stream);\n  }\n#else\n  " + launch + ";\n  " + launchArgs +
         ";\n#endif\n};\n";
}

std::vector<TwinsApartEdits::LaunchFunction> TwinsApartEdits::launchFunctions(const FunctionDecl *fd,
                                                                              const std::string &params) const {
  const std::string name = fd->getNameAsString(), unique = staticApart.at(fd);
  return {
      {"void " + name + "__ptb_apart_" + unique + "(" +
           joinNonEmpty("const ::ptb::LaunchConfig& ptb_config, const void* ptb_original", params) + ")",
       "  ::ptb::launch_twin(" + joinNonEmpty("ptb_config, ptb_original, " + name + "__ptb", argForward(fd)) + ");\n"},
      {"cudaError_t " + name + "__ptb_apart_args_" + unique +
           "(const void* ptb_original, dim3 ptb_grid, "
           "dim3 ptb_block, void** ptb_args, size_t ptb_shmem, cudaStream_t ptb_stream)",
       "  return ::ptb::launch_kernel_args_twin(ptb_original, " + name +
           "__ptb, ptb_grid, ptb_block, ptb_args, ptb_shmem, ptb_stream);\n"}};
}

std::string TwinsApartEdits::staticLaunchFunctions(const FunctionDecl *fd) const {
  std::string text =
      "// The twin is static: these launch it, with names unique to this file, and the twins part defines them.\n";
  for (const LaunchFunction &f : launchFunctions(fd, paramList(fd, false)))
    text += f.head + "\n#ifdef PTB_TWINS_PART\n{\n" + f.body + "}\n#else\n;\n#endif\n";
  return text;
}

void TwinsApartEdits::declareBeforeAnonymousNamespace(const FunctionDecl *fd, const NamespaceDecl *ns) {
  std::string declarations, definitions;
  for (const LaunchFunction &f : launchFunctions(fd, qualifiedParameters(fd, cx.astContext))) {
    declarations += f.head + ";\n";
    definitions += f.head + " {\n" + f.body + "}\n";
  }
  const std::string what = fd->getNameAsString() + " (ptb-transform; docs/generated-code.md, \"Twins apart\")";
  SourceLocation open = sm.getExpansionLoc(ns->getBeginLoc()),
                 close = afterToken(sm.getExpansionLoc(ns->getRBraceLoc()));
  cx.addEdit(mainFile, offsetOf(open), 0,
             newLineAt(open) + "// Launch functions of the twin of " + what + ":\n" + declarations +
                 lineDirective(mainFile, lineOf(open)));
  cx.addEdit(mainFile, offsetOf(close), 0,
             "\n#ifdef PTB_TWINS_PART\n// Launch functions of the twin of " + what + ":\n" + definitions + "#endif\n" +
                 lineDirective(mainFile, lineOf(close)));
}

} // namespace ptb::rewrite

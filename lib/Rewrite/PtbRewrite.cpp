#include "PtbRewrite.h"

#include "Diagnostics.h"
#include "FileSelection.h"
#include "LocalIncludes.h"
#include "PtbCloneName.h"
#include "SourceText.h"
#include "TwinsApart.h"

#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"

#include <algorithm>
#include <map>

using namespace clang;

namespace ptb {

bool isTransformedOutput(llvm::StringRef text) { return text.starts_with(kGeneratedMarker); }

std::string mainOutputPath(const OutputLayout &layout, llvm::StringRef mainInput) {
  switch (layout.mode) {
  case OutputLayout::Mode::Stdout: return "";
  case OutputLayout::Mode::File: return layout.path == "-" ? "" : layout.path;
  case OutputLayout::Mode::Directory: return layout.path + "/" + llvm::sys::path::filename(mainInput).str();
  case OutputLayout::Mode::InPlace: return mainInput.str();
  }
  return "";
}

std::string includedOutputPath(const OutputLayout &layout, llvm::StringRef mainInput, llvm::StringRef included) {
  if (layout.mode == OutputLayout::Mode::InPlace) return included.str();
  std::string mainOut = mainOutputPath(layout, mainInput);
  if (mainOut.empty()) return "";
  std::string rel = relativePath(llvm::sys::path::parent_path(absolutePath(mainInput)), included);
  llvm::SmallString<256> renamed(llvm::sys::path::parent_path(rel));
  llvm::sys::path::append(renamed, llvm::sys::path::stem(rel) + ".ptb" + llvm::sys::path::extension(rel));
  llvm::SmallString<256> out(layout.mode == OutputLayout::Mode::Directory
                                 ? llvm::StringRef(layout.path)
                                 : llvm::sys::path::parent_path(mainOut));
  llvm::sys::path::append(out, renamed);
  llvm::sys::path::remove_dots(out, /*remove_dot_dot=*/true);
  return std::string(out);
}

namespace {

struct Edit {
  FileID file;
  unsigned offset, length;
  std::string text;
  unsigned order;  // insertion order, to keep edits at one offset stable
};

class PtbRewriter : SourceText {
public:
  PtbRewriter(CompilerInstance &ci, ASTContext &ctx, const Inventory &inv, const RewriteOptions &opts,
              const FileSelection &selection)
      : SourceText(ctx.getSourceManager(), ctx.getLangOpts(), inv.mainFile), astContext(ctx), diags(ci.getDiagnostics()), inv(inv),
        opts(opts), selected(sm, selection) {}

  bool run(RewriteResult &result) {
    llvm::StringRef buffer = sm.getBufferData(mainFile);
    result.file = inv.mainFile;
    // An output given again, or included: its twins would get twins. Reported at the file that is one.
    std::set<FileID> outputs;
    if (isTransformedOutput(buffer)) outputs.insert(mainFile);
    for (FileID f : includedInOrder())
      if (isTransformedOutput(sm.getBufferData(f))) outputs.insert(f);
    for (const Kernel &k : inv.kernels)
      if (llvm::StringRef(k.name).ends_with("__ptb")) outputs.insert(canon(sm.getFileID(declStart(k.decl))));
    for (FileID f : outputs)
      report(diags, sm.getLocForStartOfFile(f), DiagnosticsEngine::Error,
             f == mainFile ? "this file was already transformed by ptb-transform; transform the original source instead"
                           : "this included file is an output of ptb-transform; include the original source instead");
    if (!outputs.empty()) return false;
    llvm::Regex filter("^(" + opts.kernelFilter + ")$");
    std::string regexError;
    if (!opts.kernelFilter.empty() && !filter.isValid(regexError)) {
      report(diags, SourceLocation(), DiagnosticsEngine::Error, "invalid --kernels regex: " + regexError);
      return false;
    }

    // Which kernels become PTB.
    std::vector<const Kernel *> chosen;
    for (const Kernel &k : inv.kernels) {
      if (!opts.kernelFilter.empty() && !filter.match(k.name) && !filter.match(k.qualifiedName)) continue;
      std::string why;
      SourceLocation where = k.decl->getLocation();
      if (!k.blockers.empty()) {
        why = k.blockers.front().construct + ": " + k.blockers.front().detail;
        if (k.blockers.front().sloc.isValid()) where = k.blockers.front().sloc;
      } else {
        why = structuralProblem(k);
      }
      if (!why.empty()) {
        report(diags, where, opts.strict ? DiagnosticsEngine::Error : DiagnosticsEngine::Warning,
               "kernel '" + k.qualifiedName + "' is left as it is (no PTB twin): " + why);
        if (where != k.decl->getLocation())
          report(diags, k.decl->getLocation(), DiagnosticsEngine::Note, "kernel '" + k.qualifiedName + "' is defined here");
        result.skippedKernels.push_back(k.qualifiedName);
        continue;
      }
      chosen.push_back(&k);
    }

    for (const Kernel *k : chosen) {
      for (const VirtualizedCall &c : k->virtualizedCalls) redirects[c.nameLoc.getRawEncoding()] = c;
      for (const TaskBarrierEdit &e : k->taskBarrierEdits) taskBarrierEdits[{e.at.getRawEncoding(), e.length}] = e;
    }
    if (opts.twinsApart) {
      planApart(astContext, /*remark=*/!chosen.empty() && !opts.quiet);
      if (plan.keptBecause.empty())
        for (const Kernel *k : chosen) planLaunchedApart(*k);
    }
    for (const Kernel *k : chosen) {
      for (const FunctionDecl *callee : k->virtualizedCallees) cloneCallee(callee, *k);
      emitTwin(*k);
      result.transformedKernels.push_back(k->qualifiedName);
    }
    for (const Kernel *k : chosen)
      for (const LaunchSite &s : k->launches)
        if (rewriteLaunch(*k, s)) {
          ++result.rewrittenLaunches;
          ++stats[canon(sm.getFileID(sm.getSpellingLoc(s.expr->getBeginLoc())))].launches;
        }
    for (const LaunchSite &s : inv.otherLaunches) reportUnselectedKernel(s);
    for (const Kernel &k : inv.kernels) {
      auto &st = stats[canon(sm.getFileID(declStart(k.decl)))];
      bool made = std::find(chosen.begin(), chosen.end(), &k) != chosen.end();
      (made ? st.transformed : st.skipped).push_back(k.qualifiedName);
    }

    if (diags.hasErrorOccurred()) return false;

    // The files to write: the main file, every selected file with an edit, and (unless in place) every
    // file that includes one of those, whose #include must point at the copy.
    std::set<FileID> written{mainFile};
    for (const Edit &e : edits) written.insert(e.file);
    if (!redirectIncludes(written)) return false;

    std::vector<FileID> order{mainFile};
    for (FileID f : includedInOrder()) if (written.count(f) && f != mainFile) order.push_back(f);
    for (FileID f : includedInOrder())
      if (!written.count(f)) result.unchangedIncludedFiles.push_back(nameOf(f));

    std::stable_sort(edits.begin(), edits.end(), [](const Edit &a, const Edit &b) {
      return a.offset != b.offset ? a.offset < b.offset : a.order < b.order;
    });
    for (FileID f : order) {
      FileOutput fo;
      fo.isMain = f == mainFile;
      fo.source = fo.isMain ? inv.mainFile : nameOf(f);
      fo.destination = destinationOf(f);
      fo.transformedKernels = stats[f].transformed;
      fo.skippedKernels = stats[f].skipped;
      fo.rewrittenLaunches = stats[f].launches;
      fo.clonedFunctions = stats[f].clones;
      fo.redirectedIncludes = stats[f].includes;
      fo.relocatedIncludes = stats[f].localIncludes;
      if (!assemble(f, fo)) return false;
      if (fo.isMain) {
        result.output = fo.output;
        result.replacements = fo.replacements;
      }
      result.files.push_back(std::move(fo));
    }
    if (opts.twinsApart) result.files.insert(result.files.begin() + 1, twinsPart(result.files.front()));
    return true;
  }

  // ---------------------------------------------------------------------------------------------------
  // Twins apart (TwinsApart.h).

  // Plans the twins part and adds the guards that leave the plan's definitions out of it.
  // `remark`: say why when the twins stay (only where there are twins: without, nothing is lost).
  void planApart(ASTContext &ctx, bool remark) {
    plan = planTwinsApart(ctx);
    if (!plan.keptBecause.empty()) {
      if (remark)
        report(diags, plan.keptAt, DiagnosticsEngine::Remark,
               "the twins stay in the program's module (no twins apart): " + plan.keptBecause);
      return;
    }
    for (const TwinsApartPlan::Guard &g : plan.guards) {
      const std::string keepIf = keepCondition(g.hostPassOnly);
      const auto *fd = dyn_cast<FunctionDecl>(g.decl);
      if (g.bodyOnly) {  // the declaration stays: `;` for the body
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
      addEdit(mainFile, offsetOf(b), 0,
              newLineAt(b) + "#ifdef PTB_TWINS_PART\n" + externs + "#else\n" + lineDirective(mainFile, lineOf(b)));
      addEdit(mainFile, offsetOf(e), 0, "\n#endif\n" + lineDirective(mainFile, lineOf(e)), true);
    }
  }

  // Wraps the main file's text [b, e) in `#if keepIf`, with `otherwise` (when not empty) as the #else branch;
  // #line directives keep the original numbering after each directive. The closing edit comes before any
  // other edit at `e` (a twin or a clone inserted after a guarded definition is not inside its guard).
  void guardMain(SourceLocation b, SourceLocation e, const std::string &keepIf, const std::string &otherwise) {
    addEdit(mainFile, offsetOf(b), 0, newLineAt(b) + "#if " + keepIf + "\n" + lineDirective(mainFile, lineOf(b)));
    addEdit(mainFile, offsetOf(e), 0, guardEnd(otherwise) + lineDirective(mainFile, lineOf(e)), /*first=*/true);
  }

  // The end of a guard, after the guarded text: its #else branch when `otherwise` is not empty, its #endif.
  static std::string guardEnd(const std::string &otherwise) {
    return "\n" + (otherwise.empty() ? "" : "#else\n" + otherwise + "\n") + "#endif\n";
  }

  // What starts a directive at `l`: nothing at the start of a line, else a line break.
  std::string newLineAt(SourceLocation l) const { return sm.getSpellingColumnNumber(l) == 1 ? "" : "\n"; }

  // Just after a declaration's text: its body's '}', or the ';' that ends it. Invalid if not found.
  SourceLocation endOfDeclaration(const Decl *d) const {
    if (const auto *fd = dyn_cast<FunctionDecl>(d); fd && fd->getBody())
      return afterToken(sm.getExpansionLoc(fd->getBody()->getEndLoc()));
    auto semi = Lexer::findNextToken(sm.getExpansionLoc(d->getEndLoc()), sm, lo);
    if (!semi || !semi->is(tok::semi)) return {};
    return semi->getEndLoc();
  }

  // A template, `static` or anonymous-namespace kernel of the main file whose twin can go apart, through
  // its launch struct or launch functions (TwinsApart.h); a remark at the kernel where it cannot.
  void planLaunchedApart(const Kernel &k) {
    if (!sm.isInMainFile(sm.getExpansionLoc(k.decl->getLocation()))) return;
    auto keep = [&](const std::string &why) {
      report(diags, k.decl->getLocation(), DiagnosticsEngine::Remark,
             "the twin of kernel '" + k.qualifiedName + "' stays in the program's module: " + why);
    };
    if (k.decl->isInAnonymousNamespace()) {
      const NamespaceDecl *ns = nullptr;
      if (std::string why = anonymousTwinKeptBecause(k.decl, ns); !why.empty()) return keep(why);
      staticApart[k.decl] = uniqueSuffix(inv.mainFile, k.qualifiedName);
      declareBeforeAnonymousNamespace(k.decl, ns);
      return;
    }
    if (k.decl->getStorageClass() == SC_Static && !k.decl->getDescribedFunctionTemplate()) {
      if (std::string why = staticTwinKeptBecause(k.decl); !why.empty()) return keep(why);
      staticApart[k.decl] = uniqueSuffix(inv.mainFile, k.qualifiedName);
      return;
    }
    if (!k.decl->getDescribedFunctionTemplate()) {
      if (!guarded.count(k.decl)) keep("the kernel is inline (its definition is one the twins part would repeat)");
      return;
    }
    TemplateTwinPlan t = planTemplateTwin(k.decl, astContext);
    if (!t.keptBecause.empty()) return keep(t.keptBecause);
    templateApart[k.decl] = std::move(t);
    templateApartOrder.push_back(k.decl);
  }

  // Whether a kernel's twin goes to the twins part: its original is left out of it (a kernel with
  // external linkage, not a template, in the main file), or it is reached through launch functions that
  // the twins part defines (a template, `static` or anonymous-namespace kernel).
  bool twinApart(const Kernel &k) const {
    return guarded.count(k.decl) != 0 || templateApart.count(k.decl) != 0 || staticApart.count(k.decl) != 0;
  }

  // What a launch calls instead of the twin when the twin is reached through launch functions (twins
  // apart, a template, `static` or anonymous-namespace kernel): the launch_apart form's function; "" otherwise.
  std::string apartLaunch(const FunctionDecl *fd) const {
    if (templateApart.count(fd)) return fd->getNameAsString() + "__ptb_twin" + templateArgsForward(fd) + "::launch";
    if (auto it = staticApart.find(fd); it != staticApart.end()) return fd->getNameAsString() + "__ptb_apart_" + it->second;
    return "";
  }

  // The condition under which a guarded definition is compiled: in the program's compile, and, for
  // device code, in the twins part's device pass.
  static std::string keepCondition(bool hostPassOnly) {
    return hostPassOnly ? "!defined(PTB_TWINS_PART) || defined(__CUDA_ARCH__)" : "!defined(PTB_TWINS_PART)";
  }

  // A PTB clone of a guarded device function is guarded as its original is: `body` is the clone's body
  // (a free function's) or its whole definition (a member's, out of the class).
  std::string guardedClone(const FunctionDecl *original, const std::string &text, bool whole) const {
    auto it = guarded.find(original);
    if (it == guarded.end()) return text;
    return "#if " + keepCondition(it->second.hostPassOnly) + "\n" + text + guardEnd(whole ? "" : ";");
  }

  // The twins part: the main output again, with PTB_TWINS_PART defined. Empty (with the reason) when the
  // twins stay in the main output's module.
  FileOutput twinsPart(const FileOutput &main) const {
    FileOutput fo;
    fo.isTwinsPart = true;
    fo.source = main.source;
    fo.destination = twinsPartPath(main.destination);
    fo.twinsApart = twinsApartCount;
    fo.twinsKeptBecause = plan.keptBecause;
    std::string mainName = llvm::sys::path::filename(main.destination).str();
    fo.output = std::string(kGeneratedMarker) + " " + opts.toolVersion + " from " +
                llvm::sys::path::filename(main.source).str() + ": its twins part (docs/generated-code.md, \"Twins "
                "apart\").\n// Compile it and link it with " + mainName + ": the twins that " + mainName +
                " declares are defined here, in a module of their own\n// that loads only when one of them first runs.\n";
    if (!plan.keptBecause.empty() || twinsApartCount == 0) {
      fo.output += "// No twins apart: " +
                   (plan.keptBecause.empty() ? std::string("no kernel of this file has a twin that can go apart")
                                             : plan.keptBecause) + ". This file is empty.\n";
      return fo;
    }
    fo.output += std::string(kTwinsPartDefine) + "\n"
                 "// What the program's compile uses and this one does not: static functions, static variables.\n"
                 "#pragma nv_diag_suppress 177\n"
                 "#pragma GCC diagnostic ignored \"-Wunused-function\"\n"
                 "#pragma GCC diagnostic ignored \"-Wunused-variable\"\n"
                 "#include \"" + mainName + "\"\n";
    std::string instantiations;
    for (const FunctionDecl *kernel : templateApartOrder)
      for (const std::string &args : templateApart.at(kernel).argumentLists)
        instantiations += "template struct " + templateApart.at(kernel).scope + kernel->getNameAsString() + "__ptb_twin<" + args + ">;\n";
    if (!instantiations.empty())
      fo.output += "// The twins of this file's template kernels, for each template argument list they were instantiated with.\n" +
                   instantiations;
    return fo;
  }

  // The whole text of `f` with its edits and, first, the header: the marker, the runtime include, and
  // the mapping back to the original file.
  bool assemble(FileID f, FileOutput &fo) {
    llvm::StringRef buffer = sm.getBufferData(f);
    std::string head = std::string(kGeneratedMarker) + " " + opts.toolVersion + " from " +
                       llvm::sys::path::filename(fo.source).str() +
                       "; edit the original, not this file (docs/generated-code.md).\n" +
                       // Twins apart: the runtime's own kernel goes with the twins (TwinsApart.h).
                       (f == mainFile && twinsApartCount
                            ? "#ifndef PTB_TWINS_PART\n#define PTB_DISCOVERY_ELSEWHERE\n#endif\n"
                            : "") +
                       "#include \"" + opts.runtimeInclude + "\"\n" + lineDirective(f, 1);
    std::vector<const Edit *> mine;
    // A UTF-8 byte-order mark can only be first: the header replaces it (nvcc rejects one anywhere else).
    unsigned bom = buffer.starts_with("\xEF\xBB\xBF") ? 3 : 0;
    Edit headEdit{f, 0, bom, head, 0};
    mine.push_back(&headEdit);
    for (const Edit &e : edits) if (e.file == f) mine.push_back(&e);
    std::string out;
    unsigned at = 0;
    for (const Edit *e : mine) {
      if (e->offset < at) {
        report(diags, sm.getComposedLoc(f, e->offset), DiagnosticsEngine::Error,
               "internal error: overlapping edits; please report this input");
        return false;
      }
      out += buffer.substr(at, e->offset - at).str();
      out += e->text;
      at = e->offset + e->length;
      auto err = fo.replacements.add(tooling::Replacement(fo.source, e->offset, e->length, e->text));
      if (err) llvm::consumeError(std::move(err));
    }
    out += buffer.substr(at).str();
    fo.output = std::move(out);
    return true;
  }

  // ---------------------------------------------------------------------------------------------------
  // Files: the main file and the selected included files.

  // One FileID per file: a file entered twice (no include guard) has one FileID per entry, with the same
  // offsets; edits are kept on the first.
  FileID canon(FileID f) const {
    if (f == mainFile || f.isInvalid()) return f;
    auto fe = sm.getFileEntryRefForID(f);
    if (!fe) return f;
    FileID first = sm.translateFile(&fe->getFileEntry());
    return first.isValid() ? first : f;
  }

  std::string nameOf(FileID f) const {
    if (f == mainFile) return inv.mainFile;
    auto fe = sm.getFileEntryRefForID(f);
    return fe ? fe->getName().str() : "";
  }

  std::string destinationOf(FileID f) const {
    if (f == mainFile) return mainOutputPath(opts.layout, inv.mainFile);
    return includedOutputPath(opts.layout, inv.mainFile, nameOf(f));
  }

  // Every entry of a file into the translation unit: the file and where it was included.
  struct Inclusion {
    FileID file;           // canonical
    FileID includer;       // canonical; invalid for the main file
    SourceLocation where;  // the included file name in the includer (for a macro, the macro's end)
  };
  const std::vector<Inclusion> &inclusions() {
    if (!inclusionList.empty()) return inclusionList;
    for (unsigned i = 0, n = sm.local_sloc_entry_size(); i < n; ++i) {
      const SrcMgr::SLocEntry &e = sm.getLocalSLocEntry(i);
      if (!e.isFile()) continue;
      FileID fid = sm.getFileID(SourceLocation::getFromRawEncoding(e.getOffset()));
      if (fid.isInvalid() || fid == mainFile) continue;
      SourceLocation where = e.getFile().getIncludeLoc();
      FileID includer = where.isValid() ? canon(sm.getFileID(sm.getExpansionLoc(where))) : FileID();
      inclusionList.push_back({canon(fid), includer, where.isValid() ? sm.getExpansionLoc(where) : where});
    }
    // Directives the parse did not enter: a header skipped by #pragma once or its include guard (two
    // headers that include each other) is still opened by nvcc through that directive, so it must name
    // the transformed copy too. Found in the text, as LocalIncludes finds them: quoted names beside the
    // includer, of selected files of this translation unit.
    std::set<std::pair<FileID, unsigned>> entered;
    for (const Inclusion &inc : inclusionList)
      if (inc.includer.isValid() && inc.where.isValid()) entered.insert({inc.includer, offsetOf(inc.where)});
    std::vector<FileID> files{mainFile};
    for (const Inclusion &inc : inclusionList)
      if (selected.contains(inc.file) && llvm::find(files, inc.file) == files.end()) files.push_back(inc.file);
    std::vector<Inclusion> skipped;
    for (FileID f : files)
      for (const LocalInclude &li : localIncludes(sm.getBufferData(f), nameOf(f))) {
        if (entered.count({f, li.offset})) continue;
        auto fe = sm.getFileManager().getOptionalFileRef(li.target);
        FileID target = fe ? canon(sm.translateFile(*fe)) : FileID();
        if (target.isInvalid() || target == mainFile || !selected.contains(target)) continue;
        skipped.push_back({target, f, sm.getLocForStartOfFile(f).getLocWithOffset(li.offset)});
      }
    inclusionList.insert(inclusionList.end(), skipped.begin(), skipped.end());
    return inclusionList;
  }

  // The selected included files, in the order they were first entered.
  std::vector<FileID> includedInOrder() {
    std::vector<FileID> out;
    std::set<FileID> seen;
    for (const Inclusion &inc : inclusions())
      if (selected.contains(inc.file) && seen.insert(inc.file).second) out.push_back(inc.file);
    return out;
  }

  // Adds to `written` every file that includes one in it, and edits their #include directives to name the
  // transformed copies (not with -i, where every file keeps its name). False after an error.
  bool redirectIncludes(std::set<FileID> &written) {
    bool inPlace = opts.layout.mode == OutputLayout::Mode::InPlace;
    for (bool changed = true; changed && !inPlace;) {
      changed = false;
      for (const Inclusion &inc : inclusions())
        if (written.count(inc.file) && inc.includer.isValid() && written.insert(inc.includer).second) changed = true;
    }
    std::set<std::pair<unsigned, unsigned>> done;
    for (const Inclusion &inc : inclusions()) {
      if (!written.count(inc.file) || inc.file == mainFile) continue;
      if (destinationOf(inc.file).empty()) {
        report(diags, inc.where.isValid() ? inc.where : sm.getLocForStartOfFile(inc.file), DiagnosticsEngine::Error,
               "'" + nameOf(inc.file) + "' is included and changes (kernels made PTB, launches rewritten), but "
               "its transformed copy cannot go to stdout with the main file: use -o, --output-dir or -i");
        return false;
      }
      if (inPlace) continue;
      if (!inc.includer.isValid() || !selected.contains(inc.includer)) {
        report(diags, inc.where.isValid() ? inc.where : sm.getLocForStartOfFile(inc.file), DiagnosticsEngine::Error,
               "'" + nameOf(inc.file) + "' changes, but it is included from a file that --header-filter does not "
               "select, so that #include cannot be pointed at its transformed copy; select that file too");
        return false;
      }
      unsigned off = offsetOf(inc.where);
      if (!done.insert({inc.includer.getHashValue(), off}).second) continue;
      llvm::StringRef text = sm.getBufferData(inc.includer).substr(off);
      char close = text.starts_with("\"") ? '"' : text.starts_with("<") ? '>' : 0;
      size_t end = close ? text.find_first_of(std::string(1, close) + "\n", 1) : llvm::StringRef::npos;
      if (!close || end == llvm::StringRef::npos || text[end] != close) {
        report(diags, inc.where, DiagnosticsEngine::Error,
               "this #include names '" + nameOf(inc.file) + "', which changes, through a macro: it cannot be "
               "pointed at the transformed copy; write the file name in the #include");
        return false;
      }
      std::string from = llvm::sys::path::parent_path(absolutePath(destinationOf(inc.includer))).str();
      addEdit(inc.includer, off, unsigned(end + 1), "\"" + relativePath(from, destinationOf(inc.file)) + "\"");
      ++stats[inc.includer].includes;
    }
    if (inPlace) return true;
    // A quoted #include of a file that keeps its text, found beside the includer ("kernels.h" next to
    // app.cu), is pointed at that file from where the output goes: the output compiles with the flags
    // the original compiles with, wherever it is written (stdout: where it goes is not known).
    for (FileID f : written) {
      std::string dest = destinationOf(f);
      if (dest.empty()) continue;
      std::string source = f == mainFile ? inv.mainFile : nameOf(f);
      std::string includerDir = llvm::sys::path::parent_path(absolutePath(source)).str();
      std::string outputDir = llvm::sys::path::parent_path(absolutePath(dest)).str();
      for (const LocalInclude &li : localIncludes(sm.getBufferData(f), source)) {
        if (done.count({f.getHashValue(), li.offset})) continue;  // pointed at a transformed copy above
        std::string name = relocatedInclude(li, includerDir, outputDir);
        if (name.empty()) continue;
        addEdit(f, li.offset, li.length, name);
        ++stats[f].localIncludes;
      }
    }
    return true;
  }

  // A launch, in a selected file, of a kernel defined in a file that is not selected: it stays a plain
  // launch of the original kernel, which the runtime does not confine.
  void reportUnselectedKernel(const LaunchSite &s) {
    if (!s.kernel || s.fromDevice) return;
    const FunctionDecl *def = nullptr;
    if (!s.kernel->hasBody(def) || !def) return;
    FileID f = sm.getFileID(sm.getExpansionLoc(def->getLocation()));
    if (selected.contains(f)) return;
    std::string where = sm.isInSystemHeader(def->getLocation()) ? "a system header" : "'" + nameOf(canon(f)) + "'";
    report(diags, s.expr->getBeginLoc(), opts.strict ? DiagnosticsEngine::Error : DiagnosticsEngine::Warning,
           "launch of '" + def->getQualifiedNameAsString() + "' stays a plain launch, not confined by the PTB "
           "runtime: the kernel is defined in " + where + ", which " + selected.filter().describe() +
           " does not select");
  }

private:
  // ---------------------------------------------------------------------------------------------------
  // Helpers on text and locations are SourceText's.

  // `first`: before every other edit at the same offset (a guard that closes what ends there).
  void addEdit(FileID f, unsigned offset, unsigned length, std::string text, bool first = false) {
    edits.push_back({canon(f), offset, length, std::move(text), first ? 0 : ++editCount});
  }

  // A function body with calls redirected to PTB clones (edits only inside the body's own text).
  std::string bodyWithRedirects(const FunctionDecl *fd) const {
    return textWithRedirects(sm.getExpansionLoc(fd->getBody()->getBeginLoc()),
                             afterToken(sm.getExpansionLoc(fd->getBody()->getEndLoc())));
  }

  // The text [b, e) with the calls written there sent to PTB clones (the edits of each call whose
  // identifying location is inside). At one offset: closing insertions first (inner calls first), then
  // opening ones (outer calls first), then the replacement of the text there.
  std::string textWithRedirects(SourceLocation b, SourceLocation e) const {
    FileID f = sm.getFileID(b);
    unsigned bo = offsetOf(b), eo = offsetOf(e);
    // Redirected calls (their CallEdits) and, in a parking kernel's body and clones, barriers made task
    // barriers (a replacement of the barrier's name, or an insertion before a group and a replacement of
    // its `.sync()`, taken as an innermost opening).
    std::vector<CallEdit> inside;
    for (auto &entry : redirects) {
      const VirtualizedCall &call = entry.second;
      unsigned off = offsetOf(call.nameLoc);
      if (sm.getFileID(call.nameLoc) != f || off < bo || off >= eo) continue;
      for (const CallEdit &edit : call.edits)
        if (sm.getFileID(edit.loc) == f && offsetOf(edit.loc) >= bo && offsetOf(edit.loc) + edit.length <= eo)
          inside.push_back(edit);
    }
    for (auto &entry : taskBarrierEdits) {
      const TaskBarrierEdit &edit = entry.second;
      unsigned off = offsetOf(edit.at);
      if (sm.getFileID(edit.at) == f && off >= bo && off + edit.length <= eo)
        inside.push_back({edit.length ? CallEdit::Kind::Replace : CallEdit::Kind::Open, edit.at, edit.length, edit.text, 0});
    }
    auto rank = [](const CallEdit &x) { return x.kind == CallEdit::Kind::Close ? 0 : x.kind == CallEdit::Kind::Open ? 1 : 2; };
    std::stable_sort(inside.begin(), inside.end(), [&](const CallEdit &x, const CallEdit &y) {
      unsigned xo = offsetOf(x.loc), yo = offsetOf(y.loc);
      if (xo != yo) return xo < yo;
      if (rank(x) != rank(y)) return rank(x) < rank(y);
      if (x.kind == CallEdit::Kind::Close) return x.extent < y.extent;
      if (x.kind == CallEdit::Kind::Open) return x.extent > y.extent;
      return false;
    });
    llvm::StringRef buffer = sm.getBufferData(f);
    std::string text;
    unsigned at = bo;
    for (const CallEdit &edit : inside) {
      unsigned off = offsetOf(edit.loc);
      if (off < at) {  // not produced by the analysis
        report(diags, edit.loc, DiagnosticsEngine::Error,
               "internal error: overlapping edits of calls sent to PTB clones; please report this input");
        continue;
      }
      text += buffer.substr(at, off - at).str();
      text += edit.text;
      at = off + edit.length;
    }
    text += buffer.substr(at, eo - at).str();
    return text;
  }

  // Why a kernel without blockers still cannot be rewritten here, or "".
  std::string structuralProblem(const Kernel &k) const {
    const FunctionDecl *fd = k.decl;
    if (fd->getLocation().isMacroID() || fd->getBody()->getBeginLoc().isMacroID() ||
        fd->getBody()->getEndLoc().isMacroID())
      return "the kernel is defined inside a macro";
    if (!selected.containsLoc(fd->getLocation())) return "the kernel is not in a file that is transformed";
    if (auto *t = fd->getDescribedFunctionTemplate())
      for (const NamedDecl *p : *t->getTemplateParameters())
        if (p->getName().empty()) return "a template parameter has no name (give it one)";
    if (!fd->getFunctionTypeLoc()) return "the kernel's parameter list could not be located";
    if (!namespaceWrap(fd).ok)
      return "the kernel is defined outside its namespace, which cannot be reopened (an anonymous namespace)";
    if (fd->getTemplateSpecializationKind() == TSK_ExplicitSpecialization)
      return "explicit specializations of kernel templates are not supported (the primary template is)";
    for (const Kernel &other : inv.kernels)
      if (other.decl != fd && other.qualifiedName == k.qualifiedName)
        return "overloaded kernel names are not supported (give each overload its own name)";
    return "";
  }

  // ---------------------------------------------------------------------------------------------------
  // The edits.

  void cloneCallee(const FunctionDecl *fd, const Kernel &k) {
    if (!cloned.insert(fd).second) return;
    if (auto *md = dyn_cast<CXXMethodDecl>(fd)) return cloneMember(md);
    std::string name = ptbCloneName(fd);
    std::string leading = "const uint3 blockIdx, const dim3 gridDim";
    SourceLocation end = afterToken(sm.getExpansionLoc(fd->getBody()->getEndLoc()));
    FileID f = sm.getFileID(end);
    const FunctionDecl *first = fd->getFirstDecl();
    SourceLocation firstLoc = sm.getExpansionLoc(first->getLocation());
    // A declaration before the definition, in a file that is written: the clone is declared there too.
    bool priorInMain = first != fd && selected.containsLoc(firstLoc) &&
                       (canon(sm.getFileID(firstLoc)) != canon(f) || offsetOf(firstLoc) < offsetOf(end));
    // An explicit specialization's first declaration is the primary template's unless the specialization
    // itself was declared before; its clone keeps the explicit template arguments (`idx<float>`).
    bool explicitSpec = fd->getTemplateSpecializationKind() == TSK_ExplicitSpecialization;
    if (explicitSpec && first->getTemplateSpecializationKind() != TSK_ExplicitSpecialization) priorInMain = false;
    if (explicitSpec && fd->getFunctionTypeLoc())
      name += textBetween(afterToken(sm.getExpansionLoc(fd->getLocation())),
                          sm.getExpansionLoc(fd->getFunctionTypeLoc().getLParenLoc()));
    std::string clone = headBeforeUnqualifiedName(fd) + name + "(" + joinNonEmpty(leading, paramList(fd, !priorInMain)) + ")" +
                        headAfterParams(fd);
    std::string body = guardedClone(
        fd, lineDirective(f, lineOf(sm.getExpansionLoc(fd->getBody()->getBeginLoc()))) + bodyWithRedirects(fd), false);
    const NamespaceWrap wrap = namespaceWrap(fd);
    std::string text = "\n// PTB clone of " + fd->getQualifiedNameAsString() +
                       ": blockIdx/gridDim are the virtual block's (docs/generated-code.md).\n" + wrap.open + clone + "\n" +
                       body + "\n" + wrap.close;
    if (selected.contains(f)) {
      addEdit(f, offsetOf(end), 0, text + lineDirective(f, lineOf(end)));
      ++stats[canon(f)].clones;
    } else {
      // Defined in a header that is not transformed: the clone goes before the kernel that needs it.
      SourceLocation at = declStart(k.decl);
      FileID kf = sm.getFileID(at);
      addEdit(kf, offsetOf(at), 0, text + lineDirective(kf, lineOf(at)));
      ++stats[canon(kf)].clones;
    }
    if (priorInMain)
      declareAfterFirstDeclaration(first, (templateHeader(fd).empty() ? "" : templateHeader(fd) + "\n") +
                                              headBeforeUnqualifiedName(fd).substr(templateHeader(fd).size()) +
                                              name + "(" + joinNonEmpty(leading, paramList(fd, true)) + ");");
  }

  // A member function, constructor or operator (docs/ptb-transform.md): its clone is a member of the same
  // class, defined after the original's definition, in the class or out of it; out of it, the clone is
  // also declared after the original's declaration in the class. A constructor's clone is a constructor
  // whose first parameter is a ::ptb::VirtualBlock. Member initializers are copied with their calls
  // sent to clones too.
  void cloneMember(const CXXMethodDecl *md) {
    const bool ctor = isa<CXXConstructorDecl>(md);
    const std::string leading = std::string(ctor ? "::ptb::VirtualBlock, " : "") + "const uint3 blockIdx, const dim3 gridDim";
    auto nameOf = [&](const FunctionDecl *d) {
      return ctor ? textBetween(sm.getExpansionLoc(d->getLocation()),
                                sm.getExpansionLoc(d->getFunctionTypeLoc().getLParenLoc()))
                  : ptbCloneName(d);
    };
    SourceLocation bodyBegin = sm.getExpansionLoc(md->getBody()->getBeginLoc());
    SourceLocation end = afterToken(sm.getExpansionLoc(md->getBody()->getEndLoc()));
    FileID f = sm.getFileID(end);
    const bool outOfLine = md->isOutOfLine();
    std::string clone = headBeforeName(md) + nameOf(md) + "(" + joinNonEmpty(leading, paramList(md, !outOfLine)) + ")" +
                        textWithRedirects(afterToken(sm.getExpansionLoc(md->getFunctionTypeLoc().getRParenLoc())), bodyBegin);
    std::string body = lineDirective(f, lineOf(bodyBegin)) + bodyWithRedirects(md);
    addEdit(f, offsetOf(end), 0,
            "\n// PTB clone of " + md->getQualifiedNameAsString() +
                ": blockIdx/gridDim are the virtual block's (docs/generated-code.md).\n" +
                guardedClone(md, clone + "\n" + body, true) + "\n" + lineDirective(f, lineOf(end)));
    ++stats[canon(f)].clones;
    if (!outOfLine) return;
    // The declaration in the class: the original's, up to its ';', with the clone's name and parameters.
    const FunctionDecl *decl = md->getFirstDecl();
    SourceLocation rparen = sm.getExpansionLoc(decl->getFunctionTypeLoc().getRParenLoc());
    std::optional<Token> semi;
    int depth = 0;
    for (SourceLocation at = rparen;;) {
      semi = Lexer::findNextToken(at, sm, lo);
      if (!semi || semi->is(tok::eof) || semi->is(tok::l_brace)) return;
      if (semi->isOneOf(tok::l_paren, tok::l_square)) ++depth;
      if (semi->isOneOf(tok::r_paren, tok::r_square)) --depth;
      if (depth == 0 && semi->is(tok::semi)) break;
      at = semi->getLocation();
    }
    FileID df = sm.getFileID(semi->getLocation());
    addEdit(df, offsetOf(semi->getEndLoc()), 0,
            "\n" + headBeforeName(decl) + nameOf(decl) + "(" + joinNonEmpty(leading, paramList(decl, true)) + ")" +
                textBetween(afterToken(rparen), semi->getLocation()) + ";\n" + lineDirective(df, lineOf(semi->getLocation())));
  }

  // Inserts `declaration` on its own line after the `;` that ends `first` (a declaration before the
  // definition), with #line resuming the original numbering.
  void declareAfterFirstDeclaration(const FunctionDecl *first, const std::string &declaration) {
    auto semi = Lexer::findNextToken(sm.getExpansionLoc(first->getEndLoc()), sm, lo);
    if (!semi || !semi->is(tok::semi)) return;
    FileID f = sm.getFileID(semi->getLocation());
    addEdit(f, offsetOf(semi->getEndLoc()), 0, "\n" + declaration + "\n" + lineDirective(f, lineOf(semi->getLocation())));
  }

  // An out-of-line definition of a namespace member (`__global__ void ns::k(...) {...}` outside `ns`):
  // the text that reopens its namespaces around what is generated after it, so that the generated names
  // (twin, launcher, clone) are declared where the original is and its body's names resolve as they do
  // in the original. `ok` is false where they cannot be reopened (an anonymous namespace).
  struct NamespaceWrap {
    std::string open, close;
    bool ok = true;
  };
  static NamespaceWrap namespaceWrap(const FunctionDecl *fd) {
    NamespaceWrap w;
    const DeclContext *lexical = fd->getLexicalDeclContext()->getRedeclContext();
    for (const DeclContext *dc = fd->getDeclContext()->getRedeclContext(); !dc->Equals(lexical); dc = dc->getParent()) {
      const auto *ns = dyn_cast<NamespaceDecl>(dc);
      if (!ns || ns->isAnonymousNamespace() || dc->isTranslationUnit()) {
        w.ok = false;
        return w;
      }
      w.open = "namespace " + ns->getNameAsString() + " { " + w.open;
      w.close += "}  // namespace " + ns->getNameAsString() + "\n";
    }
    if (!w.open.empty()) w.open = "\n" + w.open + "\n";
    return w;
  }

  // The text before the function's name without the qualifier of an out-of-line definition.
  std::string headBeforeUnqualifiedName(const FunctionDecl *fd) const {
    if (NestedNameSpecifierLoc q = fd->getQualifierLoc())
      return textBetween(declStart(fd), sm.getExpansionLoc(q.getBeginLoc()));
    return headBeforeName(fd);
  }

  void emitTwin(const Kernel &k) {
    const FunctionDecl *fd = k.decl;
    std::string name = fd->getNameAsString();
    std::string tmpl = templateHeader(fd);
    std::string targs = templateArgsForward(fd);
    std::string params = paramList(fd, false);
    std::string args = argForward(fd);
    SourceLocation start = declStart(fd);
    SourceLocation end = afterToken(sm.getExpansionLoc(fd->getBody()->getEndLoc()));
    const FunctionDecl *first = fd->getFirstDecl();
    bool priorInMain = first != fd && selected.containsLoc(first->getLocation());
    FileID kf = sm.getFileID(end);
    // The generated heads map to where the kernel's declaration starts (its template header, if any).
    unsigned kernelLine = lineOf(start);

    std::string t;
    t += "\n// PTB twin of " + k.qualifiedName + " (ptb-transform; docs/generated-code.md).\n";
    if (k.parks())
      t += "// Threads that return before a barrier park until the task ends: its barriers are task barriers\n"
           "// (TaskSync::parked; docs/ptb-transform.md, \"Parking\").\n";
    const bool apart = twinApart(k);
    if (apart) {
      t += "#ifdef PTB_TWINS_PART\n";
      ++twinsApartCount;
    }
    t += lineDirective(kf, kernelLine);
    t += (tmpl.empty() ? "" : tmpl + "\n") + "static __device__ __forceinline__ void " + name + "__ptb_task(" +
         joinNonEmpty("const uint3 blockIdx, const dim3 gridDim", params) + ")\n";
    t += lineDirective(kf, lineOf(sm.getExpansionLoc(fd->getBody()->getBeginLoc()))) + bodyWithRedirects(fd) + "\n";
    t += lineDirective(kf, kernelLine);
    t += headBeforeUnqualifiedName(fd) + name + "__ptb(" + joinNonEmpty(paramList(fd, false, true), "const ::ptb::Launch ptb_launch") + ")" +
         headAfterParams(fd) + "{\n";
    // Tasks whose threads never meet (docs/generated-code.md) need no barrier between them.
    t += std::string("  ::ptb::run_tasks") +
         (k.parks() ? "<::ptb::TaskSync::parked>" : k.tasksIndependent ? "<::ptb::TaskSync::none>" : "") +
         "(ptb_launch, [&](const uint3 ptb_block, const dim3 ptb_grid) {\n";
    t += "    " + name + "__ptb_task" + targs + "(" + joinNonEmpty("ptb_block, ptb_grid", args) + ");\n";
    t += "  });\n}\n";
    const std::string launchedBy = apartLaunch(fd);
    if (!launchedBy.empty())  // the program's compile declares the launch functions; the twins part defines them
      t += "#endif\n" + lineDirective(kf, kernelLine) + (templateApart.count(fd)         ? launchStruct(fd)
                                                              : fd->isInAnonymousNamespace() ? ""
                                                                                             : staticLaunchFunctions(fd));
    else if (apart)  // the program's compile declares the twin; the twins part defines it
      t += "#else\n" + lineDirective(kf, kernelLine) + headBeforeUnqualifiedName(fd) + name + "__ptb(" +
           joinNonEmpty(paramList(fd, false, true), "const ::ptb::Launch ptb_launch") + ");\n#endif\n";
    t += (tmpl.empty() ? "" : tmpl + "\n") + "static inline void " + name + "__ptb_launch(" +
         joinNonEmpty("const ::ptb::LaunchConfig& ptb_config", paramList(fd, !priorInMain)) + ") {\n";
    if (!launchedBy.empty())
      t += "  ::ptb::launch_apart(" + joinNonEmpty("ptb_config, " + name + targs + ", " + launchedBy, args) + ");\n}\n";
    else
      t += "  ::ptb::launch(" + joinNonEmpty("ptb_config, " + name + targs + ", " + name + "__ptb" + targs, args) + ");\n}\n";
    const NamespaceWrap wrap = namespaceWrap(fd);
    addEdit(kf, offsetOf(end), 0, wrap.open + t + wrap.close + lineDirective(kf, lineOf(end)));

    // Launches may come before the definition: declare the launcher after the first declaration.
    if (priorInMain)
      declareAfterFirstDeclaration(first, (tmpl.empty() ? "" : tmpl + "\n") + "static inline void " + name +
                                              "__ptb_launch(" +
                                              joinNonEmpty("const ::ptb::LaunchConfig& ptb_config", paramList(fd, true)) + ");");
  }

  // A template kernel's launch struct (twins apart): its functions launch the twin, given the original's
  // address; the twins part defines them and instantiates the struct for each of the kernel's template
  // argument lists, the program's compile only declares them.
  std::string launchStruct(const FunctionDecl *fd) const {
    const std::string name = fd->getNameAsString(), twin = name + "__ptb" + templateArgsForward(fd);
    const std::string launch = "static void launch(" +
                               joinNonEmpty("const ::ptb::LaunchConfig& ptb_config, const void* ptb_original",
                                            paramList(fd, false)) + ")";
    const std::string launchArgs = "static cudaError_t launch_args(const void* ptb_original, dim3 ptb_grid, dim3 ptb_block, "
                                   "void** ptb_args, size_t ptb_shmem, cudaStream_t ptb_stream)";
    return templateHeader(fd) + "\nstruct " + name + "__ptb_twin {\n#ifdef PTB_TWINS_PART\n  " + launch + " {\n" +
           "    ::ptb::launch_twin(" + joinNonEmpty("ptb_config, ptb_original, " + twin, argForward(fd)) + ");\n  }\n  " +
           launchArgs + " {\n    return ::ptb::launch_kernel_args_twin(ptb_original, " + twin +
           ", ptb_grid, ptb_block, ptb_args, ptb_shmem, ptb_stream);\n  }\n#else\n  " + launch + ";\n  " + launchArgs +
           ";\n#endif\n};\n";
  }

  // A static kernel's launch functions (twins apart): as a launch struct's, with external linkage and a
  // name unique to the translation unit (its twin is static, like the kernel). `params` as written
  // where they are declared. Their heads, and their bodies (which only the twins part compiles).
  struct LaunchFunction {
    std::string head, body;
  };
  std::vector<LaunchFunction> launchFunctions(const FunctionDecl *fd, const std::string &params) const {
    const std::string name = fd->getNameAsString(), unique = staticApart.at(fd);
    return {{"void " + name + "__ptb_apart_" + unique + "(" +
                 joinNonEmpty("const ::ptb::LaunchConfig& ptb_config, const void* ptb_original", params) + ")",
             "  ::ptb::launch_twin(" + joinNonEmpty("ptb_config, ptb_original, " + name + "__ptb", argForward(fd)) + ");\n"},
            {"cudaError_t " + name + "__ptb_apart_args_" + unique + "(const void* ptb_original, dim3 ptb_grid, "
                 "dim3 ptb_block, void** ptb_args, size_t ptb_shmem, cudaStream_t ptb_stream)",
             "  return ::ptb::launch_kernel_args_twin(ptb_original, " + name +
                 "__ptb, ptb_grid, ptb_block, ptb_args, ptb_shmem, ptb_stream);\n"}};
  }

  // A static kernel's launch functions, declared and (in the twins part) defined after its twin.
  std::string staticLaunchFunctions(const FunctionDecl *fd) const {
    std::string text = "// The twin is static: these launch it, with names unique to this file, and the twins part defines them.\n";
    for (const LaunchFunction &f : launchFunctions(fd, paramList(fd, false)))
      text += f.head + "\n#ifdef PTB_TWINS_PART\n{\n" + f.body + "}\n#else\n;\n#endif\n";
    return text;
  }

  // A kernel in an anonymous namespace: its launch functions are declared before the namespace opens
  // (their parameters' types written fully qualified: a name the namespace declares is not visible
  // there) and defined by the twins part after it closes.
  void declareBeforeAnonymousNamespace(const FunctionDecl *fd, const NamespaceDecl *ns) {
    std::string declarations, definitions;
    for (const LaunchFunction &f : launchFunctions(fd, qualifiedParameters(fd, astContext))) {
      declarations += f.head + ";\n";
      definitions += f.head + " {\n" + f.body + "}\n";
    }
    const std::string what = fd->getNameAsString() + " (ptb-transform; docs/generated-code.md, \"Twins apart\")";
    SourceLocation open = sm.getExpansionLoc(ns->getBeginLoc()), close = afterToken(sm.getExpansionLoc(ns->getRBraceLoc()));
    addEdit(mainFile, offsetOf(open), 0,
            newLineAt(open) + "// Launch functions of the twin of " + what + ":\n" + declarations +
                lineDirective(mainFile, lineOf(open)));
    addEdit(mainFile, offsetOf(close), 0,
            "\n#ifdef PTB_TWINS_PART\n// Launch functions of the twin of " + what + ":\n" + definitions + "#endif\n" +
                lineDirective(mainFile, lineOf(close)));
  }

  // Spelling location of a token of a launch in the file being edited (`launchFile`), or invalid.
  SourceLocation mainSpelling(SourceLocation l) const {
    if (l.isInvalid()) return l;
    SourceLocation s = sm.getSpellingLoc(l);
    return sm.getFileID(s) == launchFile && selected.contains(launchFile) ? s : SourceLocation();
  }

  bool rewriteLaunch(const Kernel &k, const LaunchSite &s) {
    auto level = opts.strict ? DiagnosticsEngine::Error : DiagnosticsEngine::Warning;
    SourceLocation at = s.expr->getBeginLoc();
    if (s.fromDevice) return false;  // a device-side launch belongs to a kernel that is left as it is
    launchFile = sm.getFileID(sm.getSpellingLoc(at));
    if (s.inMacroBody) {
      report(diags, at, level,
             "launch of '" + k.qualifiedName + "' is written inside the definition of macro '" + s.macro +
                 "' and is not rewritten: it still launches the original kernel");
      return false;
    }
    if (s.form == LaunchSite::Form::TripleChevron) {
      auto *call = cast<CUDAKernelCallExpr>(s.expr);
      const Expr *callee = call->getCallee()->IgnoreParenImpCasts();
      SourceLocation nameLoc;
      if (auto *dre = dyn_cast<DeclRefExpr>(callee)) nameLoc = dre->getLocation();
      else if (auto *ule = dyn_cast<UnresolvedLookupExpr>(callee)) nameLoc = ule->getNameLoc();
      const CallExpr *config = call->getConfig();
      SourceLocation name = mainSpelling(nameLoc), lll = mainSpelling(config->getBeginLoc()),
                     ggg = mainSpelling(config->getRParenLoc());
      std::optional<Token> lparen;
      if (ggg.isValid()) lparen = Lexer::findNextToken(ggg, sm, lo);
      if (name.isInvalid() || lll.isInvalid() || ggg.isValid() == false || !lparen || !lparen->is(tok::l_paren)) {
        report(diags, at, level, "launch of '" + k.qualifiedName + "' could not be located in the source text and is not rewritten");
        return false;
      }
      // A macro that expands its argument twice yields two launches with the same text: edit it once.
      if (!rewrittenLaunchText.insert({canon(launchFile).getHashValue(), offsetOf(name)}).second) return false;
      unsigned written = 0;
      for (const Expr *a : call->arguments()) if (!isa<CXXDefaultArgExpr>(a)) ++written;
      addEdit(launchFile, offsetOf(name), Lexer::MeasureTokenLength(name, sm, lo), k.decl->getNameAsString() + "__ptb_launch");
      addEdit(launchFile, offsetOf(lll), 3, "(::ptb::LaunchConfig(");
      unsigned gggOff = offsetOf(ggg);
      addEdit(launchFile, gggOff, offsetOf(lparen->getLocation()) + 1 - gggOff, written ? "), " : ")");
      return true;
    }
    if (s.form == LaunchSite::Form::CudaLaunchKernel) {
      auto *call = cast<CallExpr>(s.expr);
      const Expr *callee = call->getCallee()->IgnoreParenImpCasts();
      const Expr *arg0 = call->getArg(0);
      const Expr *kref = arg0->IgnoreParenCasts();
      if (auto *uo = dyn_cast<UnaryOperator>(kref); uo && uo->getOpcode() == UO_AddrOf) kref = uo->getSubExpr()->IgnoreParenCasts();
      auto *dre = dyn_cast<DeclRefExpr>(kref);
      SourceLocation cb = mainSpelling(callee->getBeginLoc()), ce = mainSpelling(callee->getEndLoc());
      SourceLocation ab = mainSpelling(arg0->getBeginLoc()), ae = mainSpelling(arg0->getEndLoc());
      if (!dre || cb.isInvalid() || ce.isInvalid() || ab.isInvalid() || ae.isInvalid()) {
        report(diags, at, level, "cudaLaunchKernel of '" + k.qualifiedName + "' could not be located in the source text and is not rewritten");
        return false;
      }
      if (!rewrittenLaunchText.insert({canon(launchFile).getHashValue(), offsetOf(cb)}).second) return false;
      std::string kernelText = tokenRangeText(SourceRange(mainSpelling(dre->getBeginLoc()), mainSpelling(dre->getEndLoc())));
      SourceLocation nameLoc = mainSpelling(dre->getLocation());
      unsigned nameInText = offsetOf(nameLoc) - offsetOf(mainSpelling(dre->getBeginLoc()));
      std::string twinText = kernelText;
      // Twins apart, a template kernel: its launch struct's launch_args stands for the twin.
      const bool templateStruct = templateApart.count(k.decl) != 0, staticApartTwin = staticApart.count(k.decl) != 0;
      twinText.replace(nameInText, Lexer::MeasureTokenLength(nameLoc, sm, lo),
                       k.decl->getNameAsString() + (templateStruct   ? "__ptb_twin"
                                                    : staticApartTwin ? "__ptb_apart_args_" + staticApart.at(k.decl)
                                                                      : "__ptb"));
      if (templateStruct) twinText += "::launch_args";
      addEdit(launchFile, offsetOf(cb), offsetOf(afterToken(ce)) - offsetOf(cb),
              templateStruct || staticApartTwin ? "::ptb::launch_kernel_args_apart" : "::ptb::launch_kernel_args");
      addEdit(launchFile, offsetOf(ab), offsetOf(afterToken(ae)) - offsetOf(ab), kernelText + ", " + twinText);
      // cudaLaunchKernel's C++ overload defaults shared memory and stream; the runtime call takes all six.
      unsigned written = 0;
      for (const Expr *a : call->arguments()) if (!isa<CXXDefaultArgExpr>(a)) ++written;
      SourceLocation rparen = mainSpelling(call->getRParenLoc());
      if (written < 6 && rparen.isValid())
        addEdit(launchFile, offsetOf(rparen), 0, written == 4 ? ", 0, 0" : ", 0");
      return true;
    }
    report(diags, at, level,
           s.formName + " launch of '" + k.qualifiedName + "' is not rewritten: it still launches the original kernel");
    return false;
  }

  ASTContext &astContext;
  DiagnosticsEngine &diags;
  const Inventory &inv;
  const RewriteOptions &opts;
  std::vector<Edit> edits;
  unsigned editCount = 0;
  std::map<unsigned, VirtualizedCall> redirects;  // by the callee name's location (raw encoding)
  std::map<std::pair<unsigned, unsigned>, TaskBarrierEdit> taskBarrierEdits;  // by (location, length)
  std::set<const FunctionDecl *> cloned;
  std::set<std::pair<unsigned, unsigned>> rewrittenLaunchText;  // (file, offset) of launches already edited
  SelectedFiles selected;
  FileID launchFile;  // the file of the launch being rewritten
  TwinsApartPlan plan;                          // --twins-apart
  std::map<const FunctionDecl *, TwinsApartPlan::Guard> guarded;  // the plan's guards of functions
  std::map<const FunctionDecl *, TemplateTwinPlan> templateApart;  // template kernels whose twins go apart
  std::vector<const FunctionDecl *> templateApartOrder;            // the same, in the order of the kernels
  std::map<const FunctionDecl *, std::string> staticApart;  // static and anonymous-namespace kernels apart: their suffix
  unsigned twinsApartCount = 0;
  std::vector<Inclusion> inclusionList;
  struct FileStats {
    std::vector<std::string> transformed, skipped;
    unsigned launches = 0, clones = 0, includes = 0, localIncludes = 0;
  };
  std::map<FileID, FileStats> stats;
};

} // namespace

bool rewriteTranslationUnit(CompilerInstance &ci, ASTContext &ctx, const Inventory &inventory,
                            const RewriteOptions &options, RewriteResult &result, const FileSelection &selection) {
  PtbRewriter r(ci, ctx, inventory, options, selection);
  return r.run(result);
}

llvm::Error collectOutputs(const std::vector<RewriteResult> &results, std::map<std::string, std::string> &files) {
  std::map<std::string, std::string> producer;  // destination -> the input whose translation unit wrote it
  std::set<std::string> mainAt;                // destinations of main files
  for (const RewriteResult &r : results)
    for (const FileOutput &f : r.files) {
      if (f.destination.empty()) continue;
      auto [it, fresh] = files.emplace(f.destination, f.output);
      if (fresh) {
        producer[f.destination] = r.file;
        if (f.isMain) mainAt.insert(f.destination);
        continue;
      }
      if (f.isMain || mainAt.count(f.destination)) {  // two inputs with one output path: no copy to share
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       "the output of '" + producer[f.destination] + "' and the output of '" + r.file +
                                           "' would both be written to '" + f.destination + "' (nothing written)");
      }
      if (it->second == f.output) continue;
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "'" + f.destination + "' would be written twice with different contents (from " + producer[f.destination] +
              " and from " + r.file + (f.isMain ? "" : ", which both include " + f.source) +
              "); transform these inputs in separate runs or to separate directories");
    }
  return llvm::Error::success();
}

std::string describeFileOutput(const FileOutput &f) {
  auto count = [](size_t n, const char *one, const char *many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  std::string to = f.destination.empty() ? "stdout" : f.destination == f.source ? "in place" : f.destination;
  if (f.isTwinsPart)
    return "ptb-transform: " + f.source + " -> " + to + ": " +
           (f.twinsApart ? count(f.twinsApart, "twin", "twins") + " compiled apart, in a module of their own"
                         : "empty, no twins apart" + (f.twinsKeptBecause.empty() ? std::string()
                                                                                  : ": " + f.twinsKeptBecause));
  std::string line = "ptb-transform: " + f.source + " -> " + to + ": " +
                     count(f.transformedKernels.size(), "kernel", "kernels") + " made PTB, " +
                     std::to_string(f.skippedKernels.size()) + " left as " +
                     (f.skippedKernels.size() == 1 ? "it is" : "they are") + ", " +
                     count(f.rewrittenLaunches, "launch", "launches") + " rewritten";
  if (f.clonedFunctions) line += ", " + count(f.clonedFunctions, "device function", "device functions") + " cloned";
  if (f.redirectedIncludes)
    line += ", " + count(f.redirectedIncludes, "#include", "#includes") + " pointed at transformed copies";
  if (f.relocatedIncludes)
    line += ", " + count(f.relocatedIncludes, "#include", "#includes") + " of local files pointed at them from the output";
  return line;
}

} // namespace ptb

#include "PtbRewrite.h"

#include "CallRedirects.h"
#include "CloneEdits.h"
#include "Diagnostics.h"
#include "EditContext.h"
#include "IncludeRedirects.h"
#include "LaunchEdits.h"
#include "TwinEdits.h"
#include "TwinsApartEdits.h"

#include "clang/AST/DeclTemplate.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"

#include <algorithm>
#include <set>

using namespace clang;

namespace ptb {

bool isTransformedOutput(llvm::StringRef text) { return text.starts_with(kGeneratedMarker); }

namespace rewrite {
namespace {

// The rewrite of one translation unit: which kernels become PTB, each part's edits in order, and the
// outputs assembled from them.
class PtbRewriter : EditContext {
public:
  PtbRewriter(CompilerInstance &ci, ASTContext &ctx, const Inventory &inv, const RewriteOptions &opts,
              const FileSelection &selection)
      : EditContext(ci, ctx, inv, opts, selection), twinsApart(*this), includes(*this), redirects(*this),
        clones(*this, redirects, twinsApart), twins(*this, redirects, twinsApart), launches(*this, twinsApart) {}

  bool run(RewriteResult &result) {
    llvm::StringRef buffer = sm.getBufferData(mainFile);
    result.file = inv.mainFile;
    // An output given again, or included: its twins would get twins. Reported at the file that is one.
    std::set<FileID> outputs;
    if (isTransformedOutput(buffer)) outputs.insert(mainFile);
    for (FileID f : includes.includedInOrder())
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
          report(diags, k.decl->getLocation(), DiagnosticsEngine::Note,
                 "kernel '" + k.qualifiedName + "' is defined here");
        result.skippedKernels.push_back(k.qualifiedName);
        continue;
      }
      chosen.push_back(&k);
    }

    for (const Kernel *k : chosen) redirects.add(*k);
    if (opts.twinsApart) {
      twinsApart.planApart(astContext, /*remark=*/!chosen.empty() && !opts.quiet);
      if (twinsApart.plan.keptBecause.empty())
        for (const Kernel *k : chosen) twinsApart.planLaunchedApart(*k);
    }
    for (const Kernel *k : chosen) {
      for (const FunctionDecl *callee : k->virtualizedCallees) clones.cloneCallee(callee, *k);
      twins.emitTwin(*k);
      result.transformedKernels.push_back(k->qualifiedName);
    }
    for (const Kernel *k : chosen)
      for (const LaunchSite &s : k->launches)
        if (launches.rewriteLaunch(*k, s)) {
          ++result.rewrittenLaunches;
          ++stats[canon(sm.getFileID(sm.getSpellingLoc(s.expr->getBeginLoc())))].launches;
        }
    for (const LaunchSite &s : inv.otherLaunches) launches.reportUnselectedKernel(s);
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
    if (!includes.redirectIncludes(written)) return false;

    std::vector<FileID> order{mainFile};
    for (FileID f : includes.includedInOrder())
      if (written.count(f) && f != mainFile) order.push_back(f);
    for (FileID f : includes.includedInOrder())
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
    if (opts.twinsApart) result.files.insert(result.files.begin() + 1, twinsApart.twinsPart(result.files.front()));
    return true;
  }

private:
  // The whole text of `f` with its edits and, first, the header: the marker, the runtime include, and
  // the mapping back to the original file.
  bool assemble(FileID f, FileOutput &fo) {
    llvm::StringRef buffer = sm.getBufferData(f);
    std::string head = std::string(kGeneratedMarker) + " " + opts.toolVersion + " from " +
                       llvm::sys::path::filename(fo.source).str() +
                       "; edit the original, not this file (docs/generated-code.md).\n" +
                       // Twins apart: the runtime's own kernel goes with the twins (TwinsApart.h).
                       (f == mainFile && twinsApart.twinsApartCount
                            ? "#ifndef PTB_TWINS_PART\n#define PTB_DISCOVERY_ELSEWHERE\n#endif\n"
                            : "") +
                       "#include \"" + opts.runtimeInclude + "\"\n" + lineDirective(f, 1);
    std::vector<const Edit *> mine;
    // A UTF-8 byte-order mark can only be first: the header replaces it (nvcc rejects one anywhere else).
    unsigned bom = buffer.starts_with("\xEF\xBB\xBF") ? 3 : 0;
    Edit headEdit{f, 0, bom, head, 0};
    mine.push_back(&headEdit);
    for (const Edit &e : edits)
      if (e.file == f) mine.push_back(&e);
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

  TwinsApartEdits twinsApart;
  IncludeRedirects includes;
  CallRedirects redirects;
  CloneEdits clones;
  TwinEdits twins;
  LaunchEdits launches;
};

} // namespace
} // namespace rewrite

bool rewriteTranslationUnit(CompilerInstance &ci, ASTContext &ctx, const Inventory &inventory,
                            const RewriteOptions &options, RewriteResult &result, const FileSelection &selection) {
  rewrite::PtbRewriter r(ci, ctx, inventory, options, selection);
  return r.run(result);
}

} // namespace ptb

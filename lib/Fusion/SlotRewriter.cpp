#include "SlotRewriter.h"
#include "Diagnostics.h"
#include "GeneratedMarkers.h"
#include "SlotFacts.h"
#include "SourceText.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/QualTypeNames.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <map>
#include <set>

using namespace clang;

namespace ptb {

namespace {

// A declaration's qualified name as code can spell it: unnamed and inline namespaces left out (a member of
// an unnamed namespace is found through the enclosing one). getQualifiedNameAsString() writes
// "(anonymous namespace)", which is for messages only.
std::string spelledQualifiedName(const NamedDecl *d) {
  PrintingPolicy pp(d->getASTContext().getLangOpts());
  pp.SuppressUnwrittenScope = true;
  std::string s;
  llvm::raw_string_ostream os(s);
  d->printQualifiedName(os, pp);
  return s;
}

// The scope prefix ("ns::inner::", or "" at file scope) under which code spells `d`'s enclosing names.
std::string spelledScope(const NamedDecl *d) {
  const std::string q = spelledQualifiedName(d), n = d->getNameAsString();
  return q.size() > n.size() && q.compare(q.size() - n.size(), n.size(), n) == 0 ? q.substr(0, q.size() - n.size())
                                                                                 : "";
}

// The parameters every slot function and slot copy of a device function starts with.
const char *const kSlotLeadingParams =
    "const uint3 blockIdx, const dim3 gridDim, const uint3 threadIdx, const dim3 blockDim, "
    "unsigned char* const ptb_dyn_shared";
const char *const kSlotLeadingArgs = "blockIdx, gridDim, threadIdx, blockDim, ptb_dyn_shared";

// The block barriers (SlotFacts::blockBarriers) and what they become in a slot: its named barrier PtbBar
// over PtbThreads.
const std::map<std::string, std::string> kSlotBarrierForms = {
    {"__syncthreads", "::ptb::bar_sync<PtbBar, PtbThreads>"},
    {"__syncthreads_count", "::ptb::bar_red_popc<PtbBar, PtbThreads>"},
    {"__syncthreads_and", "::ptb::bar_red_and<PtbBar, PtbThreads>"},
    {"__syncthreads_or", "::ptb::bar_red_or<PtbBar, PtbThreads>"},
};

class FusionFileRewriter : SourceText {
public:
  FusionFileRewriter(CompilerInstance &ci, ASTContext &ctx, const Inventory &inv)
      : SourceText(ctx.getSourceManager(), ctx.getLangOpts(), inv.mainFile), ctx(ctx), diags(ci.getDiagnostics()),
        inv(inv) {}

  bool run(const std::vector<FusionKernelRequest> &requests, FusionFile &out) {
    out.path = inv.mainFile;
    llvm::StringRef buffer = sm.getBufferData(mainFile);
    if (buffer.starts_with(kFusedMarker)) {
      report(diags, sm.getLocForStartOfFile(mainFile), DiagnosticsEngine::Error,
             "this file was written by fuse-kernels; fuse the original sources instead");
      return false;
    }
    std::vector<std::pair<unsigned, std::string>> inserts; // (offset, text)
    for (const FusionKernelRequest &req : requests) {
      std::vector<const Kernel *> matches;
      for (const Kernel &k : inv.kernels)
        if (k.name == req.name || k.qualifiedName == req.name) matches.push_back(&k);
      if (matches.empty()) continue;
      if (matches.size() > 1) {
        report(diags, matches[1]->decl->getLocation(), DiagnosticsEngine::Error,
               "kernel name '" + req.name + "' is ambiguous here (give the qualified name)");
        continue;
      }
      const Kernel &k = *matches.front();
      SlotKernel sk;
      std::string text;
      unsigned at = 0;
      if (!prepareKernel(k, req, sk, text, at)) continue;
      inserts.push_back({at, std::move(text)});
      out.kernels.push_back(std::move(sk));
    }
    if (diags.hasErrorOccurred()) return false;
    for (auto &c : cloneTexts) inserts.push_back(c);
    std::stable_sort(inserts.begin(), inserts.end(), [](auto &a, auto &b) { return a.first < b.first; });
    std::string result;
    unsigned at = 0;
    std::vector<LocalInclude> locals = localIncludes(buffer, inv.mainFile); // offsets in `buffer`, ascending
    auto local = locals.begin();
    auto copyUpTo = [&](unsigned end) { // buffer [at, end), noting where its local includes land in `result`
      for (; local != locals.end() && local->offset < end; ++local) {
        out.localIncludes.push_back(*local);
        out.localIncludes.back().offset = static_cast<unsigned>(result.size() + (local->offset - at));
      }
      result += buffer.substr(at, end - at).str();
      at = end;
    };
    for (auto &[off, text] : inserts) {
      copyUpTo(off);
      result += text;
    }
    copyUpTo(static_cast<unsigned>(buffer.size()));
    out.text = std::move(result);
    return true;
  }

private:
  void error(SourceLocation loc, const std::string &msg) { report(diags, loc, DiagnosticsEngine::Error, msg); }

  // What one function's body holds for a slot, as the analysis found it.
  const SlotFacts &factsOf(const FunctionDecl *fd) const { return slotFactsOf(inv, fd); }

  const FunctionDecl *definitionOf(const FunctionDecl *f) const {
    const FunctionDecl *def = nullptr;
    return f && f->hasBody(def) ? def : nullptr;
  }

  // The slot-dependent functions `fn` calls, transitively, callees first. False (reported) when one
  // cannot be copied.
  bool collectClones(const FunctionDecl *fn, const std::string &who, std::vector<const FunctionDecl *> &out,
                     std::vector<const FunctionDecl *> path = {}) {
    path.push_back(fn);
    for (const CallExpr *c : factsOf(fn).userCalls) {
      const FunctionDecl *def = definitionOf(c->getDirectCallee());
      if (!def || !slotDependent(inv, def)) continue;
      if (std::find(out.begin(), out.end(), def) != out.end()) continue;
      std::string why;
      if (std::find(path.begin(), path.end(), def) != path.end())
        why = "it is recursive";
      else if (isa<CXXMethodDecl>(def))
        why = "it is a member function, constructor or operator";
      else if (def->getTemplateSpecializationKind() == TSK_ExplicitSpecialization)
        why = "it is an explicit specialization of a template";
      else if (def->isTemplated() || (def->isTemplateInstantiation() && !def->getPrimaryTemplate()))
        why = "it is a template";
      else if (sm.getFileID(sm.getExpansionLoc(def->getLocation())) != mainFile || def->getLocation().isMacroID())
        why = "it is not defined in the main file (or is defined in a macro)";
      else if (offsetOf(sm.getExpansionLoc(def->getBeginLoc())) > offsetOf(sm.getExpansionLoc(fn->getBeginLoc())))
        // Its copy goes after its definition, and the caller's copy (after the caller's) must see it.
        why = "it is defined after '" + fn->getNameAsString() + "', which calls it (define it before)";
      if (!why.empty()) {
        error(c->getBeginLoc(), who + "it calls '" + def->getQualifiedNameAsString() +
                                    "', which reads the thread/block index, meets at a barrier or uses shared memory, "
                                    "and cannot be copied for a slot: " +
                                    why);
        return false;
      }
      if (!collectClones(def, who, out, path)) return false;
      out.push_back(def);
    }
    return true;
  }

  // Declares, once, the per-slot copies of a file-scope static __shared__ variable: a variable template
  // after its declaration (nvcc gives each instantiation its own shared memory).
  bool declareSlotCopy(const VarDecl *v) {
    if (slotCopies.count(v)) return true;
    const VarDecl *d = v->getDefinition() ? v->getDefinition() : v;
    SourceLocation e = d->getEndLoc();
    if (d->getLocation().isMacroID() || e.isMacroID() || sm.getFileID(sm.getExpansionLoc(e)) != mainFile) return false;
    auto semi = Lexer::findNextToken(e, sm, lo);
    if (!semi || !semi->is(tok::semi)) return false;
    PrintingPolicy pp(lo);
    std::string decl;
    llvm::raw_string_ostream os(decl);
    d->getType().print(os, pp, "ptb_slot_" + d->getNameAsString());
    slotCopies.insert(v);
    cloneTexts.push_back({offsetOf(semi->getEndLoc()), "\n// Per-slot copies of " + d->getNameAsString() +
                                                           " (fuse-kernels).\ntemplate <unsigned PtbBar> __shared__ " +
                                                           os.str() + ";\n" +
                                                           lineDirective(mainFile, lineOf(semi->getLocation()))});
    return true;
  }

  // What a slot copy of `f` says before its return type: the original's attributes ([[nodiscard]],
  // __attribute__((...)), from any of its declarations), then `static __device__`, then its inlining
  // (__noinline__ kept, with `inline` if it was written; otherwise __forceinline__, which is also
  // `inline`) and `constexpr`. The copy is device-only (a `__host__ __device__` original's copy is
  // called from the slot alone) and internal (`static`; `extern` has no meaning for it). Default
  // arguments and the exception specification follow the parameters (paramList, exceptionSpec).
  std::string slotCopySpecifiers(const FunctionDecl *f) const {
    PrintingPolicy pp(lo);
    std::string attrs;
    std::set<std::string> seen;
    for (const Attr *a : f->attrs()) {
      if (a->isImplicit() || isa<CUDADeviceAttr, CUDAHostAttr, CUDAGlobalAttr, AlwaysInlineAttr, NoInlineAttr>(a))
        continue;
      std::string t = attributeText(a, pp);
      if (!t.empty() && seen.insert(t).second) attrs += t + " ";
    }
    bool noinline = f->hasAttr<NoInlineAttr>();
    return attrs + "static __device__ " +
           (noinline ? std::string(f->isInlineSpecified() ? "inline __noinline__ " : "__noinline__ ")
                     : std::string("__forceinline__ ")) +
           (f->isConstexprSpecified() ? "constexpr " : "");
  }

  // An attribute as written: the macro that expands to it, or its text in the spelling's brackets;
  // clang's printer (which adds C++20 forms such as [[nodiscard("")]]) only when the text is not there.
  std::string attributeText(const Attr *a, const PrintingPolicy &pp) const {
    SourceRange r = a->getRange();
    if (r.isValid()) {
      if (r.getBegin().isMacroID() || r.getEnd().isMacroID())
        return tokenRangeText(SourceRange(sm.getExpansionLoc(r.getBegin()), sm.getExpansionLoc(r.getEnd())));
      std::string t = tokenRangeText(r);
      if (!t.empty()) {
        if (a->isStandardAttributeSyntax()) return "[[" + t + "]]";
        if (a->isGNUAttribute()) return "__attribute__((" + t + "))";
        if (a->isDeclspecAttribute()) return "__declspec(" + t + ")";
        return t; // keyword attributes (alignas, ...)
      }
    }
    std::string text;
    llvm::raw_string_ostream os(text);
    a->printPretty(os, pp);
    return llvm::StringRef(text).trim().str();
  }

  // The original's exception specification (` noexcept`, ` noexcept(expr)`, ` throw()`), as written.
  std::string exceptionSpec(const FunctionDecl *f) const {
    SourceRange r = f->getExceptionSpecSourceRange();
    if (r.isInvalid()) return "";
    std::string text = tokenRangeText(SourceRange(sm.getExpansionLoc(r.getBegin()), sm.getExpansionLoc(r.getEnd())));
    return text.empty() ? "" : " " + text;
  }

  // The body of `fd` as a slot runs it: barriers on the slot's named barrier, the block group the slot's,
  // extern/file-scope __shared__ per slot, calls of slot-dependent functions sent to their slot copies.
  bool slotBody(const FunctionDecl *fd, const std::string &who, const std::set<const FunctionDecl *> &clones,
                std::string &body) {
    const SlotFacts &facts = factsOf(fd);
    bool ok = true;
    for (auto &p : facts.problems) {
      error(p.loc,
            who + (fd->hasAttr<CUDAGlobalAttr>() ? "it " : "the function '" + fd->getNameAsString() + "' it calls ") +
                p.what);
      ok = false;
    }
    if (!ok) return false;
    SourceLocation bb = sm.getExpansionLoc(fd->getBody()->getBeginLoc());
    SourceLocation be = afterToken(sm.getExpansionLoc(fd->getBody()->getEndLoc()));
    unsigned bo = offsetOf(bb), eo = offsetOf(be);
    std::vector<std::tuple<unsigned, unsigned, std::string>> edits; // offset, length, text
    auto inBody = [&](SourceLocation l) {
      return l.isValid() && sm.getFileID(l) == mainFile && offsetOf(l) >= bo && offsetOf(l) < eo;
    };
    for (const CallExpr *c : facts.blockBarriers) {
      const Expr *callee = c->getCallee()->IgnoreParenImpCasts();
      SourceLocation nameLoc = sm.getSpellingLoc(callee->getBeginLoc());
      if (!inBody(nameLoc)) {
        error(c->getBeginLoc(),
              who + "its barrier is written inside a macro definition; the slot copy cannot rename it");
        ok = false;
        continue;
      }
      std::string n = c->getDirectCallee()->getNameAsString();
      edits.push_back({offsetOf(nameLoc), Lexer::MeasureTokenLength(nameLoc, sm, lo), kSlotBarrierForms.at(n)});
    }
    for (const CallExpr *c : facts.userCalls) {
      const FunctionDecl *def = definitionOf(c->getDirectCallee());
      if (!clones.count(def)) continue;
      const Expr *callee = c->getCallee()->IgnoreParenImpCasts();
      SourceLocation nameLoc;
      auto *dre = dyn_cast<DeclRefExpr>(callee);
      if (dre) nameLoc = dre->getLocation();
      // A call with template arguments (`f<float>(...)`): its '(' follows the '>', and the slot's two
      // template arguments lead those written.
      const bool explicitArgs = dre && dre->hasExplicitTemplateArgs();
      SourceLocation beforeParen = explicitArgs ? dre->getRAngleLoc() : nameLoc;
      std::optional<Token> lparen;
      if (nameLoc.isValid() && !nameLoc.isMacroID() && beforeParen.isFileID() && (!explicitArgs || inBody(beforeParen)))
        lparen = Lexer::findNextToken(beforeParen, sm, lo);
      if (!inBody(nameLoc) || !lparen || !lparen->is(tok::l_paren)) {
        error(c->getBeginLoc(), who + "its call of '" + def->getNameAsString() +
                                    "' is written inside a macro or in a form the slot copy cannot redirect");
        ok = false;
        continue;
      }
      if (explicitArgs) {
        edits.push_back(
            {offsetOf(nameLoc), Lexer::MeasureTokenLength(nameLoc, sm, lo), def->getNameAsString() + "__slot"});
        edits.push_back({offsetOf(dre->getLAngleLoc()) + 1, 0, "PtbBar, PtbThreads, "});
      } else {
        edits.push_back({offsetOf(nameLoc), Lexer::MeasureTokenLength(nameLoc, sm, lo),
                         def->getNameAsString() + "__slot<PtbBar, PtbThreads>"});
      }
      edits.push_back(
          {offsetOf(lparen->getLocation()) + 1, 0, std::string(kSlotLeadingArgs) + (c->getNumArgs() ? ", " : "")});
    }
    auto replaceRange = [&](SourceRange r, const std::string &text, const std::string &what) {
      SourceLocation b = r.getBegin(), e = r.getEnd();
      if (b.isMacroID() || e.isMacroID() || !inBody(b)) {
        error(r.getBegin(), who + "its " + what + " is written inside a macro; the slot copy cannot edit it");
        ok = false;
        return;
      }
      edits.push_back({offsetOf(b), offsetOf(afterToken(e)) - offsetOf(b), text});
    };
    for (const CallExpr *c : facts.blockGroupCalls)
      replaceRange(c->getSourceRange(), "::ptb::slot_block<PtbBar, PtbThreads>(threadIdx, blockDim, blockIdx)",
                   "this_thread_block() call");
    for (const VarDecl *v : facts.blockGroupVars)
      if (auto *tsi = v->getTypeSourceInfo()) {
        // `auto` only where the type is written (not for `auto b = ...`).
        if (!isa<AutoType>(v->getType().getNonReferenceType().getTypePtr()))
          replaceRange(tsi->getTypeLoc().getSourceRange(), "auto", "thread_block declaration");
      }
    PrintingPolicy pp(lo);
    pp.SuppressTagKeyword = false;
    auto dynamicAlias = [&](const VarDecl *v, const std::string &name) {
      QualType elem =
          ctx.getAsArrayType(v->getType()) ? ctx.getAsArrayType(v->getType())->getElementType() : v->getType();
      std::string t = TypeName::getFullyQualifiedName(elem, ctx, pp);
      return t + "* const " + name + " = reinterpret_cast<" + t + "*>(ptb_dyn_shared);";
    };
    for (const DeclStmt *d : facts.externShared) {
      auto *v = cast<VarDecl>(d->getSingleDecl());
      replaceRange(d->getSourceRange(), dynamicAlias(v, v->getNameAsString()), "extern __shared__ declaration");
    }
    // File-scope __shared__ variables. Static ones get a per-slot copy: a variable template
    // ptb_slot_<name><PtbBar> declared after the original (shared by the kernel's slot function and its
    // slot copies of device functions); extern ones an alias of the slot's dynamic shared memory at the
    // top of the body. Each use is renamed (not shadowed: a use may be qualified, ns::buf).
    std::string shadows;
    auto localName = [](const VarDecl *v) { return "ptb_slot_" + v->getNameAsString(); };
    for (const VarDecl *v : facts.fileShared) {
      if (isDynamicShared(v)) {
        shadows += " " + dynamicAlias(v, localName(v));
        continue;
      }
      if (!declareSlotCopy(v)) {
        error(v->getLocation(), who + "the file-scope __shared__ variable '" + v->getNameAsString() +
                                    "' it uses is not declared in the main file outside macros");
        ok = false;
      }
    }
    for (const DeclRefExpr *e : facts.fileSharedUses) {
      const VarDecl *v = cast<VarDecl>(e->getDecl())->getCanonicalDecl();
      const std::string scope = "::" + spelledScope(v);
      replaceRange(e->getSourceRange(), isDynamicShared(v) ? localName(v) : scope + localName(v) + "<PtbBar>",
                   "use of a file-scope __shared__ variable");
    }
    if (!ok) return false;
    if (!shadows.empty()) edits.push_back({bo + 1, 0, shadows});
    body = textBetween(bb, be);
    std::stable_sort(edits.begin(), edits.end(), [](auto &x, auto &y) { return std::get<0>(x) > std::get<0>(y); });
    for (auto &[off, len, t] : edits) body.replace(off - bo, len, t);
    return true;
  }

  // Checks that `k` fits a slot and writes its slot function; false after reporting why not.
  bool prepareKernel(const Kernel &k, const FusionKernelRequest &req, SlotKernel &sk, std::string &text, unsigned &at) {
    const FunctionDecl *fd = k.decl;
    const std::string who = "kernel '" + k.qualifiedName + "' cannot be fused: ";
    for (const Blocker &b : k.blockers) {
      if (b.cgBlockIndex) continue; // a slot's group (what this_thread_block() becomes) gives the task's block index
      error(b.sloc.isValid() ? b.sloc : fd->getLocation(), who + b.construct + ": " + b.detail);
      return false;
    }
    // ptb-transform clones members, constructors and operators that read blockIdx/gridDim; a slot does not.
    for (const VirtualizedCall &c : k.virtualizedCalls)
      if (isa<CXXMethodDecl>(c.callee) || c.callee->isOverloadedOperator()) {
        error(c.nameLoc,
              who + "it calls '" + c.callee->getQualifiedNameAsString() +
                  "', which reads blockIdx/gridDim, and member functions, constructors and operators are not "
                  "copied for a slot");
        return false;
      }
    // A slot meets at its own named barrier with a fixed thread count; its tasks do not park returned
    // threads (ptb-transform's TaskSync::parked needs barrier 0 and the whole block).
    for (const Blocker &b : k.parkedReturns) {
      error(b.sloc.isValid() ? b.sloc : fd->getLocation(),
            who + b.construct + ": " + b.detail + "; a fused slot cannot park the threads that return");
      return false;
    }
    if (k.templ) {
      error(fd->getLocation(), who + "kernel templates are not fused (wrap one instantiation in a plain kernel)");
      return false;
    }
    if (fd->getLocation().isMacroID() || fd->getBody()->getBeginLoc().isMacroID() ||
        fd->getBody()->getEndLoc().isMacroID() || sm.getFileID(sm.getExpansionLoc(fd->getLocation())) != mainFile) {
      error(fd->getLocation(), who + "it is defined inside a macro or outside the main file");
      return false;
    }
    if (req.threads() == 0 || req.threads() % 32 != 0) {
      error(fd->getLocation(), who + "its block (" + std::to_string(req.block[0]) + "x" + std::to_string(req.block[1]) +
                                   "x" + std::to_string(req.block[2]) + " = " + std::to_string(req.threads()) +
                                   " threads) is not a whole number of warps; slots must be warp-aligned");
      return false;
    }
    // The device functions the slot must copy too (they read the built-ins, meet at barriers, use a
    // block group or declare shared memory, here or below), callees before callers.
    std::vector<const FunctionDecl *> clones;
    if (!collectClones(fd, who, clones)) return false;
    std::set<std::string> clonedNames;
    for (const FunctionDecl *c : clones) clonedNames.insert(c->getNameAsString());
    // What the inventory saw below the kernel must all be inside those copies (not in library code).
    auto allCloned = [&](const std::vector<std::string> &chain) {
      for (const std::string &n : chain)
        if (!clonedNames.count(n)) return false;
      return true;
    };
    for (BuiltinVar v : kBuiltinVars) {
      const BuiltinUse &u = k.uses.count(v) ? k.uses.at(v) : BuiltinUse{};
      for (const auto &chain : u.callChains)
        if (!allCloned(chain)) {
          error(fd->getLocation(), who + "it reads " + name(v) + " in library code it calls (" +
                                       llvm::join(chain, " -> ") + "), which the slot cannot copy");
          return false;
        }
    }
    for (const Barrier &b : k.barriers) {
      if (!b.blockWide || b.kind.rfind("cg::thread_block::", 0) == 0 || b.via.empty() || allCloned(b.via)) continue;
      error(fd->getLocation(), who + "it reaches a block barrier (" + b.kind + ") in library code it calls (" +
                                   llvm::join(b.via, " -> ") + " at " + b.loc.str() + "), which the slot cannot copy");
      return false;
    }

    std::set<const FunctionDecl *> cloneSet(clones.begin(), clones.end());
    std::set<const VarDecl *> globalsUsed; // file-scope __shared__ variables the slot uses (one copy per slot)
    for (const FunctionDecl *c : clones) {
      std::string cloneBody;
      if (!slotBody(c, who, cloneSet, cloneBody)) return false;
      // Each slot has its own copy of the function's shared variables.
      globalsUsed.insert(factsOf(c).fileShared.begin(), factsOf(c).fileShared.end());
      sk.staticShared += factsOf(c).staticSharedBytes;
      // An instantiation of a function template is copied as the template (once for all of them: its
      // instantiations' bodies are the template's text, and must need the same edits).
      const FunctionTemplateDecl *tmpl = c->getPrimaryTemplate();
      const FunctionDecl *pat = tmpl ? tmpl->getTemplatedDecl() : c;
      if (tmpl) {
        auto [it, fresh] = templateCopyBodies.emplace(pat, cloneBody);
        if (!fresh && it->second != cloneBody) {
          error(c->getLocation(), who + "the instantiations of '" + c->getQualifiedNameAsString() +
                                      "' it calls would need different slot copies");
          return false;
        }
      }
      if (!clonedAlready.insert(pat).second) continue;
      std::string params = paramList(pat, /*defaults=*/true);
      std::string head = "template <unsigned PtbBar, unsigned PtbThreads>\n";
      std::string result = c->getReturnType().getAsString(PrintingPolicy(lo));
      if (tmpl) {
        const TemplateParameterList *tps = tmpl->getTemplateParameters();
        head =
            "template <unsigned PtbBar, unsigned PtbThreads, " +
            textBetween(afterToken(sm.getExpansionLoc(tps->getLAngleLoc())), sm.getExpansionLoc(tps->getRAngleLoc())) +
            ">\n";
        SourceRange rr = pat->getReturnTypeSourceRange();
        if (rr.isValid() && rr.getBegin().isFileID() && rr.getEnd().isFileID()) result = tokenRangeText(rr);
      }
      std::string clone = "\n// Fusion slot copy of " + c->getQualifiedNameAsString() +
                          " (fuse-kernels; docs/fuse-kernels.md).\n" + lineDirective(mainFile, lineOf(declStart(pat))) +
                          head + slotCopySpecifiers(pat) + result + " " + c->getNameAsString() + "__slot(" +
                          kSlotLeadingParams + (params.empty() ? "" : ", " + params) + ")" + exceptionSpec(pat) + "\n" +
                          lineDirective(mainFile, lineOf(sm.getExpansionLoc(c->getBody()->getBeginLoc()))) + cloneBody +
                          "\n";
      SourceLocation end = afterToken(sm.getExpansionLoc(c->getBody()->getEndLoc()));
      cloneTexts.push_back({offsetOf(end), clone + lineDirective(mainFile, lineOf(end))});
    }

    const SlotFacts &facts = factsOf(fd);
    std::string body;
    if (!slotBody(fd, who, cloneSet, body)) return false;
    SourceLocation bb = sm.getExpansionLoc(fd->getBody()->getBeginLoc());
    SourceLocation be = afterToken(sm.getExpansionLoc(fd->getBody()->getEndLoc()));
    PrintingPolicy pp(lo);
    pp.SuppressTagKeyword = false;

    // The slot function, after the kernel.
    std::string name = fd->getNameAsString() + "__slot";
    unsigned kernelLine = lineOf(declStart(fd));
    text += "\n// Fusion slot of " + k.qualifiedName +
            ": threadIdx/blockDim are the slot's, blockIdx/gridDim the task's, "
            "barriers the slot's (fuse-kernels; docs/fuse-kernels.md).\n";
    text += lineDirective(mainFile, kernelLine);
    text += "template <unsigned PtbBar, unsigned PtbThreads>\nstatic __device__ __forceinline__ void " + name + "(" +
            kSlotLeadingParams;
    std::string params = paramList(fd, false);
    text += (params.empty() ? "" : ", " + params) + ")\n";
    text += lineDirective(mainFile, lineOf(bb)) + body + "\n";
    at = offsetOf(be);
    text += lineDirective(mainFile, lineOf(be));

    // What the fused kernel needs.
    const std::string scope = spelledScope(fd);
    sk.request = req;
    sk.name = k.name;
    sk.qualifiedName = k.qualifiedName;
    sk.slotFunction = scope + name;
    sk.kernelRef = spelledQualifiedName(fd);
    sk.loc = k.loc;
    for (unsigned i = 0; i < fd->getNumParams(); ++i) {
      const ParmVarDecl *p = fd->getParamDecl(i);
      QualType t = p->getType();
      sk.paramTypes.push_back(TypeName::getFullyQualifiedName(t, ctx, pp));
      sk.paramNames.push_back(p->getName().empty() ? "p" + std::to_string(i) : p->getNameAsString());
    }
    for (const SharedVariable &s : k.shared)
      if (!s.dynamic && s.bytes) sk.staticShared += *s.bytes;
    globalsUsed.insert(facts.fileShared.begin(), facts.fileShared.end());
    for (const VarDecl *v : globalsUsed)
      if (!isDynamicShared(v)) sk.staticShared += ctx.getTypeSizeInChars(v->getType()).getQuantity();
    sk.tasksIndependent = k.tasksIndependent;
    return true;
  }

  ASTContext &ctx;
  DiagnosticsEngine &diags;
  const Inventory &inv;
  std::set<const FunctionDecl *> clonedAlready;                   // slot copies written (one per function)
  std::map<const FunctionDecl *, std::string> templateCopyBodies; // a template's slot copy body, by its pattern
  std::set<const VarDecl *> slotCopies;                     // file-scope __shared__ variables given per-slot copies
  std::vector<std::pair<unsigned, std::string>> cloneTexts; // (offset, text) of the slot copies
};

} // namespace

bool prepareFusionFile(CompilerInstance &ci, ASTContext &ctx, const Inventory &inventory,
                       const std::vector<FusionKernelRequest> &requests, FusionFile &out) {
  FusionFileRewriter r(ci, ctx, inventory);
  return r.run(requests, out);
}

} // namespace ptb

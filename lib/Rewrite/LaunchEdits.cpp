#include "LaunchEdits.h"

#include "Diagnostics.h"

#include "clang/AST/ExprCXX.h"
#include "clang/Lex/Lexer.h"

#include <optional>

namespace ptb::rewrite {

void LaunchEdits::reportUnselectedKernel(const LaunchSite &s) {
  if (!s.kernel || s.fromDevice) return;
  const FunctionDecl *def = nullptr;
  if (!s.kernel->hasBody(def) || !def) return;
  FileID f = sm.getFileID(sm.getExpansionLoc(def->getLocation()));
  if (cx.selected.contains(f)) return;
  std::string where = sm.isInSystemHeader(def->getLocation()) ? "a system header" : "'" + cx.nameOf(cx.canon(f)) + "'";
  report(cx.diags, s.expr->getBeginLoc(), cx.opts.strict ? DiagnosticsEngine::Error : DiagnosticsEngine::Warning,
         "launch of '" + def->getQualifiedNameAsString() +
             "' stays a plain launch, not confined by the PTB "
             "runtime: the kernel is defined in " +
             where + ", which " + cx.selected.filter().describe() + " does not select");
}

SourceLocation LaunchEdits::mainSpelling(SourceLocation l) const {
  if (l.isInvalid()) return l;
  SourceLocation s = sm.getSpellingLoc(l);
  return sm.getFileID(s) == launchFile && cx.selected.contains(launchFile) ? s : SourceLocation();
}

bool LaunchEdits::rewriteLaunch(const Kernel &k, const LaunchSite &s) {
  auto level = cx.opts.strict ? DiagnosticsEngine::Error : DiagnosticsEngine::Warning;
  SourceLocation at = s.expr->getBeginLoc();
  if (s.fromDevice) return false; // a device-side launch belongs to a kernel that is left as it is
  launchFile = sm.getFileID(sm.getSpellingLoc(at));
  if (s.inMacroBody) {
    report(cx.diags, at, level,
           "launch of '" + k.qualifiedName + "' is written inside the definition of macro '" + s.macro +
               "' and is not rewritten: it still launches the original kernel");
    return false;
  }
  if (s.form == LaunchSite::Form::TripleChevron) {
    auto *call = cast<CUDAKernelCallExpr>(s.expr);
    const Expr *callee = call->getCallee()->IgnoreParenImpCasts();
    SourceLocation nameLoc;
    if (auto *dre = dyn_cast<DeclRefExpr>(callee))
      nameLoc = dre->getLocation();
    else if (auto *ule = dyn_cast<UnresolvedLookupExpr>(callee))
      nameLoc = ule->getNameLoc();
    const CallExpr *config = call->getConfig();
    SourceLocation name = mainSpelling(nameLoc), lll = mainSpelling(config->getBeginLoc()),
                   ggg = mainSpelling(config->getRParenLoc());
    std::optional<Token> lparen;
    if (ggg.isValid()) lparen = Lexer::findNextToken(ggg, sm, lo);
    if (name.isInvalid() || lll.isInvalid() || ggg.isValid() == false || !lparen || !lparen->is(tok::l_paren)) {
      report(cx.diags, at, level,
             "launch of '" + k.qualifiedName + "' could not be located in the source text and is not rewritten");
      return false;
    }
    // A macro that expands its argument twice yields two launches with the same text: edit it once.
    if (!rewrittenLaunchText.insert({cx.canon(launchFile).getHashValue(), offsetOf(name)}).second) return false;
    unsigned written = 0;
    for (const Expr *a : call->arguments())
      if (!isa<CXXDefaultArgExpr>(a)) ++written;
    cx.addEdit(launchFile, offsetOf(name), Lexer::MeasureTokenLength(name, sm, lo),
               k.decl->getNameAsString() + "__ptb_launch");
    cx.addEdit(launchFile, offsetOf(lll), 3, "(::ptb::LaunchConfig(");
    unsigned gggOff = offsetOf(ggg);
    cx.addEdit(launchFile, gggOff, offsetOf(lparen->getLocation()) + 1 - gggOff, written ? "), " : ")");
    return true;
  }
  if (s.form == LaunchSite::Form::CudaLaunchKernel) {
    auto *call = cast<CallExpr>(s.expr);
    const Expr *callee = call->getCallee()->IgnoreParenImpCasts();
    const Expr *arg0 = call->getArg(0);
    const Expr *kref = arg0->IgnoreParenCasts();
    if (auto *uo = dyn_cast<UnaryOperator>(kref); uo && uo->getOpcode() == UO_AddrOf)
      kref = uo->getSubExpr()->IgnoreParenCasts();
    auto *dre = dyn_cast<DeclRefExpr>(kref);
    SourceLocation cb = mainSpelling(callee->getBeginLoc()), ce = mainSpelling(callee->getEndLoc());
    SourceLocation ab = mainSpelling(arg0->getBeginLoc()), ae = mainSpelling(arg0->getEndLoc());
    if (!dre || cb.isInvalid() || ce.isInvalid() || ab.isInvalid() || ae.isInvalid()) {
      report(cx.diags, at, level,
             "cudaLaunchKernel of '" + k.qualifiedName +
                 "' could not be located in the source text and is not rewritten");
      return false;
    }
    if (!rewrittenLaunchText.insert({cx.canon(launchFile).getHashValue(), offsetOf(cb)}).second) return false;
    std::string kernelText =
        tokenRangeText(SourceRange(mainSpelling(dre->getBeginLoc()), mainSpelling(dre->getEndLoc())));
    SourceLocation nameLoc = mainSpelling(dre->getLocation());
    unsigned nameInText = offsetOf(nameLoc) - offsetOf(mainSpelling(dre->getBeginLoc()));
    std::string twinText = kernelText;
    // Twins apart, a template kernel: its launch struct's launch_args stands for the twin.
    const bool templateStruct = twinsApart.templateApart.count(k.decl) != 0,
               staticApartTwin = twinsApart.staticApart.count(k.decl) != 0;
    twinText.replace(nameInText, Lexer::MeasureTokenLength(nameLoc, sm, lo),
                     k.decl->getNameAsString() + (templateStruct ? "__ptb_twin"
                                                  : staticApartTwin
                                                      ? "__ptb_apart_args_" + twinsApart.staticApart.at(k.decl)
                                                      : "__ptb"));
    if (templateStruct) twinText += "::launch_args";
    cx.addEdit(launchFile, offsetOf(cb), offsetOf(afterToken(ce)) - offsetOf(cb),
               templateStruct || staticApartTwin ? "::ptb::launch_kernel_args_apart" : "::ptb::launch_kernel_args");
    cx.addEdit(launchFile, offsetOf(ab), offsetOf(afterToken(ae)) - offsetOf(ab), kernelText + ", " + twinText);
    // cudaLaunchKernel's C++ overload defaults shared memory and stream; the runtime call takes all six.
    unsigned written = 0;
    for (const Expr *a : call->arguments())
      if (!isa<CXXDefaultArgExpr>(a)) ++written;
    SourceLocation rparen = mainSpelling(call->getRParenLoc());
    if (written < 6 && rparen.isValid()) cx.addEdit(launchFile, offsetOf(rparen), 0, written == 4 ? ", 0, 0" : ", 0");
    return true;
  }
  report(cx.diags, at, level,
         s.formName + " launch of '" + k.qualifiedName + "' is not rewritten: it still launches the original kernel");
  return false;
}

} // namespace ptb::rewrite

#include "CloneEdits.h"
#include "PtbCloneName.h"

#include "clang/AST/DeclCXX.h"
#include "clang/Lex/Lexer.h"

#include <optional>

namespace ptb::rewrite {

void CloneEdits::cloneCallee(const FunctionDecl *fd, const Kernel &k) {
  if (!cloned.insert(fd).second) return;
  if (auto *md = dyn_cast<CXXMethodDecl>(fd)) return cloneMember(md);
  std::string name = ptbCloneName(fd);
  std::string leading = "const uint3 blockIdx, const dim3 gridDim";
  SourceLocation end = afterBody(fd);
  FileID f = sm.getFileID(end);
  const FunctionDecl *first = fd->getFirstDecl();
  SourceLocation firstLoc = sm.getExpansionLoc(first->getLocation());
  // A declaration before the definition, in a file that is written: the clone is declared there too.
  bool priorInMain = first != fd && cx.selected.containsLoc(firstLoc) &&
                     (cx.canon(sm.getFileID(firstLoc)) != cx.canon(f) || offsetOf(firstLoc) < offsetOf(end));
  // An explicit specialization's first declaration is the primary template's unless the specialization
  // itself was declared before; its clone keeps the explicit template arguments (`idx<float>`).
  bool explicitSpec = fd->getTemplateSpecializationKind() == TSK_ExplicitSpecialization;
  if (explicitSpec && first->getTemplateSpecializationKind() != TSK_ExplicitSpecialization) priorInMain = false;
  if (explicitSpec && fd->getFunctionTypeLoc())
    name += textBetween(afterToken(sm.getExpansionLoc(fd->getLocation())),
                        sm.getExpansionLoc(fd->getFunctionTypeLoc().getLParenLoc()));
  std::string clone = cx.headBeforeUnqualifiedName(fd) + name + "(" +
                      joinNonEmpty(leading, paramList(fd, !priorInMain)) + ")" + headAfterParams(fd);
  std::string body = twinsApart.guardedClone(fd, copiedBody(fd, f), false);
  const EditContext::NamespaceWrap wrap = cx.namespaceWrap(fd);
  std::string text = "\n// PTB clone of " + fd->getQualifiedNameAsString() +
                     ": blockIdx/gridDim are the virtual block's (docs/generated-code.md).\n" + wrap.open + clone +
                     "\n" + body + "\n" + wrap.close;
  if (cx.selected.contains(f)) {
    insertAt(f, end, text);
    ++cx.stats[cx.canon(f)].clones;
  } else {
    // Defined in a header that is not transformed: the clone goes before the kernel that needs it.
    SourceLocation at = declStart(k.decl);
    FileID kf = sm.getFileID(at);
    insertAt(kf, at, text);
    ++cx.stats[cx.canon(kf)].clones;
  }
  if (priorInMain)
    declareAfter(first, fd,
                 cx.headBeforeUnqualifiedName(fd).substr(templateHeader(fd).size()) + name + "(" +
                     joinNonEmpty(leading, paramList(fd, true)) + ");");
}

void CloneEdits::cloneMember(const CXXMethodDecl *md) {
  const bool ctor = isa<CXXConstructorDecl>(md);
  const std::string leading =
      std::string(ctor ? "::ptb::VirtualBlock, " : "") + "const uint3 blockIdx, const dim3 gridDim";
  auto nameOf = [&](const FunctionDecl *d) {
    return ctor ? textBetween(sm.getExpansionLoc(d->getLocation()),
                              sm.getExpansionLoc(d->getFunctionTypeLoc().getLParenLoc()))
                : ptbCloneName(d);
  };
  SourceLocation bodyBegin = sm.getExpansionLoc(md->getBody()->getBeginLoc());
  SourceLocation end = afterBody(md);
  FileID f = sm.getFileID(end);
  const bool outOfLine = md->isOutOfLine();
  std::string clone =
      headBeforeName(md) + nameOf(md) + "(" + joinNonEmpty(leading, paramList(md, !outOfLine)) + ")" +
      redirects.textWithRedirects(afterToken(sm.getExpansionLoc(md->getFunctionTypeLoc().getRParenLoc())), bodyBegin);
  insertAt(f, end,
           "\n// PTB clone of " + md->getQualifiedNameAsString() +
               ": blockIdx/gridDim are the virtual block's (docs/generated-code.md).\n" +
               twinsApart.guardedClone(md, clone + "\n" + copiedBody(md, f), true) + "\n");
  ++cx.stats[cx.canon(f)].clones;
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
  cx.addEdit(df, offsetOf(semi->getEndLoc()), 0,
             "\n" + headBeforeName(decl) + nameOf(decl) + "(" + joinNonEmpty(leading, paramList(decl, true)) + ")" +
                 textBetween(afterToken(rparen), semi->getLocation()) + ";\n" +
                 lineDirective(df, lineOf(semi->getLocation())));
}

} // namespace ptb::rewrite

#include "EditContext.h"

#include "clang/Lex/Lexer.h"

namespace ptb::rewrite {

void EditContext::addEdit(FileID f, unsigned offset, unsigned length, std::string text, bool first) {
  edits.push_back({canon(f), offset, length, std::move(text), first ? 0 : ++editCount});
}

FileID EditContext::canon(FileID f) const {
  if (f == mainFile || f.isInvalid()) return f;
  auto fe = sm.getFileEntryRefForID(f);
  if (!fe) return f;
  FileID first = sm.translateFile(&fe->getFileEntry());
  return first.isValid() ? first : f;
}

std::string EditContext::nameOf(FileID f) const {
  if (f == mainFile) return inv.mainFile;
  auto fe = sm.getFileEntryRefForID(f);
  return fe ? fe->getName().str() : "";
}

std::string EditContext::destinationOf(FileID f) const {
  if (f == mainFile) return mainOutputPath(opts.layout, inv.mainFile);
  return includedOutputPath(opts.layout, inv.mainFile, nameOf(f));
}

void EditContext::declareAfterFirstDeclaration(const FunctionDecl *first, const std::string &declaration) {
  auto semi = Lexer::findNextToken(sm.getExpansionLoc(first->getEndLoc()), sm, lo);
  if (!semi || !semi->is(tok::semi)) return;
  FileID f = sm.getFileID(semi->getLocation());
  addEdit(f, offsetOf(semi->getEndLoc()), 0, "\n" + declaration + "\n" + lineDirective(f, lineOf(semi->getLocation())));
}

EditContext::NamespaceWrap EditContext::namespaceWrap(const FunctionDecl *fd) {
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

std::string EditContext::headBeforeUnqualifiedName(const FunctionDecl *fd) const {
  if (NestedNameSpecifierLoc q = fd->getQualifierLoc())
    return textBetween(declStart(fd), sm.getExpansionLoc(q.getBeginLoc()));
  return headBeforeName(fd);
}

} // namespace ptb::rewrite

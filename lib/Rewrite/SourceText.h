// Text and locations of the declarations the rewrites copy: the pieces of a function's declaration as
// written (template header, parameters, the text around the name), #line directives back to the
// original. Shared by the PTB rewrite and the fuser.
#pragma once

#include "clang/AST/Decl.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/StringExtras.h"

#include <string>

namespace ptb {

std::string quoteForLineDirective(llvm::StringRef path);

class SourceText {
public:
  SourceText(clang::SourceManager &sm, const clang::LangOptions &lo, std::string mainFileName)
      : sm(sm), lo(lo), mainFile(sm.getMainFileID()), mainFileName(std::move(mainFileName)) {}

  unsigned offsetOf(clang::SourceLocation l) const { return sm.getFileOffset(l); }

  std::string textBetween(clang::SourceLocation b, clang::SourceLocation e) const { // [b, e)
    return sm.getBufferData(sm.getFileID(b)).substr(offsetOf(b), offsetOf(e) - offsetOf(b)).str();
  }

  clang::SourceLocation afterToken(clang::SourceLocation l) const {
    return clang::Lexer::getLocForEndOfToken(l, 0, sm, lo);
  }

  std::string tokenRangeText(clang::SourceRange r) const {
    return clang::Lexer::getSourceText(clang::CharSourceRange::getTokenRange(r), sm, lo).str();
  }

  std::string lineDirective(clang::FileID f, unsigned line) const {
    std::string name;
    if (f == mainFile)
      name = mainFileName;
    else if (auto fe = sm.getFileEntryRefForID(f))
      name = fe->getName().str();
    return "#line " + std::to_string(line) + " \"" + quoteForLineDirective(name) + "\"\n";
  }

  unsigned lineOf(clang::SourceLocation l) const { return sm.getSpellingLineNumber(l); }

  // Where a declaration's text starts: its template header, or its first specifier/attribute.
  clang::SourceLocation declStart(const clang::FunctionDecl *fd) const {
    if (auto *t = fd->getDescribedFunctionTemplate()) return sm.getExpansionLoc(t->getBeginLoc());
    return sm.getExpansionLoc(fd->getBeginLoc());
  }

  std::string templateHeader(const clang::FunctionDecl *fd) const {
    auto *t = fd->getDescribedFunctionTemplate();
    if (!t) return "";
    clang::SourceLocation r = sm.getExpansionLoc(t->getTemplateParameters()->getRAngleLoc());
    return textBetween(declStart(fd), afterToken(r));
  }

  std::string templateArgsForward(const clang::FunctionDecl *fd) const {
    auto *t = fd->getDescribedFunctionTemplate();
    if (!t) return "";
    std::vector<std::string> names;
    for (const clang::NamedDecl *p : *t->getTemplateParameters())
      names.push_back(p->getNameAsString() + (p->isParameterPack() ? "..." : ""));
    return "<" + llvm::join(names, ", ") + ">";
  }

  std::string paramName(const clang::ParmVarDecl *p, unsigned i) const {
    return p->getName().empty() ? "ptb_param" + std::to_string(i) : p->getNameAsString();
  }

  // A parameter's declaration text; with `defaultArg` the default from any redeclaration is added.
  // `__grid_constant__` is only allowed on a kernel's parameters: it is kept for the twin alone.
  std::string paramText(const clang::FunctionDecl *fd, unsigned i, bool defaultArg, bool forKernel = false) const {
    const clang::ParmVarDecl *p = fd->getParamDecl(i);
    clang::SourceLocation b = sm.getExpansionLoc(p->getBeginLoc());
    clang::SourceLocation e;
    if (p->hasDefaultArg() || p->hasUninstantiatedDefaultArg() || p->hasUnparsedDefaultArg())
      e = p->getName().empty() ? sm.getExpansionLoc(p->getTypeSpecEndLoc()) : sm.getExpansionLoc(p->getLocation());
    else
      e = sm.getExpansionLoc(p->getEndLoc());
    std::string text = textBetween(b, afterToken(e));
    if (!forKernel)
      for (size_t at; (at = text.find("__grid_constant__")) != std::string::npos;) text.erase(at, 17);
    if (p->getName().empty()) text += " " + paramName(p, i);
    if (defaultArg) {
      for (const clang::FunctionDecl *r : fd->redecls()) {
        const clang::ParmVarDecl *rp = r->getParamDecl(i);
        if (rp->hasDefaultArg() || rp->hasUninstantiatedDefaultArg()) {
          text += " = " + tokenRangeText(rp->getDefaultArgRange());
          break;
        }
      }
    }
    return text;
  }

  std::string paramList(const clang::FunctionDecl *fd, bool defaults, bool forKernel = false) const {
    std::vector<std::string> ps;
    for (unsigned i = 0; i < fd->getNumParams(); ++i) ps.push_back(paramText(fd, i, defaults, forKernel));
    return llvm::join(ps, ", ");
  }

  std::string argForward(const clang::FunctionDecl *fd) const {
    std::vector<std::string> as;
    for (unsigned i = 0; i < fd->getNumParams(); ++i) {
      const clang::ParmVarDecl *p = fd->getParamDecl(i);
      as.push_back(paramName(p, i) + (p->isParameterPack() ? "..." : ""));
    }
    return llvm::join(as, ", ");
  }

  static std::string joinNonEmpty(const std::string &a, const std::string &b) {
    if (a.empty()) return b;
    if (b.empty()) return a;
    return a + ", " + b;
  }

  // The function's text from its start to its name, e.g. "template <class T> __global__ void ".
  std::string headBeforeName(const clang::FunctionDecl *fd) const {
    return textBetween(declStart(fd), sm.getExpansionLoc(fd->getLocation()));
  }

  // Text between the parameter list's ')' and the body's '{' (trailing return types, attributes).
  std::string headAfterParams(const clang::FunctionDecl *fd) const {
    clang::FunctionTypeLoc ftl = fd->getFunctionTypeLoc();
    clang::SourceLocation r = sm.getExpansionLoc(ftl.getRParenLoc());
    return textBetween(afterToken(r), sm.getExpansionLoc(fd->getBody()->getBeginLoc()));
  }

protected:
  clang::SourceManager &sm;
  const clang::LangOptions &lo;
  clang::FileID mainFile;
  std::string mainFileName; // the main file's path as given to the tool (in #line directives)
};

} // namespace ptb

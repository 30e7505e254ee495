#include "CallCloneEdits.h"

#include "PtbCloneName.h"

namespace ptb::rewrite {

using namespace clang;

std::vector<CallEdit> callCloneEdits(const CloneCallSite &s, const SourceManager &sm) {
  using Form = CloneCallSite::Form;
  using Kind = CallEdit::Kind;
  std::vector<CallEdit> out;
  auto edit = [&](Kind kind, SourceLocation at, unsigned length, std::string text) {
    out.push_back({kind, at, length, std::move(text), s.extent});
  };
  auto between = [&](SourceLocation b, SourceLocation e) { return sm.getFileOffset(e) - sm.getFileOffset(b); };
  const std::string name = ptbCloneName(s.callee), vi = "blockIdx, gridDim";
  const std::string args = s.args ? ", " : "";
  // An operator as a call: a member's clone is called on the first operand, a free one takes it first.
  const std::string open = s.member ? "(" : name + "(" + vi + ", ";
  const std::string onFirst = ")." + name + "(" + vi;
  switch (s.form) {
  case Form::Named:
    edit(Kind::Replace, s.name, s.nameLength, name);
    edit(Kind::Open, s.open.getLocWithOffset(1), 0, vi + args);
    break;
  case Form::CallOperator:
  case Form::SubscriptOperator:
    edit(Kind::Replace, s.open, 1, "." + name + "(" + vi + args);
    if (s.form == Form::SubscriptOperator) edit(Kind::Replace, s.op, 1, ")");
    break;
  case Form::BinaryOperator:
    edit(Kind::Open, s.begin, 0, open);
    edit(Kind::Replace, s.firstEnd, between(s.firstEnd, s.second), s.member ? onFirst + ", " : std::string(", "));
    edit(Kind::Close, s.end, 0, ")");
    break;
  case Form::PostfixOperator:
    edit(Kind::Open, s.begin, 0, open);
    edit(Kind::Replace, s.firstEnd, between(s.firstEnd, s.end), s.member ? onFirst + ", 0)" : std::string(", 0)"));
    break;
  case Form::PrefixOperator:
    edit(Kind::Replace, s.op, between(s.op, s.begin), open);
    edit(Kind::Close, s.firstEnd, 0, s.member ? onFirst + ")" : std::string(")"));
    break;
  case Form::Construct: edit(Kind::Open, s.open.getLocWithOffset(1), 0, "::ptb::VirtualBlock{}, " + vi + args); break;
  case Form::DefaultConstruct: edit(Kind::Open, s.end, 0, "(::ptb::VirtualBlock{}, " + vi + ")"); break;
  }
  return out;
}

} // namespace ptb::rewrite

#include "TunerOutput.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>

namespace ptb {

namespace {
llvm::Error failure(const std::string &message) {
  return llvm::make_error<llvm::StringError>(message, llvm::inconvertibleErrorCode());
}
} // namespace

llvm::Expected<std::string> winnerFromHarnessOutput(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef, 64> lines;
  text.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    line = line.trim();
    if (!line.consume_front("winner ")) continue;
    llvm::StringRef label = line.trim().split(' ').first;
    if (label == "none")
      return failure("the harness found no ratio faster than running the kernels one after the other (winner none)");
    std::vector<unsigned> slots, budgets;
    unsigned m = 1;
    if (!parseCandidateLabel(label, slots, m, budgets))
      return failure("the harness's winner line names '" + label.str() + "', not a ratio");
    return label.str();
  }
  return failure("no 'winner <ratio>' line in the harness output");
}

llvm::Error ratioFromHarnessOutput(llvm::StringRef text, std::vector<unsigned> &out, unsigned *minBlocks,
                                   std::vector<unsigned> *budgets) {
  llvm::Expected<std::string> label = winnerFromHarnessOutput(text);
  if (!label) return label.takeError();
  unsigned m = 1;
  std::vector<unsigned> b;
  parseCandidateLabel(*label, out, m, b);
  if ((m != 1 && !minBlocks) || (!b.empty() && !budgets))
    return failure("the harness's winner line names '" + *label + "', not a ratio");
  if (minBlocks) *minBlocks = m;
  if (budgets) *budgets = b;
  return llvm::Error::success();
}

namespace {
// A word of a line and its 1-based column.
struct Word {
  llvm::StringRef text;
  unsigned column;
};
std::vector<Word> splitWords(llvm::StringRef line, size_t from, size_t to) {
  std::vector<Word> words;
  size_t i = from;
  while (i < to) {
    while (i < to && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t j = i;
    while (j < to && line[j] != ' ' && line[j] != '\t') ++j;
    if (j > i) words.push_back({line.slice(i, j), static_cast<unsigned>(i + 1)});
    i = j;
  }
  return words;
}
} // namespace

bool decisionsFromHarnessOutput(llvm::StringRef text, const std::string &file, const std::vector<std::string> &kernels,
                                std::vector<FusionDecision> &out, Diagnostic &error) {
  const std::string pair = llvm::join(kernels, "+");
  std::vector<std::string> others; // the kernels of the decide lines skipped
  std::vector<FusionDecision> found;
  llvm::SmallVector<llvm::StringRef, 64> lines;
  text.split(lines, '\n');
  auto fail = [&](unsigned line, unsigned column, const std::string &message) {
    error = {clang::DiagnosticsEngine::Error, file, line, column, message};
    return false;
  };
  for (size_t n = 0; n < lines.size(); ++n) {
    const unsigned lineNo = static_cast<unsigned>(n + 1);
    llvm::StringRef line = lines[n];
    if (line.ends_with("\r")) line = line.drop_back();
    std::vector<Word> head = splitWords(line, 0, line.size());
    if (head.empty() || head[0].text != "decide") continue;
    if (head.size() < 2)
      return fail(lineNo, static_cast<unsigned>(line.size() + 1), "expected the kernels (" + pair + ") after 'decide'");
    if (head[1].text != pair) {
      if (std::find(others.begin(), others.end(), head[1].text.str()) == others.end())
        others.push_back(head[1].text.str());
      continue;
    }
    // decide <pair> [scale <s>] tasks <t>...: <choice> [<ratio>] [(<measured>)]
    const size_t pairEnd = head[1].column - 1 + head[1].text.size();
    const size_t colon = line.find(':', pairEnd);
    std::vector<Word> w = splitWords(line, pairEnd, colon == llvm::StringRef::npos ? line.size() : colon);
    size_t i = 0;
    if (i < w.size() && w[i].text == "scale") {
      if (i + 1 >= w.size()) return fail(lineNo, w[i].column, "expected a scale after 'scale'");
      i += 2;
    }
    const unsigned tasksColumn = i < w.size() ? w[i].column : static_cast<unsigned>(pairEnd + 2);
    if (i >= w.size() || w[i].text != "tasks")
      return fail(lineNo, tasksColumn, "expected 'tasks' and the task count of each kernel (" + pair + ")");
    ++i;
    FusionDecision d;
    d.line = lineNo;
    for (; i < w.size(); ++i) {
      unsigned long long t = 0;
      if (w[i].text.getAsInteger(10, t) || t == 0)
        return fail(lineNo, w[i].column, "task count '" + w[i].text.str() + "' is not a positive integer");
      d.tasks.push_back(t);
    }
    if (d.tasks.size() != kernels.size())
      return fail(lineNo, tasksColumn,
                  "expected " + std::to_string(kernels.size()) + " task counts (one per kernel of " + pair + "), not " +
                      std::to_string(d.tasks.size()));
    if (colon == llvm::StringRef::npos)
      return fail(lineNo, static_cast<unsigned>(line.size() + 1),
                  "expected ':' and the decision (fused <ratio>, sequential or streams) after the task counts");
    std::vector<Word> body = splitWords(line, colon + 1, line.size());
    if (body.empty())
      return fail(lineNo, static_cast<unsigned>(line.size() + 1),
                  "expected the decision (fused <ratio>, sequential or streams) after ':'");
    size_t rest = body[0].column - 1 + body[0].text.size();
    d.column = body[0].column;
    if (body[0].text == "sequential" || body[0].text == "streams") {
      d.choice = body[0].text == "streams" ? FusionDecision::Choice::streams : FusionDecision::Choice::sequential;
      d.label = body[0].text.str();
    } else if (body[0].text == "fused") {
      if (body.size() < 2)
        return fail(lineNo, static_cast<unsigned>(rest + 1),
                    "expected the fused candidate's ratio (like 2:1 or 2:1/2) after 'fused'");
      d.choice = FusionDecision::Choice::fused;
      d.column = body[1].column;
      if (!parseCandidateLabel(body[1].text, d.slots, d.minBlocks, d.budgets) || d.slots.size() != kernels.size())
        return fail(lineNo, d.column,
                    "'" + body[1].text.str() + "' is not a ratio of " + std::to_string(kernels.size()) +
                        " kernels (like 2:1, or 2:1/2 with blocks per SM)");
      d.label = body[1].text.str();
      rest = body[1].column - 1 + body[1].text.size();
    } else {
      return fail(lineNo, body[0].column,
                  "expected fused <ratio>, sequential or streams, not '" + body[0].text.str() + "'");
    }
    // The rest goes into a // comment: no control characters, no line splice at its end.
    std::string measured;
    for (char c : line.substr(rest).trim()) measured += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? ' ' : c;
    while (!measured.empty() && (measured.back() == '\\' || measured.back() == ' ')) measured.pop_back();
    d.measured = measured;
    for (const FusionDecision &e : found)
      if (e.tasks == d.tasks)
        return fail(lineNo, tasksColumn,
                    "a second decision for the same task counts (the first is at line " + std::to_string(e.line) + ")");
    found.push_back(std::move(d));
  }
  if (found.empty()) {
    std::string message = "no 'decide " + pair + " ... tasks ...: <decision>' line in the file";
    if (!others.empty()) message += " (it has decisions for " + llvm::join(others, ", ") + ")";
    error = {clang::DiagnosticsEngine::Error, file, 0, 0, message};
    return false;
  }
  out = std::move(found);
  return true;
}

} // namespace ptb

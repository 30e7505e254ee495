#include "NvccCommandLine.h"
#include "NvccOptions.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/ADT/StringSet.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/StringSaver.h>

#include <algorithm>

namespace ptbnvcc {
namespace {

using llvm::StringRef;

bool in(llvm::ArrayRef<StringRef> list, StringRef s) { return std::find(list.begin(), list.end(), s) != list.end(); }

// An option word: its name and its value, whether written `-opt value`, `-opt=value` or glued (`-Idir`,
// `-DX`, only for the one-letter options nvcc glues). `consumed` is how many words it took.
struct Option {
  StringRef name;
  std::string value; // an option that takes a value: it ("" when the command line ends first)
  size_t consumed = 1;
};

Option readOption(const std::vector<std::string> &args, size_t i) {
  StringRef a = args[i];
  Option o;
  auto eq = a.find('=');
  StringRef head = eq == StringRef::npos ? a : a.take_front(eq);
  if (const ptb::NvccOption *row = ptb::findNvccOption(head); row && row->takesValue) {
    o.name = head;
    if (eq != StringRef::npos) {
      o.value = a.drop_front(eq + 1).str();
    } else if (i + 1 < args.size()) {
      o.value = args[i + 1];
      o.consumed = 2;
    } // else the command line ends first: no value ("" ), which nvcc will complain of (not ours to)
    return o;
  }
  // Glued one-letter forms nvcc accepts: -Idir -DX -UX -Ldir -lfoo -O3 (and -isystem/-include are never glued).
  for (StringRef p : {"-I", "-D", "-U", "-L", "-l", "-O"})
    if (a.starts_with(p) && a.size() > p.size()) {
      o.name = p;
      o.value = a.drop_front(p.size()).str();
      return o;
    }
  o.name = head;
  return o;
}

// nvcc splits list-valued options (-I a,b; -DX=1,Y=2) at commas outside double quotes.
std::vector<std::string> splitList(StringRef v) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (char ch : v) {
    if (ch == '"') quoted = !quoted;
    if (ch == ',' && !quoted) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
      continue;
    }
    cur += ch;
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

InputKind kindOf(StringRef path, StringRef language) {
  StringRef ext = llvm::sys::path::extension(path);
  bool source = ext == ".cu" || ext == ".c" || ext == ".cc" || ext == ".cpp" || ext == ".cxx" || ext == ".C" ||
                ext == ".c++" || ext == ".cp";
  if (source && language == "cu") return InputKind::CudaSource;
  if (source && (language == "c" || language == "c++")) return InputKind::HostSource;
  if (ext == ".cu") return InputKind::CudaSource;
  if (source) return InputKind::HostSource;
  if (ext == ".i" || ext == ".ii") return InputKind::Preprocessed;
  if (ext == ".ptx" || ext == ".cubin" || ext == ".fatbin" || ext == ".gpu" || ext == ".ltoir" || ext == ".optixir")
    return InputKind::DeviceCode;
  if (ext == ".o" || ext == ".obj" || ext == ".a" || ext == ".lib" || ext == ".so" || ext == ".res")
    return InputKind::Object;
  return InputKind::Other;
}

} // namespace

bool compilesOwnModule(const std::vector<std::string> &args, const Classification &c) {
  if (c.action != Action::Transform || (c.phase != "-c" && c.phase != "--compile") || !c.outputDir.empty())
    return false;
  for (size_t i = 0; i < args.size();) {
    Option o = readOption(args, i);
    StringRef n = o.name;
    if ((n == "-rdc" || n == "--relocatable-device-code") && StringRef(o.value).lower() != "false") return false;
    i += o.consumed;
  }
  return true;
}

std::vector<std::string> replaceInput(const std::vector<std::string> &args, size_t inputIndex,
                                      const std::string &newInput, const std::vector<std::string> &drop) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size();) {
    if (i == inputIndex) {
      out.push_back(newInput);
      ++i;
      continue;
    }
    Option o = readOption(args, i);
    bool dropped = std::find(drop.begin(), drop.end(), o.name.str()) != drop.end();
    if (!dropped)
      for (size_t k = 0; k < o.consumed; ++k) out.push_back(args[i + k]);
    i += o.consumed;
  }
  return out;
}

std::vector<std::string> twinsPartArguments(const std::vector<std::string> &args, size_t inputIndex,
                                            const std::string &twinsSource, const std::string &object) {
  std::vector<std::string> out =
      replaceInput(args, inputIndex, twinsSource,
                   {"-o", "--output-file", "-MF", "--dependency-output", "-MT", "--dependency-target-name", "-MD",
                    "-MMD", "--generate-dependencies-with-compile", "--generate-nonsystem-dependencies-with-compile"});
  out.push_back("-o");
  out.push_back(object);
  return out;
}

Classification classify(const std::vector<std::string> &args) {
  Classification c;
  // Modes in which nothing is compiled, or in which the output is meant to be the original's.
  std::string passMode;
  std::vector<std::pair<size_t, std::string>> words; // candidate inputs
  for (size_t i = 0; i < args.size();) {
    StringRef a = args[i];
    if (a.size() < 2 || a[0] != '-') {
      words.emplace_back(i, a.str());
      ++i;
      continue;
    }
    Option o = readOption(args, i);
    StringRef n = o.name;
    if (n == "-o" || n == "--output-file")
      c.outputFile = o.value;
    else if (n == "-odir" || n == "--output-directory")
      c.outputDir = o.value;
    else if (n == "-MF" || n == "--dependency-output")
      c.depFile = o.value;
    else if (n == "-MT" || n == "--dependency-target-name")
      c.depTarget = o.value;
    else if (n == "-x" || n == "--x")
      c.language = o.value == "none" ? "" : o.value;
    else if (n == "-MD" || n == "-MMD" || n == "--generate-dependencies-with-compile" ||
             n == "--generate-nonsystem-dependencies-with-compile")
      c.depWithCompile = true;
    else if (n == "-E" || n == "--preprocess")
      passMode = "-E: preprocessing only, nothing is compiled";
    else if (n == "-M" || n == "-MM" || n == "--generate-dependencies" || n == "--generate-nonsystem-dependencies")
      passMode = "-M/-MM: dependencies only; the original's are the ones wanted";
    else if (n == "--version" || n == "-V" || n == "--help" || n == "-h" || n == "--list-gpu-code" || n == "-code-ls" ||
             n == "--list-gpu-arch" || n == "-arch-ls")
      passMode = "an information query";
    else if (n == "--dryrun" || n == "-dryrun")
      passMode = "--dryrun: nothing is run";
    else if (in({"-c",        "--compile",  "-dc",           "--device-c", "-dw",      "--device-w", "-ptx",
                 "--ptx",     "-cubin",     "--cubin",       "-fatbin",    "--fatbin", "-cuda",      "--cuda",
                 "-optix-ir", "--optix-ir", "-ltoir",        "--ltoir",    "-lib",     "--lib",      "-link",
                 "--link",    "-dlink",     "--device-link", "-run",       "--run"},
                n))
      c.phase = n.str();
    i += o.consumed;
  }
  for (auto &[index, path] : words) {
    Input in;
    in.index = index;
    in.path = path;
    in.kind = kindOf(path, c.language);
    c.inputs.push_back(in);
  }
  if (!passMode.empty()) {
    c.reason = passMode;
    return c;
  }
  size_t cuda = 0, sources = 0;
  for (auto &in : c.inputs) {
    if (in.kind == InputKind::CudaSource) {
      ++cuda;
      c.cudaInput = in;
    }
    if (in.kind == InputKind::CudaSource || in.kind == InputKind::HostSource || in.kind == InputKind::Preprocessed ||
        in.kind == InputKind::DeviceCode || in.kind == InputKind::Other)
      ++sources;
  }
  if (cuda == 0) {
    c.cudaInput.reset();
    c.reason = c.inputs.empty() ? "no input file" : "no CUDA source among the inputs (a link step, or host code)";
    return c;
  }
  if (c.phase == "-dlink" || c.phase == "--device-link") {
    c.cudaInput.reset();
    c.reason = "a device link step";
    return c;
  }
  if (sources > 1) {
    c.cudaInput.reset();
    c.reason = "several source inputs in one command (ptb-nvcc transforms one translation unit)";
    c.warnUntransformed = true;
    return c;
  }
  c.action = Action::Transform;
  return c;
}

bool expandOptionsFiles(const std::vector<std::string> &args, std::vector<std::string> &out, bool &expanded,
                        std::string &error) {
  expanded = false;
  for (size_t i = 0; i < args.size();) {
    StringRef a = args[i];
    Option o = a.starts_with("-") ? readOption(args, i) : Option{};
    if (o.name == "--options-file" || o.name == "-optf") {
      expanded = true;
      for (const std::string &file : splitList(o.value)) {
        auto buf = llvm::MemoryBuffer::getFile(file);
        if (!buf) {
          error = "cannot read the options file '" + file + "': " + buf.getError().message();
          return false;
        }
        llvm::BumpPtrAllocator alloc;
        llvm::StringSaver saver(alloc);
        llvm::SmallVector<const char *, 32> words;
        llvm::cl::TokenizeGNUCommandLine((*buf)->getBuffer(), saver, words, /*MarkEOLs=*/false);
        std::vector<std::string> inner;
        for (const char *w : words)
          if (w) inner.emplace_back(w);
        std::vector<std::string> innerOut;
        bool innerExpanded = false;
        if (!expandOptionsFiles(inner, innerOut, innerExpanded, error)) return false;
        out.insert(out.end(), innerOut.begin(), innerOut.end());
      }
      i += o.consumed;
      continue;
    }
    out.push_back(args[i]);
    ++i;
  }
  return true;
}

std::string hostParseFlags(const std::string &list) {
  // nvcc splits -Xcompiler's value at every comma.
  llvm::SmallVector<StringRef, 8> items;
  StringRef(list).split(items, ',', -1, /*KeepEmpty=*/false);
  // Flags whose value may come as the next item (-Xcompiler -isystem,/dir).
  static const StringRef withValue[] = {"-I", "-D", "-U", "-isystem", "-iquote", "-idirafter", "-include"};
  static const StringRef prefixes[] = {"-I",         "-D",       "-U",    "-isystem", "-iquote",
                                       "-idirafter", "-include", "-std=", "-fopenmp"};
  static const StringRef exact[] = {"-pthread",     "-fexceptions",    "-fno-exceptions", "-frtti",
                                    "-fno-rtti",    "-fsigned-char",   "-funsigned-char", "-fchar8_t",
                                    "-fno-char8_t", "-fms-extensions", "-fgnu-keywords",  "-fno-gnu-keywords"};
  std::string out;
  auto add = [&](StringRef item) {
    if (!out.empty()) out += ',';
    out += item.str();
  };
  for (size_t i = 0; i < items.size(); ++i) {
    StringRef item = items[i];
    if (in(withValue, item)) {
      add(item);
      if (i + 1 < items.size()) add(items[++i]);
      continue;
    }
    bool keep = in(exact, item);
    for (StringRef p : prefixes)
      if (item.starts_with(p)) keep = true;
    if (keep) add(item);
  }
  return out;
}

std::vector<std::string> parseFlags(const std::vector<std::string> &args) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size();) {
    StringRef a = args[i];
    if (a.size() < 2 || a[0] != '-') {
      ++i;
      continue;
    }
    Option o = readOption(args, i);
    StringRef n = o.name;
    auto list = [&](StringRef flag, bool glued) {
      for (const std::string &v : splitList(o.value)) {
        if (glued)
          out.push_back(flag.str() + v);
        else {
          out.push_back(flag.str());
          out.push_back(v);
        }
      }
    };
    if (n == "-I" || n == "--include-path")
      list("-I", true);
    else if (n == "-isystem" || n == "--system-include")
      list("-isystem", false);
    else if (n == "-D" || n == "--define-macro")
      list("-D", true);
    else if (n == "-U" || n == "--undefine-macro")
      list("-U", true);
    else if (n == "-include" || n == "--pre-include")
      list("-include", false);
    else if (n == "-std" || n == "--std")
      out.push_back("-std=" + o.value);
    else if (n == "-Xcompiler" || n == "--compiler-options") {
      // Host-compiler flags: only those that change what the source means go to the parse (hostParseFlags);
      // ptb-transform's front end unpacks the list. The others (-fno-gnu-unique, -Wall, ...: often GCC's
      // alone, which clang rejects) reach nvcc only.
      std::string kept = hostParseFlags(o.value);
      if (!kept.empty()) {
        out.push_back("-Xcompiler");
        out.push_back(kept);
      }
    } else if ((n == "-x" || n == "--x") && o.value == "cu") {
      out.push_back("-x");
      out.push_back("cu");
    }
    i += o.consumed;
  }
  return out;
}

std::string defaultOutputName(const Classification &c) {
  if (!c.cudaInput) return "";
  StringRef file = llvm::sys::path::filename(c.cudaInput->path);
  StringRef stem = llvm::sys::path::stem(c.cudaInput->path);
  const std::string &p = c.phase;
  std::string name;
  if (p == "-c" || p == "--compile" || p == "-dc" || p == "--device-c" || p == "-dw" || p == "--device-w")
    name = stem.str() + ".o";
  else if (p == "-ptx" || p == "--ptx")
    name = stem.str() + ".ptx";
  else if (p == "-cubin" || p == "--cubin")
    name = stem.str() + ".cubin";
  else if (p == "-fatbin" || p == "--fatbin")
    name = stem.str() + ".fatbin";
  else if (p == "-optix-ir" || p == "--optix-ir")
    name = stem.str() + ".optixir";
  else if (p == "-ltoir" || p == "--ltoir")
    name = stem.str() + ".ltoir";
  else if (p == "-cuda" || p == "--cuda")
    name = file.str() + ".cpp.ii";
  else
    return ""; // linking (a.out), -lib (a.a), -run
  if (c.outputDir.empty()) return name;
  llvm::SmallString<256> path(c.outputDir);
  llvm::sys::path::append(path, name);
  return std::string(path);
}

std::string dependencyFileName(const Classification &c, const std::string &outputFile) {
  if (!c.depFile.empty()) return c.depFile;
  if (!outputFile.empty()) {
    llvm::SmallString<256> path(outputFile);
    llvm::sys::path::replace_extension(path, ".d");
    return std::string(path);
  }
  if (!c.cudaInput) return "";
  std::string name = llvm::sys::path::stem(c.cudaInput->path).str() + ".d";
  if (c.outputDir.empty()) return name;
  llvm::SmallString<256> path(c.outputDir);
  llvm::sys::path::append(path, name);
  return std::string(path);
}

std::string unescapeDepPath(const std::string &s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && (s[i + 1] == ' ' || s[i + 1] == '#' || s[i + 1] == '\\')) {
      out += s[++i];
      continue;
    }
    if (s[i] == '$' && i + 1 < s.size() && s[i + 1] == '$') {
      out += '$';
      ++i;
      continue;
    }
    out += s[i];
  }
  return out;
}

std::string escapeDepPath(const std::string &s) {
  std::string out;
  for (char ch : s) {
    if (ch == ' ' || ch == '#') out += '\\';
    if (ch == '$') out += '$';
    out += ch;
  }
  return out;
}

namespace {

// Under `dir`, lexically (both absolute and without `.`/`..`)?
bool under(StringRef path, StringRef dir, std::string &rel) {
  if (!path.starts_with(dir)) return false;
  StringRef rest = path.drop_front(dir.size());
  if (!rest.empty() && !llvm::sys::path::is_separator(rest.front())) return false;
  rel = rest.ltrim("/").str();
  return true;
}

// The original of a file in the temporary directory, or "" when it is not one of ptb-transform's copies.
std::string mapPath(const std::string &path, const std::string &tempDir, const std::string &tempOutput,
                    const std::string &originalInput, const std::string &inputDir) {
  if (path == tempOutput) return originalInput;
  std::string rel;
  if (!under(path, tempDir, rel)) return "";
  llvm::SmallString<256> clean(path);
  llvm::sys::path::remove_dots(clean, /*remove_dot_dot=*/true);
  std::string cleanRel;
  if (under(clean, tempDir, cleanRel)) {
    if (clean == tempOutput) return originalInput;
    // A header copy: <rel dir>/<stem>.ptb<ext> is <inputDir>/<rel dir>/<stem><ext>.
    llvm::SmallString<256> orig(inputDir);
    llvm::sys::path::append(orig, llvm::sys::path::parent_path(cleanRel));
    StringRef stem = llvm::sys::path::stem(cleanRel);
    if (stem.ends_with(".ptb")) stem = stem.drop_back(4);
    llvm::sys::path::append(orig, stem.str() + llvm::sys::path::extension(cleanRel).str());
    return std::string(orig);
  }
  // Through the temporary directory and out of it again: the lexical path, where it is the same file
  // (checked while the directory exists), else the real one.
  if (llvm::sys::fs::equivalent(path, clean)) return std::string(clean);
  llvm::SmallString<256> real;
  if (!llvm::sys::fs::real_path(path, real)) return std::string(real);
  return std::string(clean);
}

} // namespace

std::string rewriteDependencies(const std::string &text, const std::string &tempDir, const std::string &tempOutput,
                                const std::string &originalInput, const std::string &inputDir) {
  llvm::SmallVector<StringRef, 256> lines;
  StringRef(text).split(lines, '\n');
  llvm::StringSet<> prerequisites, phony;
  std::string out;
  bool inRule = false; // inside the first rule's prerequisite list (continuation lines)
  bool seenRule = false;
  for (size_t li = 0; li < lines.size(); ++li) {
    StringRef line = lines[li];
    bool last = li + 1 == lines.size();
    auto emit = [&](const std::string &s) {
      out += s;
      if (!last) out += '\n';
    };
    // A prerequisite on a line of its own ("    path \"), the first rule ("target : path \"), or a
    // phony target of -MP ("path:").
    std::string prefix, word, suffix;
    StringRef body = line;
    if (body.ends_with(" \\")) {
      suffix = " \\";
      body = body.drop_back(2);
    }
    if (!seenRule && !inRule) {
      auto colon = body.find(" : ");
      if (colon == StringRef::npos) {
        emit(line.str());
        continue;
      }
      seenRule = true;
      prefix = body.take_front(colon + 3).str();
      word = body.drop_front(colon + 3).str();
      inRule = !suffix.empty();
    } else if (inRule) {
      size_t indent = body.size() - body.ltrim(" \t").size();
      prefix = body.take_front(indent).str();
      word = body.drop_front(indent).str();
      inRule = !suffix.empty();
    } else if (body.ends_with(":") && !body.ends_with("\\:")) {
      std::string target = unescapeDepPath(body.drop_back(1).str());
      std::string mapped = mapPath(target, tempDir, tempOutput, originalInput, inputDir);
      std::string name = mapped.empty() ? target : mapped;
      if (!phony.insert(name).second) {
        // The same phony target twice: drop the line and the blank line after it.
        if (li + 1 < lines.size() && lines[li + 1].empty()) ++li;
        continue;
      }
      emit(mapped.empty() ? line.str() : escapeDepPath(mapped) + ":");
      continue;
    } else {
      emit(line.str());
      continue;
    }
    if (word.empty()) {
      emit(line.str());
      continue;
    }
    std::string path = unescapeDepPath(word);
    std::string mapped = mapPath(path, tempDir, tempOutput, originalInput, inputDir);
    std::string name = mapped.empty() ? path : mapped;
    if (!prerequisites.insert(name).second) {
      // Named already. Dropping the last line of the list means ending the one before it.
      if (suffix.empty() && out.size() >= 3 && StringRef(out).ends_with(" \\\n")) {
        out.erase(out.size() - 3);
        out += '\n';
        if (last) out.pop_back();
      }
      continue;
    }
    emit(prefix + (mapped.empty() ? word : escapeDepPath(mapped)) + suffix);
  }
  return out;
}

} // namespace ptbnvcc

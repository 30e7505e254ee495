// --list-kernels output: text for people, JSON for programs (schema in docs/inventory.md).
#include "InventoryFormat.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace ptb {

namespace {

bool eligible(const Kernel &k) { return k.blockers.empty(); }

std::optional<uint64_t> staticSharedBytes(const Kernel &k) {
  uint64_t total = 0;
  for (auto &s : k.shared) {
    if (s.dynamic) continue;
    if (!s.bytes) return std::nullopt;
    total += *s.bytes;
  }
  return total;
}

void writeLocation(llvm::json::OStream &j, const char *key, const Location &l) {
  j.attributeObject(key, [&] {
    j.attribute("file", l.file);
    j.attribute("line", int64_t(l.line));
    j.attribute("column", int64_t(l.column));
  });
}

void writeStrings(llvm::json::OStream &j, const char *key, const std::vector<std::string> &v) {
  j.attributeArray(key, [&] {
    for (auto &s : v) j.value(s);
  });
}

void writeLaunch(llvm::json::OStream &j, const LaunchSite &s) {
  j.object([&] {
    j.attribute("form", s.formName);
    writeLocation(j, "location", s.loc);
    j.attribute("template_args", s.templateArgs);
    j.attribute("in_macro", s.inMacro);
    j.attribute("macro", s.macro);
    j.attribute("in_macro_definition", s.inMacroBody);
    j.attribute("function", s.enclosingFunction);
    j.attribute("from_device_code", s.fromDevice);
  });
}

std::string describeLaunch(const LaunchSite &s) {
  std::string out = s.loc.str() + " " + s.formName;
  if (!s.templateArgs.empty()) out += " <" + s.templateArgs + ">";
  if (s.inMacro)
    out +=
        s.inMacroBody ? " (in the definition of macro " + s.macro + ")" : " (in an argument of macro " + s.macro + ")";
  if (!s.enclosingFunction.empty()) out += " in " + s.enclosingFunction;
  if (s.fromDevice) out += " (device code)";
  return out;
}

} // namespace

std::string formatInventoryJson(const std::vector<Inventory> &inventories) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::json::OStream j(os, 2);
  j.object([&] {
    j.attribute("version", 1);
    j.attributeArray("files", [&] {
      for (const Inventory &inv : inventories) {
        j.object([&] {
          j.attribute("file", inv.mainFile);
          j.attributeArray("kernels", [&] {
            for (const Kernel &k : inv.kernels) {
              j.object([&] {
                j.attribute("name", k.name);
                j.attribute("qualified_name", k.qualifiedName);
                writeLocation(j, "location", k.loc);
                writeStrings(j, "template_parameters", k.templateParams);
                writeStrings(j, "instantiations", k.instantiations);
                j.attributeArray("parameters", [&] {
                  for (auto &p : k.params)
                    j.object([&] {
                      j.attribute("name", p.name);
                      j.attribute("type", p.type);
                      j.attribute("pack", p.pack);
                    });
                });
                j.attributeObject("builtins", [&] {
                  for (BuiltinVar v : kBuiltinVars) {
                    const BuiltinUse &u = k.uses.at(v);
                    j.attributeObject(name(v), [&] {
                      j.attribute("used", u.used());
                      j.attribute("direct", u.direct);
                      j.attributeArray("macros", [&] {
                        for (auto &m : u.macros) j.value(m);
                      });
                      j.attributeArray("call_chains", [&] {
                        for (auto &c : u.callChains)
                          j.array([&] {
                            for (auto &f : c) j.value(f);
                          });
                      });
                    });
                  }
                });
                j.attributeArray("barriers", [&] {
                  for (auto &b : k.barriers)
                    j.object([&] {
                      j.attribute("kind", b.kind);
                      j.attribute("block_wide", b.blockWide);
                      writeLocation(j, "location", b.loc);
                      writeStrings(j, "via", b.via);
                    });
                });
                j.attributeArray("returns", [&] {
                  for (auto &r : k.returns)
                    j.object([&] {
                      writeLocation(j, "location", r.loc);
                      j.attribute("block_uniform", r.blockUniform);
                      j.attribute("reason", r.reason);
                    });
                });
                j.attributeObject("shared_memory", [&] {
                  auto total = staticSharedBytes(k);
                  if (total)
                    j.attribute("static_bytes", int64_t(*total));
                  else
                    j.attribute("static_bytes", nullptr);
                  j.attributeArray("static", [&] {
                    for (auto &s : k.shared)
                      if (!s.dynamic)
                        j.object([&] {
                          j.attribute("name", s.name);
                          j.attribute("type", s.type);
                          if (s.bytes)
                            j.attribute("bytes", int64_t(*s.bytes));
                          else
                            j.attribute("bytes", nullptr);
                          writeLocation(j, "location", s.loc);
                        });
                  });
                  j.attributeArray("dynamic", [&] {
                    for (auto &s : k.shared)
                      if (s.dynamic)
                        j.object([&] {
                          j.attribute("name", s.name);
                          j.attribute("type", s.type);
                          writeLocation(j, "location", s.loc);
                        });
                  });
                });
                writeStrings(j, "callees", k.callees);
                j.attribute("tasks_independent", k.tasksIndependent);
                j.attribute("task_coupling", k.taskCoupling);
                j.attributeArray("blockers", [&] {
                  for (auto &b : k.blockers)
                    j.object([&] {
                      j.attribute("construct", b.construct);
                      j.attribute("detail", b.detail);
                      writeLocation(j, "location", b.loc);
                    });
                });
                j.attribute("ptb_eligible", eligible(k));
                j.attributeArray("launches", [&] {
                  for (auto &s : k.launches) writeLaunch(j, s);
                });
                j.attributeArray("parked_returns", [&] {
                  for (auto &b : k.parkedReturns)
                    j.object([&] {
                      j.attribute("detail", b.detail);
                      writeLocation(j, "location", b.loc);
                    });
                });
              });
            }
          });
          j.attributeArray("other_launches", [&] {
            for (auto &s : inv.otherLaunches) writeLaunch(j, s);
          });
          writeStrings(j, "included_files", inv.includedFiles);
        });
      }
    });
  });
  os << "\n";
  return out;
}

std::string formatInventoryText(const std::vector<Inventory> &inventories) {
  std::string out;
  llvm::raw_string_ostream os(out);
  for (const Inventory &inv : inventories) {
    os << inv.mainFile << ": " << inv.kernels.size() << (inv.kernels.size() == 1 ? " kernel\n" : " kernels\n");
    if (!inv.includedFiles.empty())
      os << "included files read with it: " << llvm::join(inv.includedFiles, ", ") << "\n";
    for (const Kernel &k : inv.kernels) {
      os << "\n" << k.qualifiedName;
      if (!k.templateParams.empty()) os << " <" << llvm::join(k.templateParams, ", ") << ">";
      os << "  (" << k.loc.str() << ")" << (eligible(k) ? "" : "  [not PTB-eligible]") << "\n";
      std::vector<std::string> ps;
      for (auto &p : k.params) ps.push_back(p.type + (p.name.empty() ? "" : " " + p.name));
      os << "  parameters: " << (ps.empty() ? "(none)" : llvm::join(ps, ", ")) << "\n";
      if (!k.instantiations.empty()) os << "  instantiations: " << llvm::join(k.instantiations, ", ") << "\n";
      for (BuiltinVar v : kBuiltinVars) {
        const BuiltinUse &u = k.uses.at(v);
        if (!u.used()) continue;
        std::vector<std::string> how;
        if (u.direct) how.push_back("direct");
        for (auto &m : u.macros) how.push_back("macro " + m);
        for (auto &c : u.callChains) how.push_back("via " + llvm::join(c, " -> "));
        os << "  " << name(v) << ": " << llvm::join(how, "; ") << "\n";
      }
      for (auto &b : k.barriers)
        os << "  barrier: " << b.kind << (b.blockWide ? "" : " (warp-level)") << " at " << b.loc.str()
           << (b.via.empty() ? "" : " via " + llvm::join(b.via, " -> ")) << "\n";
      for (auto &r : k.returns)
        os << "  return at " << r.loc.str() << ": "
           << (r.blockUniform ? "block-uniform" : "thread-dependent (" + r.reason + ")") << "\n";
      for (auto &s : k.shared)
        os << "  shared: " << (s.dynamic ? "dynamic " : "static ") << s.type << " " << s.name
           << (s.bytes ? " (" + std::to_string(*s.bytes) + " bytes)" : "") << " at " << s.loc.str() << "\n";
      for (auto &b : k.blockers)
        os << "  blocks PTB: " << b.construct << " at " << b.loc.str() << ": " << b.detail << "\n";
      for (auto &b : k.parkedReturns) os << "  parks returning threads: " << b.detail << "\n";
      for (auto &l : k.launches) os << "  launch: " << describeLaunch(l) << "\n";
    }
    for (auto &l : inv.otherLaunches) os << "other launch: " << describeLaunch(l) << "\n";
  }
  return out;
}

} // namespace ptb

#include "KernelBuilder.h"
#include "BuiltinVars.h"
#include "PtbCloneName.h"
#include "Uniformity.h"

#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ParentMap.h"

#include "llvm/ADT/StringExtras.h"

#include <cassert>
#include <deque>
#include <functional>
#include <tuple>

namespace ptb::analysis {

namespace {

class KernelBuilder {
public:
  KernelBuilder(Analyzer &a) : a(a), sm(a.sm), lo(a.ctx.getLangOpts()) {}

  Kernel build(const FunctionDecl *def) {
    Kernel k;
    k.decl = def;
    k.templ = def->getDescribedFunctionTemplate();
    k.name = def->getNameAsString();
    k.qualifiedName = def->getQualifiedNameAsString();
    k.loc = a.locate(def->getLocation());
    if (k.templ) {
      for (const NamedDecl *p : *k.templ->getTemplateParameters())
        k.templateParams.push_back(textOf(p->getSourceRange(), sm, lo));
      for (const FunctionDecl *spec : k.templ->specializations()) {
        std::string s;
        llvm::raw_string_ostream os(s);
        spec->getNameForDiagnostic(os, a.ctx.getPrintingPolicy(), /*Qualified=*/true);
        k.instantiations.push_back(os.str());
      }
      std::sort(k.instantiations.begin(), k.instantiations.end());
      k.instantiations.erase(std::unique(k.instantiations.begin(), k.instantiations.end()), k.instantiations.end());
    }
    // Clusters: clang 19 drops the unknown cluster_dims attribute, so read the declaration's own text.
    {
      SourceLocation b = sm.getExpansionLoc(k.templ ? k.templ->getBeginLoc() : def->getBeginLoc());
      SourceLocation e = sm.getExpansionLoc(def->getBody()->getBeginLoc());
      if (sm.getFileID(b) == sm.getFileID(e) && sm.getFileOffset(b) <= sm.getFileOffset(e)) {
        StringRef head =
            sm.getBufferData(sm.getFileID(b)).substr(sm.getFileOffset(b), sm.getFileOffset(e) - sm.getFileOffset(b));
        size_t at = head.find("__cluster_dims__");
        if (at == StringRef::npos) at = head.find("cluster_dims");
        if (at != StringRef::npos) {
          SourceLocation l = b.getLocWithOffset(at);
          k.blockers.push_back(
              {"thread-block cluster", "the kernel is declared with __cluster_dims__", a.locate(l), l});
        }
      }
    }
    for (const ParmVarDecl *p : def->parameters())
      k.params.push_back(
          {p->getNameAsString(), p->getType().getAsString(a.ctx.getPrintingPolicy()), p->isParameterPack()});
    for (BuiltinVar v : kBuiltinVars) k.uses[v];

    // The bodies to read: the pattern, and every instantiation (they resolve dependent calls).
    std::vector<const FunctionDecl *> bodies{def};
    if (k.templ)
      for (const FunctionDecl *spec : k.templ->specializations())
        if (const FunctionDecl *d = definitionOf(spec); d && d != def) bodies.push_back(d);

    std::set<unsigned> seenBarrier, seenBlocker, seenCall, seenShared;
    for (const FunctionDecl *body : bodies) {
      const FunctionFacts &f = a.factsOf(body);
      for (int i = 0; i < 4; ++i) {
        if (f.direct[i]) k.uses[kBuiltinVars[i]].direct = true;
        k.uses[kBuiltinVars[i]].macros.insert(f.macros[i].begin(), f.macros[i].end());
      }
      for (auto &b : f.barriers)
        if (seenBarrier.insert(sm.getFileOffset(sm.getFileLoc(b.loc))).second) addBarrier(k, b, {}, b.loc);
      for (auto &b : f.blockers)
        if (seenBlocker.insert(sm.getFileOffset(sm.getFileLoc(b.sloc))).second) k.blockers.push_back(b);
      for (auto &s : f.shared)
        if (body == def) {
          SharedVariable sv = s;
          sv.function = k.qualifiedName;
          k.shared.push_back(sv);
        }
      for (auto *l : f.lambdasWithoutDefaultCapture)
        k.blockers.push_back({"lambda without capture default",
                              "a lambda that reads blockIdx/gridDim must capture it; give it [&] or [=]",
                              a.locate(l->getBeginLoc()), l->getBeginLoc()});
      (void)seenCall;
      (void)seenShared;
    }

    for (const FunctionDecl *body : bodies)
      if (k.taskCoupling.empty()) k.taskCoupling = a.factsOf(body).coupling;
    walkCallees(k, bodies);
    k.tasksIndependent = k.taskCoupling.empty() && k.barriers.empty() && k.shared.empty();
    if (!k.tasksIndependent && k.taskCoupling.empty()) k.taskCoupling = "barriers or shared memory";

    const FunctionFacts &pf = a.factsOf(def);
    UniformityAnalysis ua(def);
    for (const ReturnStmt *r : pf.returns) {
      ReturnSite rs;
      rs.stmt = r;
      rs.loc = a.locate(r->getReturnLoc());
      rs.blockUniform = ua.isReachedUniformly(r, rs.reason);
      k.returns.push_back(rs);
    }
    std::sort(k.barriers.begin(), k.barriers.end(), [](auto &x, auto &y) { return x.offset < y.offset; });
    decideParking(k, bodies);
    return k;
  }

private:
  // ---------------------------------------------------------------------------------------------------
  // Parking (docs/ptb-transform.md, "Parking"). A thread-dependent return that a block barrier can follow
  // in the same task: the threads that return would go on to the worker's next task and meet its barriers.
  // The twin keeps such a kernel when every block barrier that can follow a thread-dependent return can be
  // rewritten into a task barrier (those in the kernel's text, and in device functions that can be cloned)
  // and no warp-level operation can follow one: the threads that return then park, meeting each barrier
  // the rest of the block still passes. Otherwise the kernel is refused, naming the return and the barrier.

  // What a call reaches, directly or below: the first block barrier, the first block barrier that cannot
  // become a task barrier (and why), the first warp-level operation. Chains name the functions from the
  // callee down to the one that holds it.
  struct Reach {
    struct What {
      bool found = false;
      std::string kind, why;
      std::vector<std::string> chain;
    };
    What barrier, bad, warp;
    static void take(What &into, const What &from) {
      if (!into.found && from.found) into = from;
    }
    void merge(const Reach &o) {
      take(barrier, o.barrier);
      take(bad, o.bad);
      take(warp, o.warp);
    }
  };

  static bool isLambdaCall(const CallHit &c) {
    auto *m = dyn_cast<CXXMethodDecl>(c.callee);
    return m && m->getParent()->isLambda();
  }

  // Why a call to a user function cannot be sent to a clone, or "".
  std::string redirectProblem(const CallHit &c) const {
    const FunctionDecl *pat = patternOf(c.callee);
    if (!pat) return "its definition cannot be cloned";
    if (isa<CXXMethodDecl>(pat) || c.viaOperatorOrImplicit) return "it is a member function, constructor or operator";
    if (c.nameLoc.isValid() && a.spelledInMacroBody(c.nameLoc)) return "the call is written inside a macro definition";
    if (c.nameLoc.isInvalid() || c.lparenLoc.isInvalid()) return "the call cannot be rewritten in place";
    if (a.sm.isInSystemHeader(pat->getLocation())) return "it is in a system header";
    return notRedirectable(c, pat);
  }

  // What `fn` reaches (its own body and below); `library`: it is library code, whose barriers cannot be
  // rewritten.
  Reach functionReach(const FunctionDecl *fn, bool library) {
    auto key = std::make_pair(fn, library);
    if (auto it = reachMemo.find(key); it != reachMemo.end()) return it->second;
    if (!reachStack.insert(key).second) return {}; // recursion: the other members decide
    const FunctionFacts &f = a.factsOf(fn);
    Reach r;
    for (const BarrierHit &h : f.barriers) {
      if (!h.blockWide) {
        Reach::take(r.warp, {true, h.kind, "", {}});
        continue;
      }
      Reach::take(r.barrier, {true, h.kind, "", {}});
      std::string why = library ? "it is in library code" : h.unrewritable;
      if (!why.empty()) Reach::take(r.bad, {true, h.kind, why, {}});
    }
    for (const WarpHit &w : f.warpOps) Reach::take(r.warp, {true, w.kind, "", {}});
    for (const CallHit &c : f.calls) r.merge(callReach(c, library));
    reachStack.erase(key);
    reachMemo[key] = r;
    return r;
  }

  // What a call reaches. A lambda's barriers are in the text of the function that defines it, rewritten
  // with it; a library function's cannot be rewritten; a user function's are rewritten in its clone,
  // which needs the call to be redirected.
  Reach callReach(const CallHit &c, bool library) {
    const bool lambda = isLambdaCall(c);
    const bool lib = library || (c.system && !lambda);
    Reach r = functionReach(c.callee, lib);
    const std::string name = lambda ? "lambda" : c.callee->getNameAsString();
    for (Reach::What *w : {&r.barrier, &r.bad, &r.warp})
      if (w->found) w->chain.insert(w->chain.begin(), name);
    if (lib && !library && r.bad.found)
      r.bad.why = "it is in library code (" + c.callee->getQualifiedNameAsString() + ")";
    if (r.barrier.found && !r.bad.found && !lib && !lambda) {
      std::string why = redirectProblem(c);
      if (!why.empty()) {
        r.bad = r.barrier;
        r.bad.why = "the call to " + c.callee->getQualifiedNameAsString() +
                    " cannot be sent to a clone with task barriers: " + why;
      }
    }
    return r;
  }

  // Whether a call of a parking kernel (or of a function cloned for it) goes to a clone for its barriers.
  bool barrierClone(const CallHit &c) {
    if (c.system || isLambdaCall(c)) return false;
    Reach r = callReach(c, false);
    return r.barrier.found && !r.bad.found;
  }

  // Where a thread leaves the task at a return of a parking kernel's body (the rewrite makes it leave
  // first, then return). False, with why, when its text is not all in the file (written in a macro).
  bool taskExit(const ReturnStmt *r, std::vector<TaskExit> &out, std::string &why) const {
    const LangOptions &lo = a.ctx.getLangOpts();
    SourceLocation kw = r->getReturnLoc(), last = r->getEndLoc();
    std::optional<Token> semi;
    if (kw.isFileID() && last.isFileID()) semi = Lexer::findNextToken(last, sm, lo);
    if (!semi || !semi->is(tok::semi) || !semi->getLocation().isFileID() ||
        sm.getFileID(semi->getLocation()) != sm.getFileID(kw)) {
      why = "is written in a macro, where ptb-transform cannot add that exit";
      return false;
    }
    out.push_back(
        {r->getRetValue() ? TaskExit::Form::ReturnVoidValue : TaskExit::Form::Return, kw, semi->getLocation()});
    return true;
  }

  void decideParking(Kernel &k, const std::vector<const FunctionDecl *> &bodies) {
    // What the kernel's text reaches, at the offset where it does (its own barriers, its calls).
    struct Item {
      unsigned offset;
      Location loc;
      std::string kind, why;
      std::vector<std::string> chain;
      enum { Barrier, Bad, Warp } what;
    };
    std::vector<Item> items;
    auto off = [&](SourceLocation l) { return sm.getFileOffset(sm.getFileLoc(l)); };
    for (const FunctionDecl *body : bodies) {
      const FunctionFacts &f = a.factsOf(body);
      for (const BarrierHit &h : f.barriers) {
        if (!h.blockWide)
          items.push_back({off(h.loc), a.locate(h.loc), h.kind, "", {}, Item::Warp});
        else if (!h.unrewritable.empty())
          items.push_back({off(h.loc), a.locate(h.loc), h.kind, h.unrewritable, {}, Item::Bad});
        else
          items.push_back({off(h.loc), a.locate(h.loc), h.kind, "", {}, Item::Barrier});
      }
      for (const WarpHit &w : f.warpOps) items.push_back({off(w.loc), a.locate(w.loc), w.kind, "", {}, Item::Warp});
      for (const CallHit &c : f.calls) {
        Reach r = callReach(c, false);
        if (r.bad.found)
          items.push_back({off(c.callLoc), a.locate(c.callLoc), r.bad.kind, r.bad.why, r.bad.chain, Item::Bad});
        else if (r.barrier.found)
          items.push_back({off(c.callLoc), a.locate(c.callLoc), r.barrier.kind, "", r.barrier.chain, Item::Barrier});
        if (r.warp.found)
          items.push_back({off(c.callLoc), a.locate(c.callLoc), r.warp.kind, "", r.warp.chain, Item::Warp});
      }
    }
    // Bad items first at one offset, so that the first one found after a return is the worst.
    std::stable_sort(items.begin(), items.end(), [](const Item &x, const Item &y) {
      return x.offset != y.offset ? x.offset<y.offset : (x.what != Item::Barrier)>(y.what != Item::Barrier);
    });

    ParentMap bodyParents(k.decl->getBody());
    struct Follows {
      const ReturnSite *ret;
      const Item *barrier = nullptr, *bad = nullptr;
    };
    std::vector<Follows> follows;
    bool needed = false;
    for (const ReturnSite &r : k.returns) {
      if (r.blockUniform) continue;
      unsigned at = sm.getFileOffset(sm.getFileLoc(r.stmt->getBeginLoc()));
      // The source ranges of loops around the return: anything in them can follow it.
      std::vector<std::pair<unsigned, unsigned>> loops;
      for (const Stmt *p = bodyParents.getParent(r.stmt); p; p = bodyParents.getParent(p)) {
        if (isa<LambdaExpr>(p)) break;
        if (isa<ForStmt, WhileStmt, DoStmt, CXXForRangeStmt>(p))
          loops.push_back(
              {sm.getFileOffset(sm.getFileLoc(p->getBeginLoc())), sm.getFileOffset(sm.getFileLoc(p->getEndLoc()))});
      }
      Follows fo{&r};
      for (const Item &i : items) {
        bool after = i.offset > at;
        for (auto &[first, last] : loops)
          if (i.offset >= first && i.offset <= last) after = true;
        if (!after) continue;
        if (i.what != Item::Warp && !fo.barrier) fo.barrier = &i;
        if (i.what != Item::Barrier && !fo.bad) fo.bad = &i;
      }
      needed = needed || fo.barrier;
      follows.push_back(fo);
    }
    if (!needed) return; // no block barrier can follow a thread-dependent return: nothing to park

    auto describe = [](const ReturnSite &r, const Item &i) {
      return "the return at " + r.loc.str() + " depends on " + r.reason + " and can be followed by " + i.kind + " at " +
             i.loc.str() + (i.chain.empty() ? std::string() : " (in " + llvm::join(i.chain, " -> ") + ")");
    };
    bool refused = false;
    for (const Follows &fo : follows) {
      if (!fo.bad) continue;
      Blocker bl;
      bl.construct = "thread-dependent return before a barrier";
      bl.detail = describe(*fo.ret, *fo.bad) +
                  (fo.bad->what == Item::Warp
                       ? "; a thread that returns waits at the task's barriers until the block has finished the task, "
                         "and a warp-level operation waits for every thread of its mask that has not exited"
                       : "; a thread that returns must wait at every barrier the rest of the task passes, and this "
                         "one cannot be rewritten to let it: " +
                             fo.bad->why);
      bl.loc = fo.ret->loc;
      bl.sloc = fo.ret->stmt->getBeginLoc();
      k.blockers.push_back(bl);
      refused = true;
    }
    if (refused) return;
    // Every thread leaves a parking task (the runtime's task exit) where it leaves: before each return of
    // the kernel's body and at its end (runtime/include/ptb/barriers.cuh says why there). A return whose
    // text cannot be edited leaves the kernel as it is.
    std::vector<TaskExit> exits;
    for (const ReturnSite &r : k.returns) {
      std::string why;
      if (!taskExit(r.stmt, exits, why)) {
        k.blockers.push_back(
            {"thread-dependent return before a barrier",
             "a barrier can follow a thread-dependent return, so each thread must leave the task where "
             "it returns, and the return at " +
                 r.loc.str() + " " + why,
             r.loc, r.stmt->getBeginLoc()});
        return;
      }
    }
    SourceLocation close = k.decl->getBody()->getEndLoc();
    if (!close.isFileID()) {
      k.blockers.push_back({"thread-dependent return before a barrier",
                            "the kernel parks the threads that return, and the end of its body is written in a macro",
                            k.loc, k.decl->getLocation()});
      return;
    }
    exits.push_back({TaskExit::Form::BodyEnd, close, {}});
    for (const Follows &fo : follows) {
      if (!fo.barrier) continue;
      Blocker p;
      p.construct = "thread-dependent return before a barrier";
      p.detail = describe(*fo.ret, *fo.barrier);
      p.loc = fo.ret->loc;
      p.sloc = fo.ret->stmt->getBeginLoc();
      k.parkedReturns.push_back(p);
    }

    // The twin parks: the clones, now with the functions whose barriers must become task barriers too,
    // and every block barrier in the kernel's text and in the clones' texts.
    k.virtualizedCalls.clear();
    k.virtualizedCallees.clear();
    std::map<const FunctionDecl *, std::set<const FunctionDecl *>> sources;
    collectClones(k, bodies, true, &sources);
    std::set<std::tuple<unsigned, unsigned, int, std::string>> seen;
    auto addBarriers = [&](const FunctionDecl *fn) {
      for (const BarrierHit &h : a.factsOf(fn).barriers)
        if (h.blockWide && h.unrewritable.empty() && h.site &&
            seen.insert({h.site->at.getRawEncoding(), h.site->length, int(h.site->form), h.site->kind}).second)
          k.taskBarriers.push_back(*h.site);
    };
    for (const FunctionDecl *body : bodies) addBarriers(body);
    k.taskExits = exits;
    for (const FunctionDecl *pat : k.virtualizedCallees) {
      addBarriers(pat);
      for (const FunctionDecl *asCalled : sources[pat]) addBarriers(asCalled);
    }
  }

  std::map<std::pair<const FunctionDecl *, bool>, Reach> reachMemo;
  std::set<std::pair<const FunctionDecl *, bool>> reachStack;

  void addBarrier(Kernel &k, const BarrierHit &b, const std::vector<std::string> &via, SourceLocation reach) {
    Barrier out;
    out.kind = b.kind;
    out.blockWide = b.blockWide;
    out.loc = a.locate(reach);
    out.via = via;
    out.offset = sm.getFileOffset(sm.getFileLoc(reach));
    k.barriers.push_back(out);
  }

  // Breadth-first over the call graph from the kernel's bodies: callee chains for builtins, barriers
  // reached through calls, blockers inside callees, and which callees must be cloned for the PTB twin.
  void walkCallees(Kernel &k, const std::vector<const FunctionDecl *> &bodies) {
    struct Node {
      const FunctionDecl *fn;
      std::vector<std::string> chain;
      SourceLocation reach;
      bool system;
    };
    std::deque<Node> queue;
    std::set<const FunctionDecl *> visited;
    // Reach: for barriers in callees, the location in the kernel body of the call that leads there.
    for (const FunctionDecl *body : bodies)
      for (const CallHit &c : a.factsOf(body).calls)
        queue.push_back({c.callee, {c.callee->getNameAsString()}, c.callLoc, c.system});
    std::set<std::string> calleeNames;
    std::set<std::pair<unsigned, std::string>> seenBarrierVia;
    while (!queue.empty()) {
      Node n = queue.front();
      queue.pop_front();
      const FunctionFacts &f = a.factsOf(n.fn);
      if (k.taskCoupling.empty() && !f.coupling.empty())
        k.taskCoupling = f.coupling + " (in " + n.fn->getQualifiedNameAsString() + ")";
      if (!n.system) calleeNames.insert(n.fn->getQualifiedNameAsString());
      for (int i = 0; i < 4 && !n.system; ++i)
        if (f.direct[i] || !f.macros[i].empty()) {
          auto &chains = k.uses[kBuiltinVars[i]].callChains;
          if (std::find(chains.begin(), chains.end(), n.chain) == chains.end() && chains.size() < 16)
            chains.push_back(n.chain);
        }
      for (auto &b : f.barriers) {
        unsigned off = sm.getFileOffset(sm.getFileLoc(n.reach));
        if (seenBarrierVia.insert({off, b.kind}).second) addBarrier(k, b, n.chain, n.reach);
      }
      // Inside system headers only barriers count: a library's generic dispatch (cooperative_groups'
      // thread_group::sync reaching grid sync for grid groups) is not what this kernel does; the
      // kernel's own uses of grid groups, clusters and the like are classified where it calls them.
      for (auto &b : n.system ? std::vector<Blocker>() : f.blockers) {
        Blocker c = b;
        c.detail += " (in " + n.fn->getQualifiedNameAsString() + ", reached from the kernel at " +
                    a.locate(n.reach).str() + ")";
        bool dup = false;
        for (auto &e : k.blockers)
          if (e.sloc == c.sloc) dup = true;
        if (!dup) k.blockers.push_back(c);
      }
      if (!visited.insert(n.fn).second) continue;
      if (n.chain.size() > 32) continue;
      for (const CallHit &c : f.calls) {
        auto chain = n.chain;
        chain.push_back(c.callee->getNameAsString());
        queue.push_back({c.callee, chain, n.reach, n.system || c.system});
      }
    }
    k.callees.assign(calleeNames.begin(), calleeNames.end());

    collectClones(k, bodies, false);
  }

  // The device functions to clone for the twin and the calls to redirect to the clones: those that read
  // blockIdx/gridDim (directly or below) and, for a parking kernel, those whose block barriers (directly
  // or below) must become task barriers. `sources`: each cloned pattern and the functions as called that
  // stand for it (instantiations), whose facts hold the barriers of dependent code.
  void collectClones(Kernel &k, const std::vector<const FunctionDecl *> &bodies, bool parking,
                     std::map<const FunctionDecl *, std::set<const FunctionDecl *>> *sources = nullptr) {
    std::map<const FunctionDecl *, bool> needs; // reads blockIdx/gridDim, directly or below
    // Which functions (as called) read blockIdx/gridDim, directly or transitively: fixed point.
    std::function<bool(const FunctionDecl *, std::set<const FunctionDecl *> &)> reads =
        [&](const FunctionDecl *fn, std::set<const FunctionDecl *> &stack) -> bool {
      auto it = needs.find(fn);
      if (it != needs.end()) return it->second;
      if (!stack.insert(fn).second) return false; // recursion: decided by the other members
      const FunctionFacts &f = a.factsOf(fn);
      bool r = !f.indexLocs.empty();
      for (const CallHit &c : f.calls)
        if (!c.system) r = reads(c.callee, stack) || r;
      stack.erase(fn);
      needs[fn] = r;
      return r;
    };
    // Collect the calls to redirect, from the kernel bodies and from every function being cloned.
    std::set<const FunctionDecl *> clonedPatterns, gathered;
    std::vector<const FunctionDecl *> order;
    std::set<unsigned> seenCalls;
    // The calls each body read sends to clones (by location), per pattern and instance: a pattern's text
    // serves all its instantiations, so a call sent to a clone in one must be sent to one in all.
    std::map<const FunctionDecl *, std::map<const FunctionDecl *, std::set<unsigned>>> redirectedIn;
    auto keyOf = [&](const CallHit &c) { return sm.getFileOffset(sm.getFileLoc(c.nameLoc)); };
    auto block = [&](const std::string &detail, SourceLocation at) {
      Blocker b{"blockIdx/gridDim read through a call that cannot be redirected", detail, a.locate(at), at};
      for (auto &e : k.blockers)
        if (e.sloc == b.sloc) return;
      k.blockers.push_back(b);
    };
    std::function<void(const FunctionDecl *callerAsCalled, const FunctionDecl *callerPattern)> gather;
    // Sends the call `c` (in `caller`, an instance of `callerPattern`) to the clone of its callee `pat`.
    // (Only for a call notRedirectable() accepts, which has a site.)
    auto redirect = [&](const CallHit &c, const FunctionDecl *pat, const FunctionDecl *caller,
                        const FunctionDecl *callerPattern) {
      assert(c.site && "a call sent to a clone has a site");
      unsigned off = keyOf(c);
      redirectedIn[callerPattern][caller].insert(off);
      if (seenCalls.insert(off).second) {
        k.virtualizedCalls.push_back({pat, sm.getFileLoc(c.nameLoc), callerPattern, *c.site});
      } else {
        for (const VirtualizedCall &v : k.virtualizedCalls)
          if (sm.getFileOffset(v.nameLoc) == off && !sameSite(v.site, *c.site))
            block("the call of " + pat->getQualifiedNameAsString() + " is " + v.callee->getQualifiedNameAsString() +
                      " in another instantiation, whose clone is called differently; the clone's text serves both",
                  c.callLoc);
      }
      // An explicit specialization's clone specializes the primary template's clone: that one is
      // cloned too (first), whether or not the primary reads the indices.
      if (pat->getTemplateSpecializationKind() == TSK_ExplicitSpecialization && pat->getPrimaryTemplate())
        if (const FunctionDecl *primary = patternOf(pat->getPrimaryTemplate()->getTemplatedDecl());
            primary && clonedPatterns.insert(primary).second) {
          if (gathered.insert(primary).second) gather(primary, primary);
          order.push_back(primary);
        }
      bool fresh = clonedPatterns.insert(pat).second;
      if (gathered.insert(c.callee).second) gather(c.callee, pat);
      if (fresh && c.callee != pat && gathered.insert(pat).second) gather(pat, pat);
      if (fresh) order.push_back(pat); // post-order: callees before callers
    };
    gather = [&](const FunctionDecl *caller, const FunctionDecl *callerPattern) {
      redirectedIn[callerPattern][caller];
      for (const CallHit &c : a.factsOf(caller).calls) {
        if (c.system) continue;
        std::set<const FunctionDecl *> stack;
        // A call is sent to a clone when its callee reads blockIdx/gridDim or, in a parking kernel, when
        // the callee's barriers must become task barriers (barrierClone() checked that it can be sent).
        bool read = reads(c.callee, stack);
        if (!read && !(parking && barrierClone(c))) continue;
        const FunctionDecl *pat = patternOf(c.callee);
        if (!pat) continue;
        if (sources) (*sources)[pat].insert(c.callee);
        if (std::string why = notRedirectable(c, pat); read && !why.empty()) {
          block(pat->getQualifiedNameAsString() + " reads blockIdx/gridDim, but " + why, c.callLoc);
          continue;
        }
        redirect(c, pat, caller, callerPattern);
      }
    };
    for (const FunctionDecl *body : bodies)
      if (gathered.insert(body).second) gather(body, k.decl);

    // A call sent to a clone in one instantiation of a pattern goes to a clone in the others too (the
    // clone of a callee that reads neither index only passes them on); where it cannot (a built-in
    // operator there, or a call that cannot be redirected) the kernel is refused.
    for (bool changed = true; changed;) {
      changed = false;
      std::vector<std::tuple<const CallHit *, const FunctionDecl *, const FunctionDecl *, const FunctionDecl *>> more;
      for (auto &[pattern, instances] : redirectedIn) {
        std::set<unsigned> all;
        for (auto &[inst, keys] : instances) all.insert(keys.begin(), keys.end());
        for (auto &[inst, keys] : instances) {
          if (inst == pattern) continue;
          for (unsigned key : all) {
            if (keys.count(key)) continue;
            const CallHit *hit = nullptr;
            for (const CallHit &c : a.factsOf(inst).calls)
              if (!c.system && c.nameLoc.isValid() && keyOf(c) == key) hit = &c;
            const FunctionDecl *pat = hit ? patternOf(hit->callee) : nullptr;
            const VirtualizedCall *sent = nullptr;
            for (const VirtualizedCall &v : k.virtualizedCalls)
              if (sm.getFileOffset(v.nameLoc) == key) sent = &v;
            if (pat && sent && hit->site && notRedirectable(*hit, pat).empty() && sameSite(sent->site, *hit->site)) {
              more.emplace_back(hit, pat, inst, pattern);
              continue;
            }
            std::string what;
            llvm::raw_string_ostream os(what);
            inst->getNameForDiagnostic(os, a.ctx.getPrintingPolicy(), /*Qualified=*/true);
            SourceLocation at = sent ? sent->nameLoc : pattern->getLocation();
            block(
                "the call at " + a.locate(at).str() + " is sent to the PTB clone of " +
                    (sent ? sent->callee->getQualifiedNameAsString() : std::string("a function")) +
                    " in one instantiation of " + pattern->getQualifiedNameAsString() + " but cannot be in " +
                    os.str() +
                    (hit ? " (" + (pat ? notRedirectable(*hit, pat) : std::string("its callee has no definition")) + ")"
                         : " (there it is a built-in operation or another kind of call)") +
                    "; the clone's text serves every instantiation",
                at);
            keys.insert(key); // reported once
          }
        }
      }
      for (auto &[hit, pat, inst, pattern] : more) {
        if (redirectedIn[pattern][inst].count(keyOf(*hit))) continue;
        redirect(*hit, pat, inst, pattern);
        changed = true;
      }
    }
    k.virtualizedCallees = order;
  }

  // Whether two instantiations write one call alike: the same form, tokens and clone, so that one text
  // serves both (the extent, which only orders edits, aside).
  static bool sameSite(const CloneCallSite &x, const CloneCallSite &y) {
    return x.form == y.form && x.member == y.member && x.args == y.args && x.name == y.name && x.open == y.open &&
           x.op == y.op && x.begin == y.begin && x.firstEnd == y.firstEnd && x.second == y.second && x.end == y.end &&
           x.nameLength == y.nameLength && ptbCloneName(x.callee) == ptbCloneName(y.callee);
  }

  // Why a call to `pat` (which reads blockIdx/gridDim) cannot be sent to a PTB clone, or "".
  std::string notRedirectable(const CallHit &c, const FunctionDecl *pat) const {
    if (c.viaOperatorOrImplicit) return c.why.empty() ? "the call cannot be rewritten in place" : c.why;
    if (!c.site)
      return c.nameLoc.isValid() && a.spelledInMacroBody(c.nameLoc) ? "the call is written inside a macro definition"
                                                                    : "the call cannot be rewritten in place";
    if (sm.isInSystemHeader(pat->getLocation())) return "the call cannot be rewritten in place";
    auto notTransformed = [&](SourceLocation l) {
      return "a file that is not transformed (" + a.locate(l).file + "; --header-filter selects the files that are)";
    };
    if (pat->isImplicit() || pat->isDefaulted())
      return "it is implicitly defined or defaulted: it has no text to clone";
    auto *m = dyn_cast<CXXMethodDecl>(pat);
    if (!m) {
      // A friend defined in a class: its clone must be a friend in the class too.
      if (pat->getFriendObjectKind() != Decl::FOK_None && !a.selected.containsLoc(pat->getLocation()))
        return "it is a friend defined in " + notTransformed(pat->getLocation());
      return "";
    }
    if (isa<CXXDestructorDecl>(m)) return "it is a destructor, which cannot be cloned";
    if (m->isVirtual()) return "it is a virtual function";
    if (m->getTemplateSpecializationKind() == TSK_ExplicitSpecialization)
      return "it is an explicit specialization of a member";
    const CXXRecordDecl *rd = m->getParent();
    if (rd->isLocalClass()) return "it is a member of a class defined inside a function";
    // Its clone is added to the class: the class, the definition and the declaration in the class must be
    // text that is written out.
    for (SourceLocation l : {rd->getLocation(), m->getFirstDecl()->getLocation(), pat->getLocation()}) {
      if (l.isMacroID()) return "it or its class is written inside a macro";
      if (!a.selected.containsLoc(l)) return "it is a member of a class in " + notTransformed(l);
    }
    if (pat->getBody()->getBeginLoc().isMacroID() || pat->getBody()->getEndLoc().isMacroID())
      return "it or its class is written inside a macro";
    return "";
  }

  Analyzer &a;
  SourceManager &sm;
  const LangOptions &lo;
};

} // namespace

Kernel buildKernel(Analyzer &a, const FunctionDecl *definition) { return KernelBuilder(a).build(definition); }

} // namespace ptb::analysis

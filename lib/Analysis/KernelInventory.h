// What each __global__ kernel of a translation unit uses: the facts the PTB rewrite and the fuser need,
// and what `ptb-transform --list-kernels` prints. Data, and the analysis that gathered it (for the facts of
// single function bodies, SlotFacts.h): analyzeTranslationUnit() (TranslationUnitInventory.h) fills it.
#pragma once

#include "BuiltinVars.h"

#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/Basic/SourceLocation.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ptb {

namespace analysis {
class Analyzer;
}

struct Location {
  std::string file;
  unsigned line = 0, column = 0;
  std::string str() const; // file:line:col
};

// How a kernel reaches one built-in variable.
struct BuiltinUse {
  bool direct = false;                              // written in the kernel body
  std::set<std::string> macros;                     // macros expanded in the body that read it
  std::vector<std::vector<std::string>> callChains; // kernel -> f -> g: {"f", "g"}; g reads it
  bool used() const { return direct || !macros.empty() || !callChains.empty(); }
};

struct Barrier {
  std::string kind;             // "__syncthreads", "__syncthreads_or", "bar.sync", "cg::thread_block::sync", ...
  bool blockWide = true;        // false for warp/tile-level syncs
  Location loc;                 // where the kernel body reaches it (the call to a callee that has it)
  std::vector<std::string> via; // callee chain when it is in a called function
  unsigned offset = 0;          // file offset of `loc` in the kernel's file (for ordering)
};

// How a block barrier of a parking kernel's task body, or of a device function cloned for it, is written:
// the tokens the twin edits to make it the runtime's task barrier (docs/ptb-transform.md, "Parking";
// lib/Rewrite/TaskBarrierEdits.h spells the edits). Locations are file locations in the body's text.
struct TaskBarrierSite {
  enum class Form {
    Name,        // the barrier's name with its qualifier (`__syncthreads`, `cg::sync`), or a macro use that is
                 // the whole name (`#define SYNC __syncthreads`): the text [at, at + length)
    NameAndCall, // a macro use that is the whole call, parentheses included (`#define SYNC() __syncthreads()`):
                 // the text [at, at + length)
    Member,      // `block.sync()` / `p->sync()` on a thread_block: the object begins at `at`, and from its
                 // '.' or '->' to the call's ')' is [memberOp, memberOp + memberLength)
  };
  Form form = Form::Name;
  std::string kind; // the barrier (Barrier::kind): "__syncthreads", ..., "__barrier_sync", "cg::thread_block::sync"
  clang::SourceLocation at;
  unsigned length = 0;
  clang::SourceLocation memberOp;
  unsigned memberLength = 0;
  bool arrow = false; // Member: `p->sync()`
};

// Where a thread of a parking kernel's task leaves it (docs/ptb-transform.md, "Parking"): a return of the
// kernel's body, or the end of the body. File locations; lib/Rewrite/TaskBarrierEdits.h spells the edits.
struct TaskExit {
  enum class Form {
    Return,          // `return;`
    ReturnVoidValue, // `return e;`, e of type void
    BodyEnd,         // the body's closing brace, at `at`
  };
  Form form = Form::Return;
  clang::SourceLocation at;        // the `return` keyword, or the closing brace
  clang::SourceLocation semicolon; // a return's ';'
};

struct ReturnSite {
  Location loc;
  bool blockUniform = false;
  std::string reason; // why it is not block-uniform (the first thread-dependent value seen)
  const clang::ReturnStmt *stmt = nullptr;
};

struct SharedVariable {
  std::string name, type, function;
  bool dynamic = false;          // extern __shared__ T x[];
  std::optional<uint64_t> bytes; // static size when known (not for dependent types)
  Location loc;
};

// A construct that prevents a PTB rewrite.
struct Blocker {
  std::string construct; // "grid-wide sync", "dynamic parallelism", "thread-block cluster", "%smid read", ...
  std::string detail;
  Location loc;
  clang::SourceLocation sloc;
  // The block index read through a cooperative_groups::thread_block: a fused slot's group answers it.
  bool cgBlockIndex = false;
};

struct LaunchSite {
  enum class Form { TripleChevron, CudaLaunchKernel, Other };
  Form form = Form::TripleChevron;
  std::string formName; // "<<<>>>", "cudaLaunchKernel", "cudaLaunchCooperativeKernel", ...
  Location loc;
  std::string templateArgs; // explicit template arguments as written, without <>
  bool inMacro = false;     // the launch is written inside a macro argument or body
  std::string macro;        // the macro's name
  bool inMacroBody = false; // the launch text comes from a macro definition (cannot be edited in place)
  bool fromDevice = false;  // written in device code (dynamic parallelism): never rewritten
  const clang::Expr *expr = nullptr;
  std::string enclosingFunction;
  const clang::FunctionDecl *kernel = nullptr; // the launched kernel's pattern definition, when known
};

struct Parameter {
  std::string name, type;
  bool pack = false;
};

// How a call that can be sent to its callee's PTB clone is written: its form and the tokens the rewrite
// edits (lib/Rewrite/CallCloneEdits.h spells the edits). File locations (a call in a macro argument:
// where it is written).
struct CloneCallSite {
  enum class Form {
    Named,             // `f(x)`, `obj.f(x)`, `p->f()`, `W::s()`, `a.operator+(b)`: the name is [name,
                       // name + nameLength), its '(' at `open`
    CallOperator,      // `f(a)` on an object: the '(' at `open`
    SubscriptOperator, // `x[i]`: the '[' at `open`, the ']' at `op`
    BinaryOperator,    // `a @ b`: `a` begins at `begin` and ends before `firstEnd`, `b` begins at `second`,
                       // the call ends before `end`
    PostfixOperator,   // `a++`: `a` is [begin, firstEnd), the operator ends before `end`
    PrefixOperator,    // `@a`: the operator at `op`, `a` is [begin, firstEnd)
    Construct,         // `W w(a)`, `W w{a}`, `W(a)`, `new W(a)`, `m(a)`: the '(' or '{' at `open`
    DefaultConstruct,  // `W w;`: the variable's name ends before `end`
  };
  Form form = Form::Named;
  const clang::FunctionDecl *callee = nullptr; // as called (the clone's name is ptbCloneName(callee))
  bool member = false;                         // operators: the callee is a non-static member
  bool args = false; // Named, CallOperator, SubscriptOperator, Construct: arguments are written
  clang::SourceLocation name, open, op, begin, firstEnd, second, end;
  unsigned nameLength = 0;
  unsigned extent = 0; // length of the call's text: orders the edits of nested calls at one offset
};

// A call from the kernel (or from a cloned callee) to a __device__ function that reads blockIdx/gridDim,
// directly or further down: the rewrite sends it to the function's PTB clone.
struct VirtualizedCall {
  const clang::FunctionDecl *callee = nullptr; // the callee's pattern definition
  clang::SourceLocation nameLoc;               // the callee's name token; for an operator or a constructor
                                               // the location that identifies the call
  const clang::FunctionDecl *caller = nullptr; // pattern of the function whose body holds the call
  CloneCallSite site;                          // how it is written, for the edits that send it to the clone
};

struct Kernel {
  const clang::FunctionDecl *decl = nullptr;          // the definition (template pattern for templates)
  const clang::FunctionTemplateDecl *templ = nullptr; // set for kernel templates
  std::string name, qualifiedName;
  Location loc;
  std::vector<std::string> templateParams; // as written: "typename T", "int N"
  std::vector<std::string> instantiations; // "saxpy<float>"
  std::vector<Parameter> params;
  std::map<BuiltinVar, BuiltinUse> uses;
  std::vector<Barrier> barriers;
  std::vector<ReturnSite> returns;
  std::vector<SharedVariable> shared;
  std::vector<Blocker> blockers;
  std::vector<LaunchSite> launches;
  std::vector<std::string> callees; // device functions called, transitively (qualified)

  // No thread of a task depends on another thread of it being in the same task: no shared memory, no
  // barrier, no warp-level operation (shuffles, votes, tiles, WMMA), no inline asm, no block fences, in the
  // kernel or anything it calls. Then the runtime needs no barrier between a worker's consecutive tasks.
  bool tasksIndependent = false;
  std::string taskCoupling; // when not independent: the first construct found, e.g. "__shfl_down_sync"

  // For the rewrite: device functions (patterns) to clone, in dependency order, and the calls to redirect.
  std::vector<const clang::FunctionDecl *> virtualizedCallees;
  std::vector<VirtualizedCall> virtualizedCalls;

  // Thread-dependent returns that a block barrier can follow, one entry each (construct "thread-dependent
  // return before a barrier", the detail names the return and the first such barrier). The twin keeps
  // such a kernel by parking the threads that return (TaskSync::parked; docs/ptb-transform.md, "Parking"):
  // every block barrier of its body and of the device functions it calls becomes a task barrier, and the
  // functions with barriers are cloned like those that read blockIdx. When a barrier cannot be rewritten,
  // or a warp-level operation can follow the return, the kernel gets a blocker instead and this is empty.
  std::vector<Blocker> parkedReturns;
  bool parks() const { return !parkedReturns.empty(); }
  // For a parking kernel: its block barriers, the clones' included, and where its threads leave the task.
  std::vector<TaskBarrierSite> taskBarriers;
  std::vector<TaskExit> taskExits;

  bool usesVirtualIndex() const; // blockIdx or gridDim reached by any route
};

struct Inventory {
  std::string mainFile;
  std::vector<Kernel> kernels;            // in translation-unit order: the main file's and the selected included files'
  std::vector<LaunchSite> otherLaunches;  // launches of kernels not defined in a selected file
  std::vector<std::string> includedFiles; // the selected included files, as clang names them, in order
  // The facts of each function body it read, kept for the fuser (SlotFacts.h); valid while the AST lives.
  std::shared_ptr<analysis::Analyzer> analysis;
};

} // namespace ptb

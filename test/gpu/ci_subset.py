#!/usr/bin/env python3
"""Picks CI's representative tier of the corpus compile check (test/gpu/compile_check.sh --subset).

Every test/gpu program is transformed in CI; this picks the programs whose transformed outputs are also
nvcc-compiled there, so that every feature the corpus exercises is compiled at least once. A program's
features are read from what the tool itself reports and writes, never from a hand list:
  - the inventory (`ptb-transform --list-kernels --format=json`): per kernel, templates (and packs), each
    block-index builtin it reads directly, through a macro or through a call, each barrier kind (and one in a
    callee), uniform and thread-dependent returns, static / dynamic / template-sized shared memory, callees,
    a qualified name, independent tasks or the kind of task coupling (the construct, not its variable's
    name), each blocker, parked returns, and per launch its form, explicit template arguments, macro forms
    and device-side launches; the launches of kernels not listed, and local includes;
  - the transform's report (its stderr): device functions cloned, kernels left as they are, an empty twins
    part, and each kind of warning or remark;
  - the outputs themselves: every `ptb::` name, `PTB_` macro and `__launch_bounds__` in the main output and
    in the twins part (the runtime entry points and the generated code's forms that nvcc must compile).
Then a greedy cover: repeatedly the program that adds the most features not yet covered (ties: by name),
until every feature of the corpus is covered. A program added to the corpus with a new feature is compiled
in CI from then on, without editing a list. PTB_EXHAUSTIVE_CHECKS=ON (and the GPU scripts) compile all.
  python3 test/gpu/ci_subset.py INVENTORY.json TRANSFORM.log SRC_DIR > picked.txt   (report on stderr)
"""
import json
import os
import re
import sys


def kernel_features(k):
    f = set()
    if k["template_parameters"]:
        f.add("template")
    if any("..." in t for t in k["template_parameters"]) or any(p["pack"] for p in k["parameters"]):
        f.add("template-pack")
    if len(k["instantiations"]) > 1:
        f.add("several-instantiations")
    if "::" in k["qualified_name"]:
        f.add("qualified-name")
    for name, b in k["builtins"].items():
        if b["direct"]:
            f.add(f"reads:{name}:direct")
        if b["macros"]:
            f.add(f"reads:{name}:macro")
        if b["call_chains"]:
            f.add(f"reads:{name}:call")
            if any(len(c) > 1 for c in b["call_chains"]):
                f.add(f"reads:{name}:call-chain")
    for b in k["barriers"]:
        f.add(f"barrier:{b['kind']}")
        if b["via"]:
            f.add("barrier:in-callee")
    for r in k["returns"]:
        f.add("return:uniform" if r["block_uniform"] else "return:thread-dependent")
    sm = k["shared_memory"]
    if sm["static"]:
        f.add("shared:static")
    if sm["static_bytes"] is None:
        f.add("shared:template-sized")
    if sm["dynamic"]:
        f.add("shared:dynamic")
    if k["callees"]:
        f.add("callees")
    if k["tasks_independent"]:
        f.add("tasks:independent")
    else:
        # "__shared__ tile" -> "__shared__"; "inline asm (in f)" -> "inline asm": the construct, not its name.
        coupling = re.sub(r"^__shared__ .*", "__shared__", k["task_coupling"])
        f.add("coupling:" + re.sub(r" \(in .*\)$", "", coupling))
    for b in k["blockers"]:
        f.add(f"blocker:{b['construct']}")
    f.add("ptb-eligible" if k["ptb_eligible"] else "not-eligible")
    if k["parked_returns"]:
        f.add("parked-returns")
    for launch in k["launches"]:
        f |= launch_features(launch, "launch")
        if k["template_parameters"] and not launch["template_args"]:
            f.add("launch:deduced-template-args")
    return f


def launch_features(launch, prefix):
    f = {f"{prefix}:{launch['form']}"}
    if launch["template_args"]:
        f.add(f"{prefix}:template-args")
    if launch["in_macro"]:
        f.add(f"{prefix}:in-macro")
    if launch["in_macro_definition"]:
        f.add(f"{prefix}:in-macro-definition")
    if launch["from_device_code"]:
        f.add(f"{prefix}:from-device-code")
    return f


def launch_config_arities(text):
    """The number of arguments of each `ptb::LaunchConfig(...)` the output writes (grid, block, shared, stream)."""
    arities = set()
    for m in re.finditer(r"ptb::LaunchConfig\(", text):
        depth, args, i = 1, 1, m.end()
        while i < len(text) and depth:
            c = text[i]
            depth += c in "([{"
            depth -= c in ")]}"
            args += c == "," and depth == 1
            i += 1
        arities.add(args)
    return arities


def main():
    inventory_path, log_path, src = sys.argv[1:4]
    inventory = json.load(open(inventory_path))
    log = open(log_path).read().splitlines()
    features = {}
    for entry in inventory["files"]:
        name = os.path.splitext(os.path.basename(entry["file"]))[0]
        f = set()
        for k in entry["kernels"]:
            f |= kernel_features(k)
        for launch in entry["other_launches"]:
            f |= launch_features(launch, "other-launch")
        if entry["included_files"]:
            f.add("local-includes")
        features[name] = f
    if not features:
        sys.exit("ci_subset: the inventory lists no program")
    for line in log:
        m = re.match(r"ptb-transform: .*/([^/]+)\.cu -> .*?(\.twins)?\.cu: (.*)", line)
        if m:
            name, twins, what = m.groups()
            if name not in features:
                sys.exit(f"ci_subset: the transform wrote {name}, which the inventory does not list")
            if "device function" in what:
                features[name].add("report:device-functions-cloned")
            if re.search(r"[1-9][0-9]* left as", what):
                features[name].add("report:kernel-left-as-it-is")
            if twins and "no twins apart" in what:
                features[name].add("report:no-twins-apart")
            continue
        m = re.match(r".*/([^/]+)\.cu:\d+:\d+: (warning|remark): (.*)", line)
        if m:
            name, kind, text = m.groups()
            # The kind of diagnostic: its text up to the first colon after "(no PTB twin)" or its first clause.
            text = re.sub(r"'[^']*'", "'_'", text)
            features.setdefault(name, set()).add(f"{kind}:" + text.split(": ")[0 if "(no PTB twin)" not in text else 1])
    for name in features:
        for part, suffix in (("main", ".cu"), ("twins", ".twins.cu")):
            path = os.path.join(src, name + suffix)
            if not os.path.exists(path):
                sys.exit(f"ci_subset: no transformed output {path}")
            text = open(path).read()
            for ident in set(re.findall(r"ptb::[A-Za-z_][A-Za-z0-9_:]*|PTB_[A-Z0-9_]+|__launch_bounds__", text)):
                features[name].add(f"emits-{part}:{ident}")
            for arity in launch_config_arities(text):
                features[name].add(f"emits-{part}:ptb::LaunchConfig/{arity}")
    every = set().union(*features.values())
    covered, picked = set(), []
    while covered != every:
        best = max(sorted(features), key=lambda n: len(features[n] - covered))
        new = sorted(features[best] - covered)
        picked.append(best)
        covered |= features[best]
        print(f"ci_subset: {best}: {len(new)} new: {', '.join(new)}", file=sys.stderr)
    print(f"ci_subset: {len(picked)} of {len(features)} programs cover all {len(every)} features", file=sys.stderr)
    print("\n".join(picked))
    sys.stdout.flush()


if __name__ == "__main__":
    main()

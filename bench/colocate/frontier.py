#!/usr/bin/env python3
"""The frontier of LS p99 against BE throughput, per system, from processes.sh's table (issue 42).

    python3 bench/colocate/frontier.py OUT/processes.md [MORE/processes.md ...] [--png FILE]

Each row of processes.md is one point: its LS p99 over LS solo's (same run) and BE's share of its solo
rate. Several tables (runs that each measured their own solo references, e.g. one device call each, so that
every row can have 20,000 requests) are read as one: every ratio stays within its own run. They must be of one
workload (their lines naming LS, its load and BE must be the same); a row name that comes again gets "@N" (N:
its table, from 1). Rows are grouped into systems by their names; a system's knob is what varies between its rows:

    time-slicing                      no MPS: the two processes time-slice
    mps-be<N>[-prio1]                 MPS, BE at N% of the threads (-prio1: BE at a lower client priority)
    green-be<K>                       BE in a green context of K SMs (colocate --green-sms)
    green-gate<K>                     the vendor-only gate: BE's original kernels moved at kernel boundaries
                                      between the whole GPU and a green context of K SMs, as ptb-qosd's gate
                                      says (colocate --green-gate)
    qosd-gate..., qosd-static...,     ptb-qosd's policies, with their options in the name
    qosd-feedback..., qosd-gspace...  (not the rows with two BE processes, -2be-: another BE workload)

Rows that failed a check, or lack either number, are left out (and named). For each system and each LS
p99 tolerance (1.05, 1.10, 1.25, 1.5x solo) it prints the best BE share among the system's rows within the
tolerance, and the row that gave it; then the bounds on BE's share: time-sharing, 1 - rho, where rho is LS's
busy fraction alone: the "LS busy" of the table's mps-ls-solo row (the fraction of its window the service spent
in requests; the smallest over several tables, so the highest bound), or, in a table without it, LS's load
(processes.sh runs LS at LOAD of its back-to-back capacity; a request between arrivals takes longer than back to
back, so the measured rho is higher: 0.56 at a load of 0.5, PyTorch ResNet-50 on the H100, 2026-12-07), and,
where the table has rows of LS alone with part of the GPU (mps-ls<P>: P% of the threads), spatial,
(1 - rho) + rho (1 - s) at each tolerance, s the smallest such share that kept LS within it (1 when none
did); last, ours (ptb-qosd's best) over the best peer's. Rows whose LS p99 did not repeat between the two
halves of their window (the table's "LS p99 split" above SPLIT_MAX, 1.10: issue 42 asks at most that) stay in
and are named, and so are the rows of fewer than MIN_REQUESTS (20,000) LS requests, the issue's least. --png draws each system's points and its frontier
(needs matplotlib; without it the table is still printed and a line says why there is no picture).
"""
import argparse
import re
import sys

TOLERANCES = (1.05, 1.10, 1.25, 1.5)
SPLIT_MAX = 1.10
MIN_REQUESTS = 20000


def system_of(name):
    if name == "time-slicing":
        return "time-slicing"
    m = re.fullmatch(r"mps-be(\d+)(-prio1)?", name)
    if m:
        return "MPS threads" + (", BE priority 1" if m.group(2) else "")
    if re.fullmatch(r"green-be\d+", name):
        return "green context"
    if re.fullmatch(r"green-gate\d+", name):
        return "green-context gate"
    if "-2be-" in name:
        return None  # two BE processes: another BE workload
    names = {"gate": "gate", "static": "static", "feedback": "feedback", "gspace": "G-Space"}
    m = re.match(r"qosd-(gate|static|feedback|gspace)", name)
    if m:
        return "ptb-qosd " + names[m.group(1)]
    return None  # solo rows and others


def read_rows(path):
    """(rows, load, left_out, alone, what, busy): rows are dicts with name, system, x, share and split (None where
    the table has no split); alone maps the share of the GPU LS had alone (mps-ls<P>: P / 100) to its LS p99 x solo;
    what is the table's line that names LS, its load and BE ("" when it has none); busy is the mps-ls-solo row's LS
    busy fraction (None where the table has no such cell)."""
    rows, load, left_out, alone, split_at, busy_at, what, busy = [], None, [], {}, None, None, "", None
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.search(r"at ([0-9.]+) of its solo capacity", line)
            if m:
                load, what = float(m.group(1)), line.strip()
            if line.startswith("| row "):
                header = [c.strip() for c in line.strip().strip("|").split("|")]
                split_at = header.index("LS p99 split") if "LS p99 split" in header else None
                busy_at = header.index("LS busy") if "LS busy" in header else None
                continue
            if not line.startswith("| ") or line.startswith("| ---"):
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) < 7:
                continue
            name, requests, x, share, checks = cells[0], cells[1], cells[4], cells[6], cells[-1]
            solo_busy = cells[busy_at] if name == "mps-ls-solo" and busy_at is not None and busy_at < len(cells) else ""
            if solo_busy and checks.startswith("ok"):
                busy = float(solo_busy)
            m = re.fullmatch(r"mps-ls(\d+)", name)
            if m and x and checks.startswith("ok"):
                alone[int(m.group(1)) / 100] = float(x)
                continue
            system = system_of(name)
            if system is None:
                continue
            if not x or not share or not checks.startswith("ok"):
                left_out.append(name)
                continue
            split = cells[split_at] if split_at is not None and split_at < len(cells) else ""
            rows.append({"name": name, "system": system, "x": float(x), "share": float(share),
                         "split": float(split) if split else None,
                         "requests": int(requests) if requests.isdigit() else None})
    return rows, load, left_out, alone, what, busy


def best_within(rows, tolerance):
    inside = [r for r in rows if r["x"] <= tolerance]
    return max(inside, key=lambda r: (r["share"], -r["x"])) if inside else None


def cell(row):
    return f"{row['share']:.2f} ({row['name']})" if row else "-"


def spatial_share(alone, tolerance):
    """The smallest share of the GPU that kept LS alone within the tolerance (1 when none did)."""
    inside = [s for s, x in alone.items() if x <= tolerance]
    return min(inside) if inside else 1.0


def table(rows, load, alone=None, busy=None):
    """The tables; rho is busy (measured) where given, else load."""
    systems = sorted({r["system"] for r in rows}, key=lambda s: (not s.startswith("ptb-qosd"), s))
    out = ["| system | " + " | ".join(f"LS p99 <= {t:.2f}x" for t in TOLERANCES) + " |",
           "| --- |" + " --- |" * len(TOLERANCES)]
    for s in systems:
        mine = [r for r in rows if r["system"] == s]
        cells = [cell(best_within(mine, t)) for t in TOLERANCES]
        out.append(f"| {s} | " + " | ".join(cells) + " |")
    rho = busy if busy is not None else load
    if rho is not None:
        out.append("")
        if busy is not None:
            out.append(f"Time-sharing bound on BE's share: 1 - rho = {1 - rho:.2f} (rho = {rho:.3f}, LS alone's busy "
                       f"fraction, the mps-ls-solo row's LS busy; its load: {load:g}).")
        else:
            out.append(f"Time-sharing bound on BE's share: 1 - rho = {1 - rho:.2f} (rho = LS's load, {load:g}: no "
                       f"LS busy of LS alone in the table; a load understates rho where a request between arrivals "
                       f"is slower than back to back).")
        if alone:
            out.append("")
            out.append("| tolerance | LS alone within it on (s) | spatial bound (1 - rho) + rho (1 - s) |")
            out.append("| --- | --- | --- |")
            for t in TOLERANCES:
                s = spatial_share(alone, t)
                out.append(f"| {t:.2f}x | {s:.2f} | {(1 - rho) + rho * (1 - s):.2f} |")
    ours = [r for r in rows if r["system"].startswith("ptb-qosd")]
    peers = [r for r in rows if not r["system"].startswith("ptb-qosd")]
    if ours and peers:
        out.append("")
        out.append("| tolerance | ours (best) | best peer | ours / peer |")
        out.append("| --- | --- | --- | --- |")
        for t in TOLERANCES:
            o, p = best_within(ours, t), best_within(peers, t)
            ratio = f"{o['share'] / p['share']:.2f}" if o and p and p["share"] > 0 else "-"
            out.append(f"| {t:.2f}x | {cell(o)} | {cell(p)} | {ratio} |")
    return "\n".join(out)


def frontier(points):
    """The points no other point beats on both counts (lower x, higher share), by x."""
    front, best = [], -1.0
    for r in sorted(points, key=lambda r: (r["x"], -r["share"])):
        if r["share"] > best:
            front.append(r)
            best = r["share"]
    return front


def draw(rows, rho, path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        print(f"frontier.py: no picture ({e})", file=sys.stderr)
        return False
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for s in sorted({r["system"] for r in rows}):
        mine = [r for r in rows if r["system"] == s]
        f = frontier(mine)
        line = ax.plot([r["x"] for r in f], [r["share"] for r in f], marker="o", label=s)[0]
        ax.scatter([r["x"] for r in mine], [r["share"] for r in mine], s=12, color=line.get_color(), alpha=0.5)
    if rho is not None:
        ax.axhline(1 - rho, color="gray", linestyle="--", linewidth=1, label="time-sharing bound")
    ax.set_xscale("log")
    ax.set_xlabel("LS p99 / LS solo p99")
    ax.set_ylabel("BE throughput / BE solo")
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return True


def read_tables(paths):
    """read_rows over every table, as one: (rows, load, left_out, alone, busy: the smallest LS busy of LS alone, None
    when no table has one). Raises ValueError when the tables are not
    of one workload (their lines naming LS, its load and BE differ). A row name seen in an earlier table gets "@N" (its table's number); LS alone on a share of the GPU
    keeps its worst p99 over the tables."""
    rows, load, left_out, alone, seen, first, busy = [], None, [], {}, set(), None, None
    for n, path in enumerate(paths, 1):
        r, l, lo, al, what, b = read_rows(path)
        if b is not None:
            busy = b if busy is None else min(busy, b)
        if what:
            if first is not None and what != first[1]:
                raise ValueError(f"{path}: another workload than {first[0]}'s: \"{what}\" against \"{first[1]}\"")
            first = first or (path, what)
            load = l
        for row in r:
            if row["name"] in seen:
                row["name"] += f"@{n}"
            seen.add(row["name"])
            rows.append(row)
        left_out += lo
        for share, x in al.items():
            alone[share] = max(x, alone.get(share, x))
    return rows, load, left_out, alone, busy


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tables", nargs="+", metavar="table", help="processes.sh's processes.md (one or more runs)")
    ap.add_argument("--png", help="draw the frontiers here")
    a = ap.parse_args()
    try:
        rows, load, left_out, alone, busy = read_tables(a.tables)
    except OSError as e:
        print(f"frontier.py: {e.filename}: {e.strerror}", file=sys.stderr)
        return 1
    except ValueError as e:
        print(f"frontier.py: {e}", file=sys.stderr)
        return 1
    if not rows:
        print(f"frontier.py: {', '.join(a.tables)}: no row of a system with both numbers", file=sys.stderr)
        return 1
    print(table(rows, load, alone, busy))
    if left_out:
        print(f"\nLeft out (a failed check or a missing number): {', '.join(left_out)}")
    unsteady = [r for r in rows if r["split"] is not None and r["split"] > SPLIT_MAX]
    if unsteady:
        print(f"\nLS p99 not repeated between the halves of the window (split > {SPLIT_MAX:.2f}): "
              + ", ".join(f"{r['name']} ({r['split']:.2f})" for r in unsteady))
    few = [r for r in rows if r["requests"] is not None and r["requests"] < MIN_REQUESTS]
    if few:
        print(f"\nFewer than {MIN_REQUESTS:,} LS requests (issue 42 asks at least that): "
              + ", ".join(f"{r['name']} ({r['requests']:,})" for r in few))
    if a.png:
        draw(rows, busy if busy is not None else load, a.png)
    return 0


if __name__ == "__main__":
    sys.exit(main())

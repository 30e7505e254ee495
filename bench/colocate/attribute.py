#!/usr/bin/env python3
"""Which LS requests pay for BE, and where: an LS service's own request times (ls_torch.py --dump) beside the
decisions of the ptb-qosd that gated BE in the same row (decisions_file), both on CLOCK_MONOTONIC.

  python3 attribute.py REQUESTS DECISIONS [--solo SOLO_REQUESTS]
  python3 attribute.py REQUESTS --solo SOLO_REQUESTS      (no controller: the pairing alone)

Each request is put in a class by what BE had when it arrived: nothing (the last line before the arrival is
"LS busy": the gate held BE, as LS work was in flight or LS had been idle for less than between_after_us), or
the GPU (any other line: "LS idle", "start", a limit's release), by how long BE had had it back. For each class: how many, the latency's p50 and p99 (end - arrival),
and the service's (end - start: the request's own time, without waiting behind the one before it). For the
requests that found BE on the GPU, the controller's reaction: from the request's start to the first "LS busy"
line after its arrival (counted apart when that line came before the start: the service ran other GPU work, such
as ls_torch.py's output check every 64th request, between the arrival and the start). With --solo (the same service alone, its own dump), the solo service p50 and p99 for comparison.

Then the share of the requests' span the controller held BE in, its holds a second, and the share the requests
themselves took: 1 - the held share bounds what a BE gated this way can have.

The question it answers: does a request pay when it has to move BE off the GPU (the classes "on the GPU"), and
does that cost grow with how long BE has run (its launches fill the GPU again), or does every request pay?

With --solo, where both dumps hold the same arrivals (ls_torch.py draws them from one seed), each request is also
paired with itself alone: the service by the request's position in its busy period (0: it found LS idle; k: k
requests ran before it without a break), in the row and alone, and the slowest 1% of the row's requests, their
latency against the same requests' alone, split into the wait behind earlier requests and their own service.
That says whether the row's p99 comes from the first request of a busy period (the yield) or from every queued
request's few microseconds more, which a long busy period adds up. Without DECISIONS (a row with no controller,
such as the service alone with libptb-ls preloaded), only that pairing is printed.
"""
import argparse
import bisect
import math
import sys

import quantiles  # bench/colocate/quantiles.py


def quantile(values, p):
    return quantiles.quantile(values, p, empty=float("nan"))  # "-" in the table


def read_rows(path, columns):
    rows = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) < columns:
                raise SystemExit(f"{path}:{number}: error: expected {columns} tab-separated columns")
            rows.append(parts)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("requests")
    ap.add_argument("decisions", nargs="?")
    ap.add_argument("--solo")
    a = ap.parse_args()
    try:
        reqs = [tuple(int(x) for x in r[:3]) for r in read_rows(a.requests, 3)]
        decs = [(int(r[0]), r[4]) for r in read_rows(a.decisions, 5)] if a.decisions else []
        solo = [tuple(int(x) for x in r[:3]) for r in read_rows(a.solo, 3)] if a.solo else []
    except (OSError, ValueError) as e:
        raise SystemExit(f"attribute.py: error: {e}")
    us = lambda v: "-" if math.isnan(v) else f"{v / 1e3:.1f}"
    if not a.decisions:
        if not solo:
            raise SystemExit("attribute.py: error: without DECISIONS, --solo is needed (the pairing is all it prints)")
        if not reqs:
            raise SystemExit("attribute.py: error: no requests")
        print(f"{len(reqs)} requests, no decisions (no controller): each paired with itself alone")
        return 0 if paired(reqs, solo, us) else 1
    if not reqs or not decs:
        raise SystemExit("attribute.py: error: no requests or no decisions")
    decs.sort()
    stamps = [d[0] for d in decs]
    busy = [d[0] for d in decs if d[1] == "LS busy"]
    classes = [("BE held (LS in flight or just idle)", None), ("BE on the GPU, back < 100 us", 100e3),
               ("BE on the GPU, back 100-500 us", 500e3), ("BE on the GPU, back 0.5-2 ms", 2e6),
               ("BE on the GPU, back >= 2 ms", math.inf)]
    groups = {name: [] for name, _ in classes}
    reaction = []
    outside = early = 0
    for arrival, start, end in reqs:
        i = bisect.bisect_right(stamps, arrival) - 1
        if i < 0 or decs[-1][0] < arrival:
            outside += 1  # before the controller's first decision or after its last: nothing to say
            continue
        when, why = decs[i]
        if why == "LS busy":
            groups[classes[0][0]].append((arrival, start, end))
            continue
        back = arrival - when
        for name, limit in classes[1:]:
            if back < limit:
                groups[name].append((arrival, start, end))
                break
        j = bisect.bisect_left(busy, arrival)
        if j < len(busy) and busy[j] < start:
            early += 1  # LS was marked busy between its arrival and its start: the service's other GPU work
        elif j < len(busy):
            reaction.append(busy[j] - start)
    print(f"{len(reqs)} requests, {len(decs)} decisions ({len(busy)} LS busy); {outside} requests outside the "
          f"decisions' span left out")
    print()
    print("| BE when the request arrived | requests | latency p50 (us) | latency p99 (us) | service p50 (us) | "
          "service p99 (us) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, _ in classes:
        g = groups[name]
        lat = [e - a0 for a0, _, e in g]
        svc = [e - s for _, s, e in g]
        print(f"| {name} | {len(g)} | {us(quantile(lat, 0.5))} | {us(quantile(lat, 0.99))} | "
              f"{us(quantile(svc, 0.5))} | {us(quantile(svc, 0.99))} |")
    if solo:
        svc = [e - s for _, s, e in solo]
        lat = [e - a0 for a0, _, e in solo]
        print(f"| LS alone (--solo) | {len(solo)} | {us(quantile(lat, 0.5))} | {us(quantile(lat, 0.99))} | "
              f"{us(quantile(svc, 0.5))} | {us(quantile(svc, 0.99))} |")
    print()
    print(f"The controller's yield after a request that found BE on the GPU started: p50 {us(quantile(reaction, 0.5))} "
          f"us, p99 {us(quantile(reaction, 0.99))} us ({len(reaction)} requests); {early} more found LS marked busy "
          f"before they started (other GPU work of the service's between two requests, such as its output check).")
    held, holds, span, served = held_fraction(reqs, decs)
    print()
    print(f"The controller held BE (its last line \"LS busy\") {held:.3f} of the requests' span (first arrival to "
          f"last end, {span / 1e6:.3f} ms), in {holds} holds ({holds / (span / 1e9):.0f} a second); the requests "
          f"(start to end) took {served:.3f} of it. With BE gated this way, 1 - the held fraction bounds BE's share.")
    if solo:
        paired(reqs, solo, us)
    return 0


def held_fraction(reqs, decs):
    """(held, holds, span, served): the fraction of the requests' span (first arrival to last end) whose last
    decision was "LS busy", the number of "LS busy" lines in it, the span in ns, and the fraction of it that the
    requests (start to end, their union) covered. decs sorted by time."""
    lo, hi = min(r[0] for r in reqs), max(r[2] for r in reqs)
    span = max(1, hi - lo)
    held, holds = 0, 0
    for i, (when, why) in enumerate(decs):
        until = decs[i + 1][0] if i + 1 < len(decs) else hi
        a, b = max(when, lo), min(until, hi)
        if why == "LS busy":
            held += max(0, b - a)
            holds += lo <= when <= hi
    served, end = 0, lo
    for _, start, stop in sorted(reqs, key=lambda r: r[1]):
        if stop > end:
            served += stop - max(start, end)
            end = stop
    return held / span, holds, span, served / span


def positions(rows):
    """Each request's position in its busy period: 0 when it arrived after the one before it ended."""
    out, k = [], 0
    for i, (arrival, _, _) in enumerate(rows):
        k = k + 1 if i > 0 and arrival < rows[i - 1][2] else 0
        out.append(k)
    return out


def paired(reqs, solo, us):
    print()
    same = len(reqs) == len(solo) and all(
        abs((r[0] - reqs[0][0]) - (s[0] - solo[0][0])) <= 1000 for r, s in zip(reqs, solo))
    if not same:
        print("Not paired with --solo: the two dumps do not hold the same arrivals (count or times over 1 us apart).")
        return False
    pr, ps = positions(reqs), positions(solo)
    print("Each request beside itself alone (the same arrivals), by its position in its busy period:")
    print()
    print("| position | requests | service p50 (us) | service p99 (us) | alone: requests | alone: service p50 (us) | "
          "alone: service p99 (us) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, lo, hi in [("0 (LS was idle)", 0, 0), ("1", 1, 1), ("2-3", 2, 3), ("4-7", 4, 7), (">= 8", 8, math.inf)]:
        row = [e - s0 for (_, s0, e), k in zip(reqs, pr) if lo <= k <= hi]
        alone = [e - s0 for (_, s0, e), k in zip(solo, ps) if lo <= k <= hi]
        print(f"| {name} | {len(row)} | {us(quantile(row, 0.5))} | {us(quantile(row, 0.99))} | {len(alone)} | "
              f"{us(quantile(alone, 0.5))} | {us(quantile(alone, 0.99))} |")
    n = max(1, len(reqs) // 100)
    top = sorted(range(len(reqs)), key=lambda i: reqs[i][2] - reqs[i][0])[-n:]
    mean = lambda f: sum(f(i) for i in top) / len(top)
    lat_r, lat_s = mean(lambda i: reqs[i][2] - reqs[i][0]), mean(lambda i: solo[i][2] - solo[i][0])
    wait = mean(lambda i: (reqs[i][1] - reqs[i][0]) - (solo[i][1] - solo[i][0]))
    own = mean(lambda i: (reqs[i][2] - reqs[i][1]) - (solo[i][2] - solo[i][1]))
    print()
    print(f"The slowest 1% ({n} requests): latency {us(lat_r)} us against {us(lat_s)} us alone (means); of the "
          f"{us(lat_r - lat_s)} us more, {us(wait)} waiting behind earlier requests and {us(own)} their own service; "
          f"position {mean(lambda i: pr[i]):.1f} ({mean(lambda i: ps[i]):.1f} alone).")
    return True


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Which LS requests pay for BE, and where: an LS service's own request times (ls_torch.py --dump) beside the
decisions of the ptb-qosd that gated BE in the same row (decisions_file), both on CLOCK_MONOTONIC.

  python3 attribute.py REQUESTS DECISIONS [--solo SOLO_REQUESTS]

Each request is put in a class by what BE had when it arrived: nothing (the last line before the arrival is
"LS busy": the gate held BE, as LS work was in flight or LS had been idle for less than between_after_us), or
the GPU (any other line: "LS idle", "start", a limit's release), by how long BE had had it back. For each class: how many, the latency's p50 and p99 (end - arrival),
and the service's (end - start: the request's own time, without waiting behind the one before it). For the
requests that found BE on the GPU, the controller's reaction: from the request's start to the next "LS busy"
line. With --solo (the same service alone, its own dump), the solo service p50 and p99 for comparison.

The question it answers: does a request pay when it has to move BE off the GPU (the classes "on the GPU"), and
does that cost grow with how long BE has run (its launches fill the GPU again), or does every request pay?
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
    ap.add_argument("decisions")
    ap.add_argument("--solo")
    a = ap.parse_args()
    try:
        reqs = [tuple(int(x) for x in r[:3]) for r in read_rows(a.requests, 3)]
        decs = [(int(r[0]), r[4]) for r in read_rows(a.decisions, 5)]
        solo = [tuple(int(x) for x in r[:3]) for r in read_rows(a.solo, 3)] if a.solo else []
    except (OSError, ValueError) as e:
        raise SystemExit(f"attribute.py: error: {e}")
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
    outside = 0
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
        j = bisect.bisect_left(busy, start)
        if j < len(busy):
            reaction.append(busy[j] - start)
    print(f"{len(reqs)} requests, {len(decs)} decisions ({len(busy)} LS busy); {outside} requests outside the "
          f"decisions' span left out")
    print()
    print("| BE when the request arrived | requests | latency p50 (us) | latency p99 (us) | service p50 (us) | "
          "service p99 (us) |")
    print("| --- | --- | --- | --- | --- | --- |")
    us = lambda v: "-" if math.isnan(v) else f"{v / 1e3:.1f}"
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
          f"us, p99 {us(quantile(reaction, 0.99))} us ({len(reaction)} requests).")
    return 0


if __name__ == "__main__":
    sys.exit(main())

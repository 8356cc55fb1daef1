# SPDX-License-Identifier: BSD-2-Clause
"""bench/compare A B: per configuration and size, the ratios B/A of BW,
message rate and latency (p50, p99); flags regressions beyond a threshold."""

from __future__ import annotations

import argparse
import statistics
import sys
from typing import IO, Optional, Sequence


from . import dataset

# metric -> (heading, True when higher is better)
METRICS = {"bw": ("BW", True), "rate": ("rate", True),
           "percentile_50": ("p50", False), "percentile_99": ("p99", False)}


Entry = tuple[dataset.ConfigKey, int]          # (configuration, size)
Cells = dict[str, tuple[float, float, float, bool]]


def table(rows: list[dataset.Row]) -> dict[Entry, dict[str, float]]:
    """{(config, size): {metric: median}} over the ok rows."""
    acc: dict[Entry, dict[str, list[float]]] = {}
    for key, size, m, v in dataset.values(rows):
        slot = acc.setdefault((key, size), {})
        if m in METRICS:
            slot.setdefault(m, []).append(v)
    return {k: {m: statistics.median(v) for m, v in d.items()} for k, d in acc.items()}


def compare(a_rows: list[dataset.Row], b_rows: list[dataset.Row], threshold: float
            ) -> tuple[list[tuple[dataset.ConfigKey, int, Cells]], list[Entry], list[Entry]]:
    """(entries, only_a, only_b): entries are (config, size, {metric: (a, b,
    ratio, regressed)}) for every (config, size) in both."""
    a, b = table(a_rows), table(b_rows)
    entries: list[tuple[dataset.ConfigKey, int, Cells]] = []
    for k in sorted(set(a) & set(b), key=lambda k: (str(k[0]), k[1])):
        cells: Cells = {}
        for m, (_, higher_better) in METRICS.items():
            va, vb = a[k].get(m), b[k].get(m)
            if va is None or vb is None or va == 0:
                continue
            ratio = vb / va
            bad = ratio < 1 - threshold / 100 if higher_better else ratio > 1 + threshold / 100
            cells[m] = (va, vb, ratio, bad)
        entries.append((k[0], k[1], cells))
    return entries, sorted(set(a) - set(b), key=str), sorted(set(b) - set(a), key=str)


def report(entries: list[tuple[dataset.ConfigKey, int, Cells]], only_a: list[Entry],
           only_b: list[Entry], threshold: float, out: IO[str]) -> int:
    w = max([len(dataset.config_label(c)) for c, _, _ in entries] + [13])
    print(f"{'configuration':<{w}} {'size':>8} {'BW A Gb/s':>10} {'BW B Gb/s':>10} "
          + " ".join(f"{METRICS[m][0] + ' B/A':>9}" for m in METRICS) + "  verdict", file=out)
    regressions = 0
    for cfg, size, cells in entries:
        bw: Optional[tuple[float, float, float, bool]] = cells.get("bw")
        line = (f"{dataset.config_label(cfg):<{w}} {size:>8} "
                + (f"{bw[0]:>10.3f} {bw[1]:>10.3f} " if bw else f"{'-':>10} {'-':>10} "))
        line += " ".join(f"{cells[m][2]:>9.2f}" if m in cells else f"{'-':>9}" for m in METRICS)
        bad = [METRICS[m][0] for m, c in cells.items() if c[3]]
        regressions += bool(bad)
        line += "  REGRESSION (" + ", ".join(bad) + ")" if bad else "  ok"
        print(line, file=out)
    print(f"compared {len(entries)} (configuration, size) entries: {regressions} with a "
          f"regression beyond {threshold:g}%; only in A: {len(only_a)}, only in B: {len(only_b)}",
          file=out)
    for name, keys in (("A", only_a), ("B", only_b)):
        for cfg, size in keys:
            print(f"  only in {name}: {dataset.config_label(cfg)} size {size}", file=out)
    return regressions


def main(argv: Sequence[str], out: IO[str] = sys.stdout) -> int:
    ap = argparse.ArgumentParser(prog="bench/compare",
                                 description="Ratios B/A per configuration; exit 1 when a "
                                             "regression beyond the threshold is flagged.")
    ap.add_argument("a", help="baseline dataset (file or sweep directory)")
    ap.add_argument("b", help="dataset to judge")
    ap.add_argument("--threshold", type=float, default=5.0,
                    help="percent a metric may worsen before it is flagged (default 5)")
    args = ap.parse_args(argv)
    if not 0 <= args.threshold < 100:
        print("compare: --threshold must be 0..100 (percent)", file=sys.stderr)
        return 2
    try:
        a, b = dataset.load(args.a), dataset.load(args.b)
    except (OSError, ValueError) as e:
        print(f"compare: {e}", file=sys.stderr)
        return 2
    entries, only_a, only_b = compare(a, b, args.threshold)
    if not entries:
        print(f"compare: no (configuration, size) with results in both datasets "
              f"(A: {len(only_a)}, B: {len(only_b)})", file=sys.stderr)
        return 2
    return 1 if report(entries, only_a, only_b, args.threshold, out) else 0

# SPDX-License-Identifier: BSD-2-Clause
"""bench/mesh's verdicts: the matrix of ordered pairs (text and a gnuplot
heat map), the outliers (below an absolute threshold, below a share of the
median, or worse than a baseline dataset's same pair) and the exit code
acceptance scripts read."""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
from dataclasses import dataclass
from typing import IO, Optional, Sequence

from . import dataset
from .mesh_run import metric


@dataclass
class Limits:
    min_value: Optional[float] = None      # Gb/s (BW) or usec (latency: a maximum)
    pct_of_median: Optional[float] = None  # e.g. 80: below 80 % of the median BW
    baseline_pct: Optional[float] = None   # e.g. 10: more than 10 % worse than the baseline


@dataclass
class Outlier:
    client: str
    server: str
    value: Optional[float]
    why: str


Key = tuple[str, str]    # (client, server)


def values(rows: Sequence[dataset.Row]) -> tuple[dict[Key, float], str, bool]:
    """{(client, server): value} of the ok rows (the median when a pair ran
    more than once), the unit and whether higher is better."""
    acc: dict[Key, list[float]] = {}
    unit, higher = "", True
    for r in rows:
        if r.get("status") != "ok":
            continue
        v, u, h = metric(r)
        if v is None:
            continue
        unit, higher = u, h
        acc.setdefault((r["client_host"], r["server_host"]), []).append(v)
    return {k: statistics.median(v) for k, v in acc.items()}, unit, higher


def outliers(rows: Sequence[dataset.Row], lim: Limits,
             baseline: Optional[Sequence[dataset.Row]] = None) -> list[Outlier]:
    """Failed pairs first, then the pairs a limit flags, each with its reason."""
    out: list[Outlier] = []
    for r in rows:
        if r.get("status") != "ok":
            out.append(Outlier(r["client_host"], r["server_host"], None,
                               f"failed: {r.get('error')}"))
    vals, unit, higher = values(rows)
    if not vals:
        return out
    med = statistics.median(vals.values())
    base = values(baseline)[0] if baseline else {}
    # a pair the baseline does not hold (a baseline of the node type, taken on other
    # nodes) is held against the baseline's median link
    base_med = statistics.median(base.values()) if base else None
    for (c, s), v in sorted(vals.items()):
        why = []
        if lim.min_value is not None:
            if higher and v < lim.min_value:
                why.append(f"{v:.3f} {unit} < threshold {lim.min_value:g}")
            if not higher and v > lim.min_value:
                why.append(f"{v:.3f} {unit} > threshold {lim.min_value:g}")
        if lim.pct_of_median is not None and med > 0:
            share = 100.0 * (v / med if higher else med / v if v > 0 else 0.0)
            if share < lim.pct_of_median:
                why.append(f"{share:.1f}% of the median {med:.3f} {unit} "
                           f"(< {lim.pct_of_median:g}%)")
        ref = base.get((c, s), base_med)
        if lim.baseline_pct is not None and ref:
            ratio = v / ref
            worse = (1 - ratio) * 100 if higher else (ratio - 1) * 100
            what = "the baseline's" if (c, s) in base else "the baseline's median"
            if worse > lim.baseline_pct:
                why.append(f"{worse:.1f}% worse than {what} {ref:.3f} {unit}")
        if why:
            out.append(Outlier(c, s, v, "; ".join(why)))
    return out


def node_verdicts(outs: Sequence[Outlier], nodes: Sequence[str], pairs_per_node: int
                  ) -> list[tuple[str, int]]:
    """Nodes in half or more of their pairs' outliers: the likely culprit
    (a bad cable or a slow NIC shows in every pair it is part of)."""
    count = {n: 0 for n in nodes}
    for o in outs:
        for n in {o.client, o.server}:
            count[n] = count.get(n, 0) + 1
    return sorted(((n, c) for n, c in count.items() if pairs_per_node and
                   c * 2 >= pairs_per_node and c > 0), key=lambda x: -x[1])


def matrix_text(rows: Sequence[dataset.Row], nodes: Sequence[str], out: IO[str]) -> None:
    vals, unit, _ = values(rows)
    failed = {(r["client_host"], r["server_host"]) for r in rows if r.get("status") != "ok"}
    w = max([len(n) for n in nodes] + [9])
    print(f"{unit or 'value'} per ordered pair (row: client, column: server)", file=out)
    print(f"{'':<{w}} " + " ".join(f"{n:>{w}}" for n in nodes), file=out)
    for c in nodes:
        cells = []
        for s in nodes:
            if c == s:
                cells.append(f"{'-':>{w}}")
            elif (c, s) in vals:
                cells.append(f"{vals[(c, s)]:>{w}.3f}")
            else:
                cells.append(f"{'FAILED' if (c, s) in failed else '':>{w}}")
        print(f"{c:<{w}} " + " ".join(cells), file=out)


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def matrix_png(rows: Sequence[dataset.Row], nodes: Sequence[str], path: str, title: str) -> None:
    """A heat map of the pairs (gnuplot): failed pairs and the diagonal blank."""
    vals, unit, higher = values(rows)
    failed = {(r["client_host"], r["server_host"]) for r in rows if r.get("status") != "ok"}
    n = len(nodes)
    with tempfile.TemporaryDirectory() as d:
        data = os.path.join(d, "m.dat")
        with open(data, "w") as f:     # a box per pair that ran: the rest stays blank
            for i, c in enumerate(nodes):
                for j, s in enumerate(nodes):
                    if (c, s) in vals:
                        f.write(f"{j} {i} {vals[(c, s)]!r}\n")
        labels = "".join(
            f"set label {_q(f'{vals[(c, s)]:.3g}')} at {j},{i} center front\n"
            for i, c in enumerate(nodes) for j, s in enumerate(nodes) if (c, s) in vals)
        labels += "".join(f"set label 'FAILED' at {j},{i} center front textcolor 'red'\n"
                          for i, c in enumerate(nodes) for j, s in enumerate(nodes)
                          if (c, s) in failed and (c, s) not in vals)
        tics = ", ".join(f"{_q(nm)} {k}" for k, nm in enumerate(nodes))
        palette = ("set palette defined (0 'red', 0.5 'yellow', 1 'green')" if higher else
                   "set palette defined (0 'green', 0.5 'yellow', 1 'red')")
        script = (f"set terminal pngcairo noenhanced size {320 + 90 * n},{260 + 80 * n}\n"
                  f"set output {_q(path)}\nset title {_q(title)}\n"
                  f"set xlabel 'server'\nset ylabel 'client'\n"
                  f"set xtics ({tics})\nset ytics ({tics})\n"
                  f"set xrange [-0.5:{n - 0.5}]\nset yrange [{n - 0.5}:-0.5]\n"
                  f"set cblabel {_q(unit)}\n{palette}\nset style fill solid 1.0 noborder\n"
                  f"{labels}plot {_q(data)} using 1:2:($1-0.5):($1+0.5):($2-0.5):($2+0.5):3 "
                  f"with boxxyerror fillcolor palette notitle\n")
        p = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
        if p.returncode != 0 or not os.path.exists(path):
            raise RuntimeError(f"gnuplot failed: {p.stderr.strip()[-300:]}")

# SPDX-License-Identifier: BSD-2-Clause
"""bench/plot: gnuplot PNGs from a dataset, one line per configuration:
BW vs size, message rate vs size, latency percentiles vs size."""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
from typing import Sequence

from . import dataset

LAT_PANELS = (("percentile_50", "median (p50)"), ("percentile_99", "p99"),
              ("percentile_99.9", "p99.9"))


class PlotError(Exception):
    pass


Series = dict[str, dict[dataset.ConfigKey, list[tuple[int, float]]]]


def series(rows: list[dataset.Row]) -> Series:
    """{metric: {config: [(size, median value)]}} over the ok rows."""
    acc: dict[str, dict[dataset.ConfigKey, dict[int, list[float]]]] = {}
    for key, size, metric, v in dataset.values(rows):
        acc.setdefault(metric, {}).setdefault(key, {}).setdefault(size, []).append(v)
    return {m: {k: sorted((s, statistics.median(v)) for s, v in by.items())
                for k, by in cfgs.items()}
            for m, cfgs in acc.items()}


def _q(text: str) -> str:
    """A gnuplot double-quoted string."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _sq(path: str) -> str:
    """A gnuplot single-quoted string (a quote is written twice)."""
    return "'" + path.replace("'", "''") + "'"


def _terminal() -> str:
    p = subprocess.run(["gnuplot", "-e", "set terminal pngcairo"], capture_output=True,
                       text=True)
    return "pngcairo" if p.returncode == 0 and not p.stderr.strip() else "png"


def _plot_cmd(datadir: str, metric: str, cfgs: dict[dataset.ConfigKey, list[tuple[int, float]]],
              names: dict[dataset.ConfigKey, int]) -> str:
    parts = []
    for i, key in enumerate(sorted(cfgs, key=str)):
        path = os.path.join(datadir, f"{metric}-{names.setdefault(key, len(names))}.dat")
        with open(path, "w") as f:
            f.write(f"# {dataset.config_label(key)}\n# size {metric}\n")
            for size, v in cfgs[key]:
                f.write(f"{size} {v!r}\n")
        parts.append(f"{_sq(path)} using 1:2 with linespoints lw 2 pt {7 + i % 6} "
                     f"title {_q(dataset.config_label(key))}")
    return "plot " + ", \\\n     ".join(parts) + "\n"


def script(out_dir: str, data: Series, term: str) -> tuple[str, list[str]]:
    """(gnuplot script, [png paths]) for what data holds."""
    datadir = os.path.join(out_dir, "data")
    os.makedirs(datadir, exist_ok=True)
    names: dict[dataset.ConfigKey, int] = {}
    pngs: list[str] = []
    head = (f"set terminal {term} size 1100,650 noenhanced\n"
            "set logscale x 2\nset grid\nset key below\n"
            "set xlabel 'message size [bytes]'\nset format x '%.0f'\nset xtics rotate by -45\n")
    s = ""
    for metric, title, ylabel, name in (
            ("bw", "Bandwidth vs message size", "BW average [Gb/s]", "bw_vs_size.png"),
            ("rate", "Message rate vs message size", "message rate [Mpps]",
             "msgrate_vs_size.png")):
        if data.get(metric):
            png = os.path.join(out_dir, name)
            s += head + f"set output {_sq(png)}\nset title {_q(title)}\nset ylabel {_q(ylabel)}\n"
            s += _plot_cmd(datadir, metric, data[metric], names) + "unset output\n"
            pngs.append(png)
    panels = [(m, t) for m, t in LAT_PANELS if data.get(m)]
    if panels:
        png = os.path.join(out_dir, "latency_vs_size.png")
        s += head.replace("size 1100,650", f"size 1100,{420 * len(panels)}")
        s += f"set output {_sq(png)}\nset multiplot layout {len(panels)},1\n"
        for metric, title in panels:
            s += f"set title {_q('latency ' + title + ' vs message size')}\n"
            s += "set ylabel 'latency [usec]'\n" + _plot_cmd(datadir, metric, data[metric], names)
        s += "unset multiplot\nunset output\n"
        pngs.append(png)
    return s, pngs


def plot(rows: list[dataset.Row], out_dir: str) -> list[str]:
    """Write the PNGs (and plots.gp, data/) into out_dir; returns the PNG paths."""
    if not shutil.which("gnuplot"):
        raise PlotError("gnuplot not found: install the Debian package gnuplot-nox (ci/deps)")
    data = series(rows)
    if not data:
        ok = sum(r.get("status") == "ok" for r in rows)
        raise PlotError(f"nothing to plot: {len(rows)} rows, {ok} ok, none with results")
    os.makedirs(out_dir, exist_ok=True)
    text, pngs = script(out_dir, data, _terminal())
    gp = os.path.join(out_dir, "plots.gp")
    with open(gp, "w") as f:
        f.write(text)
    p = subprocess.run(["gnuplot", gp], capture_output=True, text=True)
    if p.returncode != 0:
        raise PlotError(f"gnuplot failed ({p.returncode}): {p.stderr.strip()[-500:]}")
    for png in pngs:
        with open(png, "rb") as f:
            if f.read(8) != b"\x89PNG\r\n\x1a\n":
                raise PlotError(f"gnuplot wrote no PNG to {png}")
    return pngs


def main(argv: Sequence[str]) -> int:
    ap = argparse.ArgumentParser(prog="bench/plot",
                                 description="PNG plots of a sweep dataset (gnuplot).")
    ap.add_argument("dataset", help="dataset.jsonl, dataset.csv or a sweep output directory")
    ap.add_argument("-o", "--out", required=True, help="directory for the PNGs")
    args = ap.parse_args(argv)
    try:
        rows = dataset.load(args.dataset)
    except (OSError, ValueError) as e:
        print(f"plot: cannot read {args.dataset}: {e}", file=sys.stderr)
        return 2
    try:
        for png in plot(rows, args.out):
            print(png)
    except (PlotError, OSError) as e:
        print(f"plot: {e}", file=sys.stderr)
        return 1
    return 0

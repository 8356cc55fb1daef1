# SPDX-License-Identifier: BSD-2-Clause
"""bench/mesh: a traffic pattern over N nodes in rounds of parallel pairs, through
the lab, OpenSSH or Slurm; a dataset row per pair, a matrix, the outliers and an
exit code (0: every pair ran and none is an outlier; 1: a pair failed or is an
outlier; 2: bad usage, nothing run). See bench/README.md."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from typing import Optional, Sequence

from . import dataset, mesh_plan, mesh_report
from .launchers import LauncherError
from .mesh_nodes import LabNodes, Nodes, SlurmNodes, SshNodes
from .mesh_run import Mesh


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="bench/mesh", description="All pairs (or another pattern) of N nodes, in rounds.",
        epilog="Arguments after -- go to the tool on both sides (e.g. -- -x 1 -n 200 -F).")
    p.add_argument("--pattern", default="all-pairs",
                   help="all-pairs, one-to-many:HOST, many-to-one:HOST, ring or file:PATH "
                        "(a round per line: CLIENT>SERVER ...)")
    p.add_argument("--disjoint", action="store_true",
                   help="no node in two pairs of a round (all-pairs: 2(n-1) rounds)")
    p.add_argument("--launcher", choices=("lab", "ssh", "slurm"), default="lab")
    p.add_argument("--nodes", default="",
                   help="comma-separated node names (ssh: [user@]host; slurm: node names, "
                        "default: the allocation's); lab: a count (default: all)")
    p.add_argument("--addr", default="",
                   help="NODE=ADDRESS,...: the address a client uses for NODE's server")
    p.add_argument("--tool", required=True, help="the perftest binary (any build) on every node")
    p.add_argument("--out", required=True, help="output directory (new)")
    p.add_argument("--port", type=int, default=18515)
    p.add_argument("--timeout", type=float, default=300, help="each pair's bound, s")
    p.add_argument("--round-timeout", type=float, default=None,
                   help="each round's bound, s (default: --timeout + 120)")
    p.add_argument("--threshold", type=float, default=None,
                   help="a pair below this BW (Gb/s; latency tools: above this usec) fails")
    p.add_argument("--pct-of-median", type=float, default=None,
                   help="a pair below this %% of the median BW fails")
    p.add_argument("--baseline", default=None, help="an earlier mesh dataset of these pairs")
    p.add_argument("--baseline-pct", type=float, default=10.0,
                   help="with --baseline: a pair this %% worse than its baseline fails")
    p.add_argument("--cpu-bind", default=None, help="slurm: srun --cpu-bind value")
    p.add_argument("--nic-local", metavar="DEVICE", default=None,
                   help="run each side with numactl on DEVICE's NUMA node (any launcher)")
    p.add_argument("--partition", default=None, help="slurm: partition for salloc")
    p.add_argument("--ssh", default="ssh", help="ssh command (e.g. 'ssh -i KEY -p 22')")
    p.add_argument("--remote-dir", default=None,
                   help="ssh: where each host writes its JSON (a new folder under it; default /tmp)")
    p.add_argument("--lab-cmd", default=None, help="another ci/lab")
    p.add_argument("--dry-run", action="store_true", help="print the rounds, run nothing")
    p.add_argument("tool_args", nargs=argparse.REMAINDER)
    return p


def _addrs(spec: str) -> dict[str, str]:
    out = {}
    for item in filter(None, (s.strip() for s in spec.split(","))):
        if "=" not in item:
            raise ValueError(f"--addr: '{item}' is not NODE=ADDRESS")
        k, v = item.split("=", 1)
        out[k] = v
    return out


def make_nodes(a: argparse.Namespace) -> Nodes:
    names = [n for n in (s.strip() for s in a.nodes.split(",")) if n]
    if a.launcher == "lab":
        if names and (len(names) != 1 or not names[0].isdigit()):
            raise LauncherError("--launcher lab: --nodes is a count of lab nodes")
        return LabNodes(int(names[0]) if names else 0, a.lab_cmd)
    if a.launcher == "ssh":
        if len(names) < 2:
            raise LauncherError("--launcher ssh needs --nodes HOST1,HOST2,...")
        return SshNodes(names, a.ssh, _addrs(a.addr), a.remote_dir)
    return SlurmNodes(names, os.path.abspath(os.path.join(a.out, "json")), a.cpu_bind,
                      a.partition, _addrs(a.addr))


def main(argv: Sequence[str]) -> int:
    a = parser().parse_args(argv)
    args = a.tool_args[1:] if a.tool_args[:1] == ["--"] else a.tool_args
    try:
        _addrs(a.addr)
        rounds_text = None
        if a.pattern.startswith("file:"):
            with open(a.pattern[5:]) as f:
                rounds_text = f.read()
        baseline = dataset.load(a.baseline) if a.baseline else None
    except (OSError, ValueError) as e:
        print(f"bench/mesh: {e}", file=sys.stderr)
        return 2
    if a.dry_run:
        names = [n for n in (s.strip() for s in a.nodes.split(",")) if n]
        if a.launcher == "lab" and names[:1] and names[0].isdigit():
            names = [f"node{i}" for i in range(1, int(names[0]) + 1)]
        try:
            rounds = mesh_plan.plan(a.pattern, names, a.disjoint, rounds_text)
        except mesh_plan.PlanError as e:
            print(f"bench/mesh: {e}", file=sys.stderr)
            return 2
        for k, r in enumerate(rounds, 1):
            print(f"round {k}: " + " ".join(str(l) for l in r))
        print(f"{len(rounds)} rounds, {sum(len(r) for r in rounds)} pairs")
        return 0
    if os.path.exists(os.path.join(a.out, "dataset.jsonl")):
        print(f"bench/mesh: {a.out} holds a dataset already: give a new directory",
              file=sys.stderr)
        return 2
    if not shutil.which("gnuplot"):
        print("bench/mesh: gnuplot is missing (ci/deps installs it)", file=sys.stderr)
        return 2
    os.makedirs(os.path.join(a.out, "json"), exist_ok=True)
    try:
        nodes = make_nodes(a)
    except (LauncherError, OSError) as e:
        print(f"bench/mesh: {e}", file=sys.stderr)
        return 2
    try:
        try:
            rounds = mesh_plan.plan(a.pattern, nodes.names, a.disjoint, rounds_text)
        except mesh_plan.PlanError as e:
            print(f"bench/mesh: {e}", file=sys.stderr)
            return 2
        return _run(a, args, nodes, rounds, baseline)
    finally:
        nodes.close()


def _run(a: argparse.Namespace, args: Sequence[str], nodes: Nodes,
         rounds: list[mesh_plan.Round], baseline: Optional[list[dataset.Row]]) -> int:
    npairs = sum(len(r) for r in rounds)
    print(f"bench/mesh: {a.pattern}{' (disjoint)' if a.disjoint else ''} over "
          f"{len(nodes.names)} nodes ({', '.join(nodes.names)}) through {nodes.name}: "
          f"{npairs} pairs in {len(rounds)} rounds", flush=True)
    mesh = Mesh(nodes, a.tool, args, a.out, a.pattern, a.port, a.timeout, nic_dev=a.nic_local)
    writer = dataset.Writer(a.out)
    t0 = time.monotonic()
    try:
        rows = mesh.run(rounds, writer, a.round_timeout)
    finally:
        writer.close()
    wall = time.monotonic() - t0
    eff = mesh_plan.efficiency(mesh.round_times)
    ok_times = [float(r["elapsed_s"]) for r in rows if r["status"] == "ok" and r["elapsed_s"]]
    one = statistics.median(ok_times) if ok_times else None
    mesh_report.matrix_text(rows, nodes.names, sys.stdout)
    png = os.path.join(a.out, "matrix.png")
    try:
        mesh_report.matrix_png(rows, nodes.names, png,
                               f"{os.path.basename(a.tool)} {' '.join(args)} - {a.pattern} "
                               f"over {len(nodes.names)} nodes ({nodes.name})")
        print(f"matrix: {png}")
    except RuntimeError as e:
        print(f"bench/mesh: no matrix picture: {e}", file=sys.stderr)
    lim = mesh_report.Limits(a.threshold, a.pct_of_median,
                             a.baseline_pct if baseline is not None else None)
    outs = mesh_report.outliers(rows, lim, baseline)
    per_node = 2 * (len(nodes.names) - 1) if a.pattern == "all-pairs" else 0
    for o in outs:
        print(f"outlier: {o.client}>{o.server}: {o.why}")
    for n, c in mesh_report.node_verdicts(outs, nodes.names, per_node):
        print(f"suspect node: {n} (in {c} of its {per_node} pairs' outliers)")
    eff_s = f"{eff:.2f}" if eff is not None else "n/a"
    ideal = f"{len(rounds)} rounds x one pair's median {one:.1f} s = {len(rounds) * one:.1f} s" \
        if one else "no pair finished"
    print(f"schedule: wall {wall:.1f} s for {npairs} pairs; {ideal}; efficiency {eff_s} "
          f"(pair-seconds / (pairs x round time))")
    summary = {"pattern": a.pattern, "disjoint": a.disjoint, "nodes": nodes.names,
               "rounds": len(rounds), "pairs": npairs,
               "ok": sum(r["status"] == "ok" for r in rows), "wall_s": round(wall, 3),
               "efficiency": eff, "one_pair_median_s": one,
               "outliers": [o.__dict__ for o in outs], **nodes.describe()}
    with open(os.path.join(a.out, "mesh.json"), "w") as f:
        json.dump(summary, f, indent=2)
    failed = sum(r["status"] != "ok" for r in rows)
    print(f"mesh: {npairs} pairs, {npairs - failed} ok, {failed} failed, {len(outs)} outliers; "
          f"dataset {writer.jsonl_path}")
    return 1 if outs else 0

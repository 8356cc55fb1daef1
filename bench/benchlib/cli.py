# SPDX-License-Identifier: BSD-2-Clause
"""Command lines of bench/sweep (bench/plot and bench/compare have their own
modules): options, defaults per launcher, and the dry run."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from typing import Sequence

from . import launchers, matrix, runner

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def build_dir() -> str:
    return os.environ.get("PT_BUILD") or os.path.join(TOP, "build")


def sweep_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="bench/sweep", allow_abbrev=False,
        description="Run a matrix of perftest runs; write dataset.jsonl and dataset.csv "
                    "(see bench/README.md). Every matrix key is also an option; "
                    "options override the file.")
    p.add_argument("--matrix", help="matrix file (key = item, item lines)")
    p.add_argument("--launcher", default="local", choices=("local", "lab", "ssh"))
    p.add_argument("--out", required=True, help="output directory (must hold no dataset)")
    p.add_argument("--dry-run", action="store_true", help="print the runs and stop")
    p.add_argument("--nicinfo", help="nicinfo binary (default $PT_BUILD/bench/nicinfo)")
    p.add_argument("--lab-cmd", default=os.path.join(TOP, "ci", "lab"), help=argparse.SUPPRESS)
    p.add_argument("--ssh-cmd", default="ssh", help="ssh client command (default ssh)")
    for key in list(matrix.LISTS) + list(matrix.SETTINGS):
        p.add_argument("--" + key, metavar="V", help=argparse.SUPPRESS)
    return p


def load_matrix(args: argparse.Namespace) -> matrix.Matrix:
    raw: matrix.Raw = {}
    if args.matrix:
        try:
            with open(args.matrix) as f:
                raw = matrix.parse_text(f.read(), args.matrix)
        except OSError as e:
            raise matrix.MatrixError(f"cannot read {args.matrix}: {e.strerror}") from None
    for key in list(matrix.LISTS) + list(matrix.SETTINGS):
        v = getattr(args, key)
        if v is not None:
            if not v.strip():
                raise matrix.MatrixError(f"--{key}: empty value")
            raw[key] = (v, f"--{key}")
    # The lab's rxe0 wants GID index 1 (its IPv4-mapped RoCE v2 GID).
    if args.launcher == "lab":
        raw.setdefault("device", ("rxe0", "lab default"))
        raw.setdefault("gid_index", ("1", "lab default"))
    return matrix.build(raw)


def check_binaries(mx: matrix.Matrix, runs: list[matrix.Run], bindir: str, peer_bindir: str,
                   nicinfo: str, launcher: str) -> None:
    """Local and lab ends see this host's files: catch a missing tool now."""
    if launcher == "ssh":
        return
    need = {nicinfo} | {os.path.join(d, r["tool"]) for r in runs for d in (bindir, peer_bindir)}
    missing = sorted(p for p in need if not os.access(p, os.X_OK))
    if missing:
        raise matrix.MatrixError("not found or not executable: " + ", ".join(missing) +
                                 " (build with ci/build, or set bindir / --nicinfo)")


def dry_run(mx: matrix.Matrix, runs: list[matrix.Run], skipped: list[tuple[matrix.Run, str]],
            bindir: str, peer_bindir: str) -> None:
    s = mx.settings
    for r, why in skipped:
        print(f"skip: {matrix.label(r)}: {why}")
    for i, r in enumerate(runs):
        port = s["port"] + i % runner.PORT_SPAN
        print(f"[{i + 1}/{len(runs)}] {matrix.label(r)}")
        for side, d in (("server", peer_bindir), ("client", bindir)):
            a = matrix.tool_args(r, s, side, f"<{side}.json>", port, "<server address>")
            print(f"    {side}: <numactl for {r['placement']}> "
                  + shlex.join([os.path.join(d, r["tool"])] + a))
    print(f"{len(runs)} runs, {len(skipped)} combinations skipped")


def sweep_main(argv: Sequence[str]) -> int:
    args = sweep_parser().parse_args(argv)
    try:
        mx = load_matrix(args)
        runs, skipped = mx.expand()
        if not runs:
            raise matrix.MatrixError(f"the matrix expands to no runs ({len(skipped)} skipped)")
        bindir: str = mx.settings["bindir"] or os.path.join(build_dir(), "perftest")
        peer_bindir: str = mx.settings["peer_bindir"] or bindir
        nicinfo: str = args.nicinfo or os.path.join(build_dir(), "bench", "nicinfo")
        if args.dry_run:
            dry_run(mx, runs, skipped, bindir, peer_bindir)
            return 0
        out = os.path.abspath(args.out)
        if os.path.exists(os.path.join(out, "dataset.jsonl")):
            raise matrix.MatrixError(f"{out} already holds a dataset: give a new --out")
        check_binaries(mx, runs, bindir, peer_bindir, nicinfo, args.launcher)
        os.makedirs(out, exist_ok=True)
        la = launchers.make(args.launcher, out, mx.settings, args.lab_cmd, args.ssh_cmd)
        sw = runner.Sweep(mx, la, out, nicinfo, bindir, peer_bindir)
        return sw.run(runs, skipped)
    except (matrix.MatrixError, launchers.LauncherError) as e:
        print(f"sweep: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("sweep: interrupted; the dataset holds the runs finished so far", file=sys.stderr)
        return 130

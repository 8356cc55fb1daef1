# SPDX-License-Identifier: BSD-2-Clause
"""bench/interop: every ordered (server, client) pair of named perftest
builds, per tool and mode, one cell each; a table of verdicts (see
verdict.py) and interop.json / interop.csv. See bench/README.md."""

from __future__ import annotations

import argparse
import csv
import fnmatch
import json
import os
import re
import shlex
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import IO, Any, Optional, Sequence, Union

from . import launchers, matrix, runner, verdict

TOOLS = [f"ib_{v}_{k}" for v in ("send", "write", "read", "atomic") for k in ("bw", "lat")]
# What the server end prints: a row per size, the client's final row, none.
SERVER_ROWS = {"ib_send_bw": "all", "ib_send_lat": "all", "ib_write_lat": "all",
               "ib_write_bw": "last", "ib_read_bw": "last", "ib_atomic_bw": "last",
               "ib_read_lat": "none", "ib_atomic_lat": "none"}
BASES = {"rc": "RC", "uc": "UC", "ud": "UD", "mcast": "UD"}
DEFAULT_MODES = "rc, uc, ud, rc+a, rc+q4, rc+old, ud+old, mcast"
DEFAULT_MGID = "225.1.1.20"
MODE_HELP = ("BASE[+MOD...]: BASE rc, uc, ud or mcast (UD multicast: -c UD -g -M MGID); "
             "MOD a (-a), qN (-q N), old (--use_old_post_send), z (-z: OOB over rdma_cm), "
             "R (-R: data QPs by rdma_cm), hugepages (--use_hugepages), "
             "mr_per_qp (--mr_per_qp), rate_limit (--rate_limit 0.02 --rate_limit_type SW: "
             "a SW-paced sender, BW tools), reversed (--reversed: the server sends, BW tools)")
# rate_limit's rate: about a third of the lab link's ~0.06 Gb/s, SW (rxe has no packet pacing)
RATE_LIMIT_ARGS = ["--rate_limit", "0.02", "--rate_limit_type", "SW"]
NAME_RE = re.compile(r"[A-Za-z0-9_.-]+")
# Runs the tool and says its exit status last, as the far side's shell saw it
# (128 + N for signal N), whatever ssh or ci/lab make of a signal.
WRAP = '"$@"; s=$?; echo "' + verdict.EXIT_MARK + '$s" >&2; exit $s'
STATUSES = ("pass", "fail", "xfail", "xpass", "flake")


class InteropError(Exception):
    """Bad input: said before anything runs (exit 2)."""


@dataclass(frozen=True)
class Mode:
    base: str
    all_sizes: bool = False
    qps: int = 1
    old: bool = False
    cm: str = ""            # "", "z" or "R"
    hugepages: bool = False     # --use_hugepages (both ends need vm.nr_hugepages)
    mr_per_qp: bool = False     # --mr_per_qp
    rate_limit: bool = False  # RATE_LIMIT_ARGS on both sides
    reversed: bool = False    # --reversed on both sides

    @property
    def name(self) -> str:
        mods = (["a"] if self.all_sizes else []) + ([f"q{self.qps}"] if self.qps > 1 else []) \
            + (["old"] if self.old else []) + ([self.cm] if self.cm else []) \
            + (["hugepages"] if self.hugepages else []) + (["mr_per_qp"] if self.mr_per_qp else []) \
            + (["rate_limit"] if self.rate_limit else []) + (["reversed"] if self.reversed else [])
        return "+".join([self.base] + mods)

    @property
    def conn(self) -> str:
        return BASES[self.base]

    def args(self, mgid: str) -> list[str]:
        by_base: dict[str, list[str]] = {"rc": [], "uc": ["-c", "UC"], "ud": ["-c", "UD"],
                                         "mcast": ["-c", "UD", "-g", "-M", mgid]}
        a = by_base[self.base]
        a = list(a) + (["-a"] if self.all_sizes else [])
        a += ["-q", str(self.qps)] if self.qps > 1 else []
        a += ["--use_old_post_send"] if self.old else []
        a += ["--use_hugepages"] if self.hugepages else []
        a += ["--mr_per_qp"] if self.mr_per_qp else []
        a += RATE_LIMIT_ARGS if self.rate_limit else []
        a += ["--reversed"] if self.reversed else []
        return a + ([f"-{self.cm}"] if self.cm else [])


def parse_mode(text: str) -> Mode:
    parts = text.strip().split("+")
    if parts[0] not in BASES:
        raise InteropError(f"mode '{text}': unknown base '{parts[0]}' ({MODE_HELP})")
    kw: dict[str, Any] = {}
    seen: set[str] = set()
    for m in parts[1:]:
        key = "q" if re.fullmatch(r"q\d+", m) else m
        if key in seen:
            raise InteropError(f"mode '{text}': '{key}' given twice")
        seen.add(key)
        if m == "a":
            kw["all_sizes"] = True
        elif m in ("old", "hugepages", "mr_per_qp", "rate_limit", "reversed"):
            kw[m] = True
        elif m in ("z", "R"):
            if "cm" in kw:
                raise InteropError(f"mode '{text}': z and R do not combine")
            kw["cm"] = m
        elif key == "q" and 2 <= int(m[1:]) <= 64:
            kw["qps"] = int(m[1:])
        else:
            raise InteropError(f"mode '{text}': unknown modifier '{m}' ({MODE_HELP}; "
                               "qN takes 2..64)")
    return Mode(parts[0], **kw)


def mode_refusal(tool: str, mode: Mode) -> Optional[str]:
    """Why tool does not run mode (as upstream's tools refuse it), or None."""
    why = matrix.refusal({"tool": tool, "conn": mode.conn, "qps": mode.qps,
                          "size": "all" if mode.all_sizes else None, "duration": None})
    if why:
        return why
    if mode.base == "mcast" and not tool.startswith("ib_send_"):
        return f"{tool} has no multicast (send tools only)"
    if mode.base == "mcast" and mode.cm:
        return "multicast is not run over rdma_cm here"
    if (mode.rate_limit or mode.reversed) and not tool.endswith("_bw"):
        return f"{tool}: the rate limiter and --reversed are BW tools' options (as upstream)"
    if mode.cm == "R" and mode.conn == "UC":
        return "rdma_cm has no UC"
    return None


def parse_tools(text: str) -> list[str]:
    if text.strip() == "all":
        return list(TOOLS)
    out: list[str] = []
    for t in matrix.split_items(text):
        full = t if t.startswith("ib_") else "ib_" + t
        if full not in TOOLS:
            raise InteropError(f"unknown tool '{t}' (all, or some of: {', '.join(TOOLS)})")
        if full not in out:
            out.append(full)
    return out


def parse_bins(items: Optional[Sequence[str]]) -> dict[str, str]:
    """['NAME=DIR', ...] -> {name: dir}, in order."""
    bins: dict[str, str] = {}
    for it in items or []:
        name, sep, path = it.partition("=")
        if not sep or not name or not path:
            raise InteropError(f"--bin '{it}': expected NAME=DIR (e.g. up=/usr/bin)")
        if not NAME_RE.fullmatch(name):
            raise InteropError(f"--bin '{it}': a name is letters, digits, '_', '.' or '-'")
        if name in bins:
            raise InteropError(f"--bin: the name '{name}' is given twice")
        bins[name] = os.path.abspath(path)
    if not bins:
        raise InteropError("no binaries: give --bin NAME=DIR at least once")
    return bins


def parse_pairs(text: Optional[str], names: list[str], no_self: bool) -> list[tuple[str, str]]:
    if text:
        pairs: list[tuple[str, str]] = []
        for p in matrix.split_items(text):
            s, sep, c = p.partition(":")
            if not sep or s not in names or c not in names:
                raise InteropError(f"--pairs: '{p}' is not SERVER:CLIENT of the --bin names "
                                   f"({', '.join(names)})")
            pairs.append((s, c))
        return pairs
    pairs = [(s, c) for s in names for c in names if not (no_self and s == c)]
    if not pairs:
        raise InteropError("no pairs: --no-self with a single --bin leaves nothing to run")
    return pairs


def parse_patterns(items: Optional[Sequence[str]], what: str,
                   need_value: bool) -> list[tuple[str, str]]:
    """'CELL=TEXT' items (CELL a glob over TOOL/MODE/SERVER:CLIENT) -> [(glob, text)]."""
    out: list[tuple[str, str]] = []
    for it in items or []:
        pat, sep, text = it.partition("=")
        if not pat or (need_value and not text.strip()):
            raise InteropError(f"{what} '{it}': expected TOOL/MODE/SERVER:CLIENT"
                               f"{'=REASON' if need_value else '[=NOTE]'} (globs allowed)")
        out.append((pat, text.strip()))
    return out


@dataclass
class Cell:
    tool: str
    mode: Mode
    server: str
    client: str

    @property
    def id(self) -> str:
        return f"{self.tool}/{self.mode.name}/{self.server}:{self.client}"


Skipped = list[tuple[str, str, str]]


def plan(tools: list[str], modes: list[Mode], pairs: list[tuple[str, str]],
         only: list[str]) -> tuple[list[Cell], Skipped]:
    """(cells, skipped): skipped is [(tool, mode, why)] of combinations the
    tools refuse. only: globs over TOOL/MODE, or over the whole cell id
    TOOL/MODE/SERVER:CLIENT when they have two slashes."""
    cells: list[Cell] = []
    skipped: Skipped = []
    used: set[str] = set()
    for tool in tools:
        for mode in modes:
            why = mode_refusal(tool, mode)
            if why:
                skipped.append((tool, mode.name, why))
                continue
            for s, c in pairs:
                cell = Cell(tool, mode, s, c)
                hit = [g for g in only if fnmatch.fnmatchcase(
                    cell.id if g.count("/") == 2 else f"{tool}/{mode.name}", g)]
                used.update(hit)
                if hit or not only:
                    cells.append(cell)
    unused = [g for g in only if g not in used]
    if unused:
        raise InteropError(f"--only {unused[0]}: matches no cell the tools run "
                           "(TOOL/MODE or TOOL/MODE/SERVER:CLIENT)")
    if not cells:
        raise InteropError("no cells to run: " + ("; ".join(f"{t} {m}: {w}" for t, m, w in skipped)
                                                  or "nothing selected"))
    return cells, skipped


def judge(cell_id: str, v: verdict.Verdict, expects: list[tuple[str, str]],
          flakies: list[tuple[str, str]]) -> tuple[str, str]:
    """(status, note) of a cell's verdict given --expect and --flaky:
    pass, fail, xfail (failed as expected), xpass (passed, expected to
    fail), flake (failed, a known flaky cell)."""
    for pat, reason in expects:
        if fnmatch.fnmatchcase(cell_id, pat):
            if v.ok:
                return "xpass", f"expected {reason}"
            if v.reason.startswith(reason):
                return "xfail", "expected"
            return "fail", f"expected {reason}"
    for pat, note in flakies:
        if fnmatch.fnmatchcase(cell_id, pat) and not v.ok:
            return "flake", note or "known flake"
    return ("pass" if v.ok else "fail"), ""


Record = dict[str, Any]


def cell_text(c: Record) -> str:
    """The short text of a cell record in the table."""
    if c["status"] == "pass":
        return "pass"
    reason = str(c["reason"]) + (f" ({', '.join(c['notes'])})" if c["notes"] else "")
    if c["status"] == "xpass":
        return f"PASS, {c['note']}"
    return f"FAIL: {reason}" + (f" ({c['note']})" if c["note"] else "")


def summary(cells: list[Record], total: Optional[int] = None) -> tuple[str, dict[str, int]]:
    n = {s: sum(c["status"] == s for c in cells) for s in STATUSES}
    fails = n["fail"] + n["xfail"] + n["flake"]
    s = f"{total or len(cells)} cells: {n['pass'] + n['xpass']} pass, {fails} fail"
    extra = [f"{n['xfail']} expected"] if n["xfail"] else []
    extra += [f"{n['flake']} known flake{'s' if n['flake'] != 1 else ''}"] if n["flake"] else []
    s += f" ({', '.join(extra)})" if extra else ""
    if n["xpass"]:
        s += f"; {n['xpass']} expected to fail passed"
    if total and total != len(cells):
        s += f"; {total - len(cells)} not run"
    return s, n


def table(cells: list[Record], pairs: list[tuple[str, str]]) -> str:
    """Rows tool x mode, columns SERVER:CLIENT."""
    cols = [f"{s}:{c}" for s, c in pairs]
    rows: list[tuple[str, str]] = []
    grid: dict[tuple[str, str], dict[str, str]] = {}
    for c in cells:
        key = (c["tool"], c["mode"])
        if key not in grid:
            grid[key] = {}
            rows.append(key)
        grid[key][f"{c['server']}:{c['client']}"] = cell_text(c)
    head = ["tool", "mode"] + cols
    body = [[t, m] + [grid[(t, m)].get(col, "-") for col in cols] for t, m in rows]
    w = [max(len(r[i]) for r in [head] + body) for i in range(len(head))]

    def fmt(r: list[str]) -> str:
        return "  ".join(x.ljust(w[i]) for i, x in enumerate(r)).rstrip()
    return "\n".join([fmt(head)] + [fmt(r) for r in body])


CSV_FIELDS = ("id", "tool", "mode", "server", "client", "status", "reason", "notes", "note",
              "detail", "server_rc", "client_rc", "server_stopped", "client_stopped",
              "harness_error", "elapsed_s", "port", "server_cmd", "client_cmd",
              "server_rows", "client_rows")


class Interop:
    def __init__(self, launcher: Addressed, bins: dict[str, str], cells: list[Cell],
                 opts: argparse.Namespace, out_dir: str, err: IO[str] = sys.stderr) -> None:
        self.la, self.bins, self.cells, self.o = launcher, bins, cells, opts
        self.out_dir, self.err = out_dir, err
        self.logs = os.path.join(out_dir, "logs")
        self.records: list[Record] = []
        self.versions: dict[str, Optional[str]] = {}

    def say(self, text: str) -> None:
        print(text, file=self.err, flush=True)

    def tool_args(self, cell: Cell, side: str, port: int) -> list[str]:
        o = self.o
        a = (["-d", o.device] if o.device else []) \
            + (["-i", str(o.ib_port)] if o.ib_port != 1 else []) \
            + (["-x", str(o.gid_index)] if o.gid_index is not None else []) + ["-F"]
        a += cell.mode.args(o.mgid)
        a += ["-s", str(o.size)] if self.sized(cell) else []
        a += ["-n", str(self.iters(cell))] if self.iters(cell) else []
        a += ["-p", str(port)] + shlex.split(o.extra or "")
        return a + ([self.la.server_addr()] if side == "client" else [])

    def iters(self, cell: Cell) -> Optional[int]:
        """-n of the cell: --all-iters for -a when given, else --iters (None: the tools')."""
        n: Optional[int] = (self.o.all_iters if cell.mode.all_sizes and self.o.all_iters
                            else self.o.iters)
        return n

    def sized(self, cell: Cell) -> bool:
        """--size applies to RC and UC cells but -a and the atomics (8 bytes);
        UD sends the tools' default, the MTU (a UD message cannot exceed it)."""
        return bool(self.o.size) and not cell.mode.all_sizes and "atomic" not in cell.tool \
            and cell.mode.conn != "UD"

    def argv(self, cell: Cell, side: str, port: int) -> list[str]:
        name = cell.server if side == "server" else cell.client
        tool = os.path.join(self.bins[name], cell.tool)
        return ["sh", "-c", WRAP, "sh", tool] + self.tool_args(cell, side, port)

    def describe_bins(self) -> None:
        """Each build's -V (of its first tool), asked once on the server end."""
        tool = self.cells[0].tool
        for name, d in self.bins.items():
            assert isinstance(self.la, launchers.Launcher)
            m = re.search(r"Version:\s*(\S+)", self.la.run("server", [os.path.join(d, tool), "-V"]).text)
            self.versions[name] = m.group(1) if m else None

    def run_cell(self, i: int, cell: Cell) -> Record:
        port = self.o.port + i % runner.PORT_SPAN
        argv = {side: self.argv(cell, side, port) for side in launchers.SIDES}
        logs = {side: os.path.join(self.logs, f"{i + 1:04d}-{side}") for side in launchers.SIDES}
        t0 = time.monotonic()
        assert isinstance(self.la, launchers.Launcher)
        res = launchers.run_pair(self.la, argv, logs, port, self.o.timeout,
                                 rdma_cm=cell.mode.cm == "R")
        ends = {"server": verdict.End(res.server.rc, res.server.late, res.server.text),
                "client": verdict.End(res.client.rc, res.client.late, res.client.text)}
        exp = verdict.Expect(cell.tool, cell.mode.conn, self.iters(cell), cell.mode.qps,
                             cell.mode.all_sizes, SERVER_ROWS[cell.tool],
                             self.o.size if self.sized(cell) else None)
        v = verdict.classify(ends["server"], ends["client"], exp, res.error)
        status, note = judge(cell.id, v, self.o.expect, self.o.flaky)
        rec = {"id": cell.id, "tool": cell.tool, "mode": cell.mode.name,
               "server": cell.server, "client": cell.client, "status": status,
               "reason": v.reason, "notes": v.notes, "note": note, "detail": v.detail,
               "elapsed_s": round(time.monotonic() - t0, 2), "port": port,
               "harness_error": res.error}
        for side, e in ends.items():
            rec[f"{side}_rc"] = verdict.exit_status(e.rc, e.text)
            rec[f"{side}_stopped"] = e.stopped
            rec[f"{side}_cmd"] = shlex.join(argv[side][4:])
            rec[f"{side}_rows"] = verdict.result_rows(e.text)
            rec[f"{side}_last"] = verdict.last_line(e.text)
        return rec

    def document(self, started: str, skipped: Skipped, total: int) -> dict[str, Any]:
        line, counts = summary(self.records, total)
        return {"tool": "bench/interop", "started": started,
                "updated": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "launcher": self.la.describe(),
                "binaries": {n: {"dir": d, "version": self.versions.get(n)}
                             for n, d in self.bins.items()},
                "options": {k: getattr(self.o, k) for k in
                            ("device", "gid_index", "ib_port", "iters", "all_iters", "size", "mgid",
                             "extra", "timeout", "port")},
                "expect": [f"{p}={r}" for p, r in self.o.expect],
                "flaky": [f"{p}={n}" for p, n in self.o.flaky],
                "skipped": [{"tool": t, "mode": m, "why": w} for t, m, w in skipped],
                "cells": self.records, "summary": {"line": line, **counts, "cells": total}}

    def save(self, doc: dict[str, Any]) -> None:
        tmp = os.path.join(self.out_dir, "interop.json.tmp")
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=2)
        os.replace(tmp, os.path.join(self.out_dir, "interop.json"))
        with open(os.path.join(self.out_dir, "interop.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(CSV_FIELDS)
            for r in self.records:
                w.writerow([json.dumps(r[k]) if isinstance(r[k], (list, dict)) else
                            ("" if r[k] is None else r[k]) for k in CSV_FIELDS])

    def run(self, skipped: Skipped) -> dict[str, Any]:
        os.makedirs(self.logs, exist_ok=True)
        started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        self.describe_bins()
        total, t0 = len(self.cells), time.monotonic()
        try:
            for i, cell in enumerate(self.cells):
                rec = self.run_cell(i, cell)
                self.records.append(rec)
                self.save(self.document(started, skipped, total))
                el = time.monotonic() - t0
                self.say(f"[{i + 1}/{total}] {cell.tool} {cell.mode.name} "
                         f"{cell.server}:{cell.client}: {cell_text(rec)} ({rec['elapsed_s']:.1f} s)"
                         f" | elapsed {runner.hms(el)}, ETA {runner.hms(el / (i + 1) * (total - i - 1))}")
        finally:
            self.save(self.document(started, skipped, total))
        return self.document(started, skipped, total)


def report(doc: dict[str, Any], pairs: list[tuple[str, str]], out: IO[str] = sys.stdout) -> None:
    bins = ", ".join(f"{n} = {b['dir']} ({b['version'] or 'no -V'})"
                     for n, b in doc["binaries"].items())
    print(f"interop: {bins}; launcher {doc['launcher']['launcher']}", file=out)
    print(table(doc["cells"], pairs), file=out)
    bad = [c for c in doc["cells"] if c["status"] != "pass"]
    if bad:
        print("not passing:", file=out)
        for c in bad:
            print(f"  {c['id']}: {cell_text(c)}: {c['detail']}", file=out)
    if doc["skipped"]:
        print(f"not applicable: {len(doc['skipped'])} tool/mode combinations the tools do not "
              f"run (listed in interop.json)", file=out)
    print(doc["summary"]["line"], file=out)


# --- command line ----------------------------------------------------------------------

def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="bench/interop", allow_abbrev=False,
        description="Run every ordered (server, client) pair of perftest builds for each "
                    "tool and mode; print a table of verdicts (see bench/README.md).")
    a = p.add_argument
    a("--bin", action="append", metavar="NAME=DIR", required=True,
      help="a build: NAME and the directory holding its ib_* tools (repeat)")
    a("--tools", default="all", help="tools (send_bw or ib_send_bw, ...; default all)")
    a("--modes", default=DEFAULT_MODES, help=f"modes, default '{DEFAULT_MODES}'. {MODE_HELP}")
    a("--only", action="append", default=[], metavar="GLOB",
      help="run only the cells matching TOOL/MODE or TOOL/MODE/SERVER:CLIENT globs "
           "(repeat, or comma-separate)")
    a("--pairs", help="SERVER:CLIENT,... (default: every ordered pair of --bin names)")
    a("--no-self", action="store_true", help="leave out the X:X pairs")
    a("--launcher", default="local", choices=("local", "lab", "ssh"))
    a("--hosts", help="ssh: SERVER,CLIENT (the server end runs on the first)")
    a("--server-addr", help="what clients connect to (default per launcher)")
    a("--ssh-cmd", default="ssh")
    a("--lab-cmd", default=os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), "ci", "lab"), help=argparse.SUPPRESS)
    a("--device", help="-d (lab default rxe0)")
    a("--gid-index", type=int, help="-x (lab default 1)")
    a("--ib-port", type=int, default=1, help="-i (default 1)")
    a("--iters", type=int, help="-n for every cell (default: the tools' own)")
    a("--all-iters", type=int, help="-n for the -a cells (default --iters)")
    a("--size", type=int, help="-s for the RC and UC cells but -a and the atomics "
                               "(default: the tools' own)")
    a("--mgid", default=DEFAULT_MGID, help=f"multicast group of mcast (default {DEFAULT_MGID})")
    a("--extra", default="", help="more options for every tool (shell-split)")
    a("--timeout", type=int, default=120, help="seconds per cell (default 120)")
    a("--port", type=int, default=18515, help="first TCP port (cell N uses port + N mod 500)")
    a("--expect", action="append", default=[], metavar="CELL=REASON",
      help="CELL (glob over TOOL/MODE/SERVER:CLIENT) is known to fail with REASON (prefix)")
    a("--flaky", action="append", default=[], metavar="CELL[=NOTE]",
      help="a failure of CELL is reported with NOTE (default 'known flake') and not counted "
           "against the exit status")
    a("--out", help="directory for interop.json, interop.csv and logs/ (default: a "
                    "temporary one, removed)")
    a("--json", action="store_true", help="print interop.json on stdout (the table to stderr)")
    a("--dry-run", action="store_true", help="print the cells and their commands, run nothing")
    return p


def check_options(o: argparse.Namespace) -> None:
    for name, v, lo, hi in (("--iters", o.iters, 5, 100000000),
                            ("--all-iters", o.all_iters, 5, 100000000),
                            ("--size", o.size, 1, 2147483647),
                            ("--timeout", o.timeout, 5, 86400), ("--port", o.port, 1024, 65000),
                            ("--ib-port", o.ib_port, 1, 255), ("--gid-index", o.gid_index, 0, 255)):
        if v is not None and not lo <= v <= hi:
            raise InteropError(f"{name} {v} is outside {lo}..{hi}")
    try:
        shlex.split(o.extra)
    except ValueError as e:
        raise InteropError(f"--extra: {e}") from None
    if o.launcher == "ssh" and not o.hosts:
        raise InteropError("--launcher ssh needs --hosts SERVER,CLIENT")
    if o.hosts and o.launcher != "ssh":
        raise InteropError("--hosts is for --launcher ssh")


def check_bins(bins: dict[str, str], tools: list[str], launcher_name: str,
               la: Optional[launchers.Ssh] = None) -> None:
    """Every tool of every build is an executable file, on this host (local,
    lab: the guests see the host's files) or on both ssh hosts."""
    need = [(n, os.path.join(d, t)) for n, d in bins.items() for t in tools]
    if launcher_name != "ssh":
        for n, d in bins.items():
            if not os.path.isdir(d):
                hint = " (give the directory holding the ib_* tools)" if os.path.isfile(d) else ""
                raise InteropError(f"--bin {n}={d}: not a directory{hint}")
        missing = [f"{n}: {p}" for n, p in need if not os.access(p, os.X_OK)]
        where = "here"
        for n, d in bins.items():   # a build tree given instead of its perftest/
            if missing and os.access(os.path.join(d, "perftest", tools[0]), os.X_OK):
                raise InteropError(f"--bin {n}={d}: no {tools[0]} there; "
                                   f"did you mean {n}={os.path.join(d, 'perftest')}?")
    else:
        script = 'for f; do [ -x "$f" ] || echo "$f"; done'
        missing = []
        assert la is not None
        for side in launchers.SIDES:
            done = la.run(side, ["sh", "-c", script, "sh"] + [p for _, p in need])
            if done.rc != 0:
                raise InteropError(f"ssh {la.hosts[side]}: cannot check the tools: "
                                   f"{done.err.strip() or f'exit {done.rc}'}")
            missing += [f"{la.hosts[side]}: {p}" for p in done.out.split()]
        where = "on the ssh hosts"
    if missing:
        raise InteropError(f"missing or not executable {where}: " + ", ".join(missing[:8]) +
                           (f" and {len(missing) - 8} more" if len(missing) > 8 else ""))


def main(argv: Sequence[str], out: IO[str] = sys.stdout, err: IO[str] = sys.stderr) -> int:
    o = parser().parse_args(argv)
    tmp = None
    try:
        check_options(o)
        bins = parse_bins(o.bin)
        tools = parse_tools(o.tools)
        modes = []
        for m in matrix.split_items(o.modes):
            mode = parse_mode(m)
            if mode in modes:
                raise InteropError(f"mode '{m}' is listed twice")
            modes.append(mode)
        only = [g for item in o.only for g in matrix.split_items(item)]
        pairs = parse_pairs(o.pairs, list(bins), o.no_self)
        o.expect = parse_patterns(o.expect, "--expect", True)
        o.flaky = parse_patterns(o.flaky, "--flaky", False)
        cells, skipped = plan(tools, modes, pairs, only)
        for pat, _ in o.expect + o.flaky:
            if not any(fnmatch.fnmatchcase(c.id, pat) for c in cells):
                raise InteropError(f"'{pat}' matches no cell (cells are TOOL/MODE/SERVER:CLIENT, "
                                   f"e.g. {cells[0].id})")
        if o.launcher == "lab":
            o.device = o.device or "rxe0"
            o.gid_index = 1 if o.gid_index is None else o.gid_index
        used = sorted({c.tool for c in cells})
        if o.launcher != "ssh":
            check_bins(bins, used, o.launcher)
        if o.out:
            o.out = os.path.abspath(o.out)
            if os.path.exists(os.path.join(o.out, "interop.json")):
                raise InteropError(f"{o.out} already holds interop.json: give a new --out")
        if o.dry_run:
            return dry_run(cells, skipped, bins, o, out)
        out_dir = o.out or (tmp := tempfile.mkdtemp(prefix="interop."))
        os.makedirs(out_dir, exist_ok=True)
        settings = {"server_addr": o.server_addr, "hosts": o.hosts, "remote_dir": None}
        la = launchers.make(o.launcher, out_dir, settings, o.lab_cmd, o.ssh_cmd)
        if isinstance(la, launchers.Ssh):
            check_bins(bins, used, "ssh", la)
        run = Interop(la, bins, cells, o, out_dir, err=err)
        try:
            doc = run.run(skipped)
        except KeyboardInterrupt:
            print("interop: interrupted; the cells run so far are in "
                  f"{os.path.join(out_dir, 'interop.json') if o.out else 'the table'}", file=err)
            report(run.document("", skipped, len(cells)), pairs, err)
            return 130
        report(doc, pairs, err if o.json else out)
        if o.json:
            json.dump(doc, out, indent=2)
            print(file=out)
        if o.out:
            print(f"interop: results in {os.path.join(o.out, 'interop.json')} and interop.csv, "
                  f"logs in {run.logs}", file=err)
        s = doc["summary"]
        return 1 if s["fail"] or s["xpass"] else 0
    except (InteropError, launchers.LauncherError, ValueError) as e:
        print(f"interop: {e}", file=err)
        return 2
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


class Placeholder:
    """What a dry run shows where the launcher's server address would go."""

    def __init__(self, name: str) -> None:
        self.name = name

    def server_addr(self) -> str:
        return "<server address>"

    def describe(self) -> dict[str, Any]:
        return {"launcher": self.name}


Addressed = Union[launchers.Launcher, Placeholder]


def dry_run(cells: list[Cell], skipped: Skipped, bins: dict[str, str], o: argparse.Namespace,
            out: IO[str]) -> int:
    show = Interop(Placeholder(o.launcher), bins, cells, o, "")
    for t, m, why in skipped:
        print(f"n/a: {t} {m}: {why}", file=out)
    for i, c in enumerate(cells):
        port = o.port + i % runner.PORT_SPAN
        print(f"[{i + 1}/{len(cells)}] {c.id}", file=out)
        for side in launchers.SIDES:
            print(f"    {side}: {shlex.join(show.argv(c, side, port)[4:])}", file=out)
    print(f"{len(cells)} cells, {len(skipped)} tool/mode combinations not applicable", file=out)
    return 0

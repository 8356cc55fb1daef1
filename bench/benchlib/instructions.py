# SPDX-License-Identifier: BSD-2-Clause
"""bench/instructions: instructions per WR of the sending side, by shared
object, ours against other builds, in the lab (bench/README.md).

Each build's client runs under valgrind --tool=callgrind on node 2 (its
server plain on node 1) at two run lengths n1 < n2; per WR is
(Ir(n2) - Ir(n1)) / (n2 - n1), so start-up, connection and every other
constant cost cancel. The split is by shared object (callgrind_annotate's
file:function [object] lines, benchlib/callgrind.py); where the build has
symbols (ours), the report phase (perftest/report/: the BW peak and the
result rows) and the hooks and recorder (plugin/) are also taken by file."""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Sequence

from benchlib import callgrind as cg
from benchlib import cgdump, lsfit
from benchlib.labctl import TOP, Lab, run_command, run_pair

PROG = "bench/instructions"
# A loop instruction that runs this often per WR is a wait's turn: the rest
# of a loop runs once or twice per WR, a spinning wait tens to thousands of
# times (the lab's slow link).
HOT = 8.0
TRACE = "ours --trace"


REPORT_RE = re.compile(r"(^|/)perftest/report/")
PLUGIN_RE = re.compile(r"(^|/)plugin/")
# What a plugin does once per run, outside the measured loop: loading,
# run start (allocating), run end (building the rows, writing the file).
PLUGIN_OUTSIDE = ("wrt_run_start", "wrt_run_end", "plug_init", "plug_fini", "wrt_free",
                  "pt_hooks_run_start", "pt_hooks_run_end", "pt_hooks_unload_all",
                  "pt_hooks_load_builtin")


class SetupError(Exception):
    """Something needed is missing: said before any run."""


@dataclass
class Build:
    name: str
    dir: Path
    own_dirs: list[str]
    trace: bool = False          # the client also gets --trace=FILE:quiet

    def tool(self, tool: str) -> Path:
        return self.dir / tool


@dataclass
class Measured:
    """One client run under callgrind, read."""
    n: int
    total: int
    classes: dict[str, int]
    report: int                  # perftest/report/ code (0 without symbols)
    plugin: int                  # plugin/ code: hooks, recorder
    plugin_loop: int             # of it, what runs in the loop (not only under PLUGIN_OUTSIDE)
    turns: int                   # calls of the provider's busiest function
    turn_fn: str
    seconds: float
    turn_callers: tuple[str, ...] = ()   # own functions that call turn_fn (with symbols)
    # own code under the functions that post and poll per WR (call graph, any
    # build), and of it perftest/report/ code (the BW peak tracker; 0 stripped)
    loop_cg: int = 0
    loop_cg_report: int = 0
    # every provider function own code calls ("fn [object]"): its calls, its own callers
    provider_calls: dict[str, int] = field(default_factory=dict)
    provider_callers: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # the loop's own instructions one by one (callgrind --dump-instr=yes;
    # None for a file without them): its waits (cgdump.waits)
    loop_instrs: Optional[list[cgdump.Instr]] = None

    def wait_run(self) -> Optional[cgdump.WaitRun]:
        if self.loop_instrs is None:
            return None
        return cgdump.WaitRun(self.n, self.loop_instrs)


@dataclass
class Outcome:
    build: Build
    runs: dict[int, Measured] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    totals: dict[int, list[int]] = field(default_factory=dict)   # --repeat: every run's Ir
    every: dict[int, list[Measured]] = field(default_factory=dict)  # --repeat: every run


def ours_dir() -> Path:
    return Path(os.environ.get("PT_BUILD") or TOP / "build")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", action="append", default=[], metavar="NAME=DIR",
                   help="another build to compare with ours (default: 6.06=/usr/bin)")
    p.add_argument("--tool", default="ib_send_bw", help="the tool (default ib_send_bw)")
    p.add_argument("--iters", default="4000,8000", metavar="N1,N2",
                   help="the two run lengths (-n; default 4000,8000)")
    p.add_argument("--size", type=int, default=64, help="message size (-s; default 64)")
    p.add_argument("--conn", default="RC", help="connection type (-c; default RC)")
    p.add_argument("--device", default="rxe0", help="RDMA device (-d; default rxe0)")
    p.add_argument("--gid-index", default="1", help="GID index (-x; default 1)")
    p.add_argument("--extra", default="", help="more options for every run, both sides")
    p.add_argument("--ours-extra", default="", metavar="ARGS",
                   help="more options for our builds' runs only, both sides (e.g. "
                        "--oob_timeout=300: valgrind in a guest of a busy host starts slowly)")
    p.add_argument("--skip", action="append", default=[], metavar="NAME",
                   help="do not run this build (its files from an earlier --keep, put into "
                        "the same folder, make the whole table with --reread)")
    p.add_argument("--trace", action="store_true",
                   help="also ours with --trace=FILE:quiet on the client: the delta per WR")
    p.add_argument("--repeat", type=int, default=1, metavar="K",
                   help="run each build and length K times and keep the run with the fewest "
                        "instructions (a tool that spins while it waits varies; default 1)")
    p.add_argument("--fit", action="store_true",
                   help="with --repeat K >= 2: fit Ir = a + b*n + c*turns over all 2K runs of "
                        "a build: b per WR with the poll turns apart, c per poll turn")
    p.add_argument("--hot", type=float, default=HOT, metavar="X",
                   help="a loop instruction run X times per WR or more is a wait's turn "
                        f"(default {HOT:g}; the waits-at-one-pass table)")
    p.add_argument("--timeout", type=float, default=600, help="seconds per run (default 600)")
    p.add_argument("--port", type=int, default=19300, help="first TCP port (default 19300)")
    p.add_argument("--keep", metavar="DIR", help="keep the callgrind files and logs in DIR")
    p.add_argument("--reread", metavar="DIR",
                   help="no runs: read the callgrind files a --keep DIR holds, print the table")
    return p


def parse_iters(text: str) -> tuple[int, int]:
    try:
        a, b = (int(x) for x in text.split(","))
    except ValueError:
        raise SetupError(f"--iters {text!r}: want two run lengths, N1,N2") from None
    if a <= 0 or b <= 0 or a == b:
        raise SetupError(f"--iters {text!r}: want two different positive run lengths")
    return (a, b) if a < b else (b, a)


def builds(args: argparse.Namespace) -> list[Build]:
    ours = ours_dir()
    out = [Build("ours", ours / "perftest", [str(ours)])]
    if args.trace:
        out.append(Build(TRACE, ours / "perftest", [str(ours)], trace=True))
    for spec in args.bin or ["6.06=/usr/bin"]:
        name, sep, d = spec.partition("=")
        if not sep or not name or not d:
            raise SetupError(f"--bin {spec!r}: want NAME=DIR")
        if name in ("ours", TRACE) or any(b.name == name for b in out):
            raise SetupError(f"--bin {spec!r}: the name {name!r} is taken")
        out.append(Build(name, Path(d).resolve(), [str(Path(d).resolve())]))
    return out


def check_setup(args: argparse.Namespace, bs: Sequence[Build], lab: Lab) -> None:
    for prog in ("valgrind", "callgrind_annotate"):
        if not shutil.which(prog):
            raise SetupError(f"{prog} is not installed here (Debian package valgrind); "
                             "the guests run it from the host root")
    for b in bs:
        t = b.tool(args.tool)
        if not t.is_file() or not os.access(t, os.X_OK):
            hint = " (ci/build)" if b.name in ("ours", TRACE) else ""
            raise SetupError(f"{b.name}: {t} is missing or not executable{hint}")
    if lab.nodes() < 2 or not lab.running():
        raise SetupError(f"the lab is not up with 2 nodes (PTLAB_DIR={lab.dir}): "
                         "ci/lab up --nodes 2")


def annotate(path: Path) -> cg.Profile:
    d = run_command(["callgrind_annotate", "--threshold=100", "--tree=caller", "--auto=no",
                     str(path)], 300, cwd="/")   # from /: file names stay absolute
    if d.rc != 0:
        raise cg.ParseError(f"callgrind_annotate failed\n{d.evidence(10)}")
    return cg.parse(d.out)


def label_of(f: cg.Func) -> str:
    return f"{f.fn} [{os.path.basename(f.obj or '?')}]"


def provider_calls(p: cg.Profile, own: Callable[[str], bool]) -> tuple[dict[str, int],
                                                                         dict[str, tuple[str, ...]]]:
    """Calls from own code of every provider function, and the own callers' names."""
    calls: dict[str, int] = {}
    callers: dict[str, set[str]] = {}
    for f in p.funcs:
        if cg.classify(f.obj, own) != cg.PROVIDER:
            continue
        mine = [(c, k) for c, obj, k in f.callers if cg.classify(obj, own) == cg.OWN]
        if mine:
            calls[label_of(f)] = calls.get(label_of(f), 0) + sum(k for _, k in mine)
            callers.setdefault(label_of(f), set()).update(c for c, _ in mine)
    return calls, {k: tuple(sorted(v)) for k, v in callers.items()}


def measure(p: cg.Profile, n: int, own_dirs: Sequence[str], seconds: float,
            instrs: Optional[list[cgdump.Instr]] = None) -> Measured:
    """A run's figures from its listing (and, where the file has them, its
    instructions one by one)."""
    own = cg.own_objects(p.target, own_dirs)
    busiest = cg.busiest_callee(p, own)
    outside = cg.called_only_from(p, PLUGIN_OUTSIDE)
    calls, callers = provider_calls(p, own)
    loop = cg.loop_code(p, own, n)
    in_loop = [f for f in p.funcs if (f.fn, f.obj) in loop and cg.classify(f.obj, own) == cg.OWN]
    # report code out, by file as the row "loop by call graph" does (ours'
    # BW peak tracker inlined into the post loop included)
    loop_instrs = None if instrs is None else [
        i for i in instrs if (i.fn, i.obj) in loop and cg.classify(i.obj, own) == cg.OWN and
        not is_report(cg.Func(i.file, i.fn, i.obj))]
    return Measured(
        n=n, total=p.total, classes=cg.by_class(p, own),
        report=cg.cost_where(p, lambda f: cg.classify(f.obj, own) == cg.OWN and is_report(f)),
        plugin=cg.cost_where(p, lambda f: cg.classify(f.obj, own) == cg.OWN and
                             PLUGIN_RE.search(f.file) is not None),
        plugin_loop=cg.cost_where(p, lambda f: cg.classify(f.obj, own) == cg.OWN and
                                  PLUGIN_RE.search(f.file) is not None and
                                  f.fn not in outside),
        turns=cg.calls_from_own(p, busiest, own) if busiest else 0,
        turn_fn=f"{busiest.fn} [{os.path.basename(busiest.obj or '?')}]" if busiest else "-",
        seconds=seconds,
        turn_callers=tuple(sorted({c for f in p.funcs if busiest and f.fn == busiest.fn and
                                   f.obj == busiest.obj for c, obj, _ in f.callers
                                   if cg.classify(obj, own) == cg.OWN})),
        provider_calls=calls, provider_callers=callers,
        loop_cg=sum(f.ir for f in in_loop),
        loop_cg_report=sum(f.ir for f in in_loop if is_report(f)),
        loop_instrs=loop_instrs)


def read_run(path: Path, n: int, own_dirs: Sequence[str], seconds: float) -> Measured:
    """A kept callgrind file read: by function (callgrind_annotate) and, when
    it has them, by instruction (a file from before --dump-instr has not)."""
    try:
        instrs: Optional[list[cgdump.Instr]] = cgdump.read(str(path))
    except cgdump.NoInstrs:
        instrs = None
    except (OSError, cgdump.DumpError) as e:
        raise cg.ParseError(f"{path}: {e}") from None
    return measure(annotate(path), n, own_dirs, seconds, instrs)


def is_report(f: cg.Func) -> bool:
    return REPORT_RE.search(f.file) is not None or f.fn.startswith("pt_bw_peak")


def complete(path: Path, wait: float = 60) -> bool:
    """The guest's callgrind file has reached the host whole: it ends with
    its "totals:" line (read too early over the share, its tail can be
    missing, and functions with it)."""
    deadline = time.monotonic() + wait
    while True:
        try:
            with open(path, "rb") as f:
                f.seek(max(0, f.seek(0, os.SEEK_END) - 200))
                if re.search(rb"\ntotals: \d+\s*$", f.read()):
                    return True
        except OSError:
            pass
        if time.monotonic() >= deadline:
            return False
        time.sleep(1)


def tag_of(b: Build, n: int) -> str:
    return f"{b.name.replace(' ', '').replace('/', '-')}-n{n}"


def run_one(args: argparse.Namespace, lab: Lab, b: Build, n: int, port: int, work: Path,
            share: Path, rep: str = "") -> Measured:
    """One pair: b's server plain on node 1, its client under callgrind on node 2."""
    tag = tag_of(b, n) + rep
    out = share / f"{tag}.cg"
    out.unlink(missing_ok=True)
    common = ["-d", args.device, "-x", str(args.gid_index), "-c", args.conn, "-s",
              str(args.size), "-n", str(n), "-F", *shlex.split(args.extra)]
    if b.name in ("ours", TRACE):
        common += shlex.split(args.ours_extra)
    trace = [f"--trace={share / (tag + '.csv')}:quiet"] if b.trace else []
    server = [str(b.tool(args.tool)), *common]
    client = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--vgdb=no",
              "--dump-instr=yes", "--compress-pos=no",
              str(b.tool(args.tool)), *common, *trace]
    t0 = time.monotonic()
    pair = run_pair(lab, tag, server, client, port, work, timeout=args.timeout)
    secs = time.monotonic() - t0
    if not pair.ok:
        raise RuntimeError(pair.evidence(20))
    if not complete(out):
        raise RuntimeError(f"the client exited 0 but {out} is missing or has no totals line "
                           f"after 60 s\n{pair.evidence(20)}")
    m = read_run(out, n, b.own_dirs, secs)
    if m.total <= 0:
        raise RuntimeError(f"{out}: no instructions counted")
    return m


# --- the table ---------------------------------------------------------------------------

Row = tuple[str, Callable[[Measured], float], bool]   # label, value, needs symbols
# The loop by the call graph (callgrind.loop_code), perftest/report/ code in
# it out: found in a stripped build as in ours, without the report phase
# that runs after the loop (6.06's sort and its comparison function, its BW
# peak) or set-up noise (6.06's clock measurement).
LOOP_ROW = "  loop by call graph (report code out)"

ROWS: list[Row] = [
    ("own code (executable + own libs)", lambda m: m.classes[cg.OWN], False),
    ("  report phase (perftest/report)", lambda m: m.report, True),
    ("  send loop etc. (own - report)", lambda m: m.classes[cg.OWN] - m.report, True),
    ("  plugin/ (hooks, recorder)", lambda m: m.plugin, True),
    ("    of it in the loop", lambda m: m.plugin_loop, True),
    ("  loop (own - report - plugin/ outside)", lambda m: m.classes[cg.OWN] - m.report -
     (m.plugin - m.plugin_loop), True),
    # the same rule for every build, stripped or not: what item 3 compares
    (LOOP_ROW, lambda m: m.loop_cg - m.loop_cg_report, False),
    ("  rest of own code (report phase, set-up)", lambda m: m.classes[cg.OWN] - m.loop_cg +
     m.loop_cg_report, False),
    ("provider (librxe, libibverbs)", lambda m: m.classes[cg.PROVIDER], False),
    ("libc", lambda m: m.classes[cg.LIBC], False),
    ("other (ld.so, valgrind, ...)", lambda m: m.classes[cg.OTHER], False),
    ("total", lambda m: m.total, False),
    ("busiest provider fn, calls", lambda m: m.turns, False),
]


def per_wr(o: Outcome, n1: int, n2: int, value: Callable[[Measured], float],
           symbols: bool) -> Optional[float]:
    a, b = o.runs.get(n1), o.runs.get(n2)
    if a is None or b is None:
        return None
    if symbols and not (a.report or b.report or a.plugin or b.plugin):
        return None                      # stripped: no file names to go by
    return (value(b) - value(a)) / (n2 - n1)


def fmt(v: Optional[float], failed: bool) -> str:
    return "failed" if failed else ("n/a" if v is None else f"{v:.1f}")


def ratio(a: Optional[float], b: Optional[float]) -> str:
    if a is None or b is None:
        return "-"
    if b == 0:
        return "-" if a == 0 else "inf"
    return f"{a / b:.2f}"


def layout(lines: list[list[str]]) -> str:
    """Columns aligned: the first to the left, the figures to the right."""
    widths = [max(len(r[i]) for r in lines) for i in range(len(lines[0]))]
    return "".join(("  ".join(c.ljust(widths[0]) if i == 0 else c.rjust(widths[i])
                              for i, c in enumerate(r))).rstrip() + "\n" for r in lines)


def table(outs: Sequence[Outcome], n1: int, n2: int) -> str:
    ours = outs[0]
    traced = next((o for o in outs if o.build.trace), None)
    others = [o for o in outs if o is not ours and not o.build.trace]
    head = ["per WR", "ours"]
    if traced:
        head += ["ours --trace", "trace delta"]
    for o in others:
        head += [o.build.name, f"ours/{o.build.name}"]
    lines = [head]
    for label, value, sym in ROWS:
        v = per_wr(ours, n1, n2, value, sym)
        row = [label, fmt(v, bool(ours.failures))]
        if traced:
            t = per_wr(traced, n1, n2, value, sym)
            row += [fmt(t, bool(traced.failures)),
                    "-" if t is None or v is None else f"{t - v:+.1f}"]
        for o in others:
            w = per_wr(o, n1, n2, value, sym)
            row += [fmt(w, bool(o.failures)), ratio(v, w)]
        lines.append(row)
    return layout(lines)


def notes(outs: Sequence[Outcome], n1: int, n2: int) -> str:
    text = ""
    for o in outs:
        for n in (n1, n2):
            m = o.runs.get(n)
            if m:
                text += (f"  {o.build.name}, -n {n}: {m.total:,} Ir in all, report phase "
                         f"{m.report:,}, {m.turns:,} calls of {m.turn_fn}, {m.seconds:.0f} s\n")
                if n in o.totals:
                    text += (f"    kept the least of {len(o.totals[n])} runs: "
                             + ", ".join(f"{t:,}" for t in o.totals[n]) + " Ir\n")
        for f in o.failures:
            text += f"  {o.build.name}: FAILED\n" + "".join(
                f"    {line}\n" for line in f.splitlines())
    return text


# --- the fit (--fit) ---------------------------------------------------------------------

FIT_ROWS: list[Row] = [r for r in ROWS if r[0] != "busiest provider fn, calls"]


@dataclass
class BuildFit:
    """A build's runs for the fit, and why it has none (then its rows are the
    two-length difference of the least runs, marked *)."""
    outcome: Outcome
    runs: list[Measured]
    turn_fn: str = "-"
    turns: list[int] = field(default_factory=list)
    callers: tuple[str, ...] = ()
    why_not: str = ""

    def row(self, value: Callable[[Measured], float], symbols: bool) -> Optional[lsfit.Fit]:
        """The row's fit; None where the build has no symbols for it."""
        if symbols and not any(m.report or m.plugin for m in self.runs):
            return None
        return lsfit.fit([m.n for m in self.runs], self.turns, [value(m) for m in self.runs])


def spinning_function(runs: Sequence[Measured]) -> str:
    """The provider function that carries the spin: of those own code calls in
    every run, the one whose calls vary most apart from n (an empty poll of
    the CQ; posts follow n exactly). Ties (none varies): the most calls."""
    common = set.intersection(*(set(m.provider_calls) for m in runs))
    ns = [m.n for m in runs]
    return max(sorted(common), key=lambda fn: (
        lsfit.unexplained(ns, [m.provider_calls[fn] for m in runs]),
        sum(m.provider_calls[fn] for m in runs)))


def build_fit(o: Outcome, n1: int, n2: int) -> BuildFit:
    runs = [m for n in (n1, n2) for m in o.every.get(n, [])]
    bf = BuildFit(o, runs)
    if runs and all(m.provider_calls for m in runs) and \
            set.intersection(*(set(m.provider_calls) for m in runs)):
        bf.turn_fn = spinning_function(runs)
        bf.turns = [m.provider_calls[bf.turn_fn] for m in runs]
        bf.callers = tuple(sorted({c for m in runs for c in
                                   m.provider_callers.get(bf.turn_fn, ())}))
    elif runs:                     # read without the per-function calls: the busiest
        bf.turn_fn = ", ".join(sorted({m.turn_fn for m in runs}))
        bf.turns = [m.turns for m in runs]
        bf.callers = tuple(sorted({c for m in runs for c in m.turn_callers}))
    if o.failures:
        bf.why_not = "a run failed"
    elif not all(o.every.get(n) for n in (n1, n2)):
        bf.why_not = "not every length has its runs (--repeat K >= 2 for both)"
    elif "," in bf.turn_fn:
        bf.why_not = (f"the busiest provider function differs between runs ({bf.turn_fn}): "
                      "no common turn to count")
    else:
        try:                       # the design (n, turns) is the same for every row
            bf.row(lambda m: m.total, False)
        except lsfit.Collinear as e:
            bf.why_not = str(e)
    return bf


def fit_table(outs: Sequence[Outcome], n1: int, n2: int) -> str:
    fits = [build_fit(o, n1, n2) for o in outs]
    head = ["fit Ir = a + b*n + c*turns"]
    for f in fits:
        name = f.outcome.build.name
        head += [f"{name} b/WR", f"{name} c/turn", f"{name} resid"]
    others = [f for f in fits[1:] if not f.outcome.build.trace]
    for f in others:
        head += [f"b ours/{f.outcome.build.name}", f"c ours/{f.outcome.build.name}"]
    lines = [head]
    for label, value, sym in FIT_ROWS:
        cells: dict[int, tuple[Optional[float], Optional[float]]] = {}
        row = [label]
        for i, f in enumerate(fits):
            if f.why_not:
                v = per_wr(f.outcome, n1, n2, value, sym)
                cells[i] = (v, None)
                row += [fmt(v, bool(f.outcome.failures)) + ("" if v is None else "*"), "-", "-"]
                continue
            got = f.row(value, sym)
            if got is None:
                cells[i] = (None, None)
                row += ["n/a", "n/a", "-"]
                continue
            cells[i] = (float(got.b), float(got.c))
            row += [f"{float(got.b):.1f}", f"{float(got.c):.2f}", f"{got.residual:,.0f}"]
        for f in others:
            i = fits.index(f)
            row += [ratio(cells[0][0], cells[i][0]), ratio(cells[0][1], cells[i][1])]
        lines.append(row)
    return layout(lines) + fit_notes(fits)


def fit_notes(fits: Sequence[BuildFit]) -> str:
    text = ("b: instructions per WR with the poll turns apart; c: per poll turn (a call from own "
            "code of the provider function whose calls vary most apart from n: the CQ's poll); "
            "resid: max |Ir - fit| over the runs\n")
    for f in fits:
        name = f.outcome.build.name
        callers = [c for c in f.callers if not c.startswith("0x")]
        # a stripped build's turn function is known by the build with symbols
        # that calls the same provider function (same object, same address)
        known = [g.outcome.build.name for g in fits if g is not f and g.turn_fn == f.turn_fn
                 and any(not c.startswith("0x") for c in g.callers)]
        text += (f"  {name}: turns = calls of {f.turn_fn}"
                 + (f" (own callers: {', '.join(callers)})" if callers else
                    f" (the same function as in {known[0]})" if known else
                    " (own callers without symbols)") + "\n")
        if f.runs:
            text += "    runs (n, turns, turns/WR, Ir): " + "; ".join(
                f"{m.n} {t} {t / m.n:.2f} {m.total:,}" for m, t in zip(f.runs, f.turns)) + "\n"
        if f.why_not:
            text += (f"    no fit: {f.why_not}; * = (Ir(n2) - Ir(n1)) / (n2 - n1) of the "
                     "least runs\n")
        else:
            t = f.row(lambda m: m.total, False)
            text += f"    condition number of (n, turns) {t.cond:.2f}" if t else ""
            text += "\n"
    return text


# --- the waits at one pass (per-instruction counts) ---------------------------------------

def build_waits(o: Outcome, n1: int, n2: int, per_wr: float) -> Optional[cgdump.Waits]:
    """A build's waits over all its runs (--repeat K: every one), None when
    its files hold no per-instruction counts."""
    ms = [m for n in (n1, n2) for m in (o.every.get(n) or ([o.runs[n]] if n in o.runs else []))]
    runs = [m.wait_run() for m in ms]
    if not runs or any(r is None for r in runs) or o.failures:
        return None
    return cgdump.waits([r for r in runs if r is not None], per_wr)


def waits_table(outs: Sequence[Outcome], n1: int, n2: int, per_wr: float) -> str:
    """Each build's loop (by call graph, report code out) with its waits at
    one pass per WR: its instructions that ran per_wr times a WR or more are
    the waits' turns, those whose count varies between runs of a length
    their checks, the rest the work of a WR (cgdump.Waits)."""
    ws: list[tuple[Outcome, cgdump.Waits]] = []
    for o in outs:
        w = build_waits(o, n1, n2, per_wr)
        if w is not None:
            ws.append((o, w))
    if not ws:
        return ""
    ours = ws[0][1] if ws[0][0] is outs[0] else None
    others = [(o, w) for o, w in ws if w is not ours and not o.build.trace]
    head = [f"waits at one pass (>= {per_wr:g} runs/WR)"] + [o.build.name for o, _ in ws]
    head += [f"ours/{o.build.name}" for o, _ in others] if ours else []

    def line(label: str, cell: Callable[[cgdump.Waits], str],
             value: Optional[Callable[[cgdump.Waits], Optional[float]]] = None) -> list[str]:
        row = [label] + [cell(w) for _, w in ws]
        if ours:
            row += [ratio(value(ours), value(w)) if value else "" for _, w in others]
        return row

    def star(w: cgdump.Waits) -> str:
        return "*" if w.why_not else ""

    def span(xs: Sequence[float]) -> str:
        return f"{min(xs):.1f}-{max(xs):.1f}"

    lines = [head,
             line("wait instructions", lambda w: str(len(w.hot))),
             line("wait turns per WR (busiest)", lambda w: "-" if not w.hot else
                  span([t / n for t, n in zip(w.turns, w.ns)])),
             line("checks: instructions", lambda w: "-" if w.why_not else str(len(w.varying))),
             line("checks: Ir per WR", lambda w: "-" if w.why_not else
                  span([c / n for c, n in zip(w.checks, w.ns)])),
             line("loop without the waits, b/WR", lambda w: fmt(w.b, False) + star(w),
                  lambda w: w.b),
             line("loop, waits at one pass, /WR", lambda w: fmt(w.one_pass, False) + star(w),
                  lambda w: w.one_pass)]
    text = layout(lines)
    text += ("wait instructions: the loop's, run >= X times a WR in a run; checks: its others "
             "whose count differs between runs of one length (they run with the waits, not "
             "every turn: the stop rules' looks); b: the rest, the same in every run of a "
             "length, per WR; one pass: b plus each wait instruction once\n")
    for o, w in ws:
        text += (f"  {o.build.name}: runs (n, wait Ir, checks Ir): "
                 + "; ".join(f"{n} {sp:,} {c:,}" for n, sp, c in zip(w.ns, w.spin, w.checks))
                 + "\n")
        if w.why_not:
            text += (f"    {w.why_not}; * = two-length difference of the loop less its waits, "
                     "the runs with the least spin\n")
    return text


def best_of(args: argparse.Namespace, lab: Lab, o: Outcome, n: int, port: int, work: Path,
            share: Path) -> Measured:
    """--repeat K: K runs, the one with the fewest instructions kept, as TAG.cg."""
    if args.repeat == 1:
        return run_one(args, lab, o.build, n, port, work, share)
    runs = [run_one(args, lab, o.build, n, port + k, work, share, f"-r{k}")
            for k in range(args.repeat)]
    k = min(range(len(runs)), key=lambda i: runs[i].total)
    o.totals[n] = [m.total for m in runs]
    o.every[n] = runs
    shutil.copyfile(share / f"{tag_of(o.build, n)}-r{k}.cg", share / f"{tag_of(o.build, n)}.cg")
    return runs[k]


def main(argv: Sequence[str]) -> int:
    args = parser().parse_args(argv)
    lab = Lab()
    try:
        n1, n2 = parse_iters(args.iters)
        bs = builds(args)
        unknown = [k for k in args.skip if all(b.name != k for b in bs)]
        if unknown:
            raise SetupError(f"--skip {unknown[0]!r}: no such build "
                             f"(builds: {', '.join(b.name for b in bs)})")
        if args.repeat < 1:
            raise SetupError(f"--repeat {args.repeat}: give 1 or more")
        if not args.hot >= 2:            # NaN too: code run once or twice per WR is not a wait
            raise SetupError(f"--hot {args.hot:g}: give 2 or more (runs per WR)")
        if args.fit and args.repeat < 2:
            raise SetupError(f"--fit needs --repeat K with K >= 2 (got {args.repeat}): "
                             "three parameters over 2K runs, the turns varying between them")
        if not args.reread:
            check_setup(args, bs, lab)
    except SetupError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    if args.reread:
        outs = [Outcome(b) for b in bs]
        for o in outs:
            for n in (n1, n2):
                try:
                    path = Path(args.reread) / f"{tag_of(o.build, n)}.cg"
                    o.runs[n] = read_run(path, n, o.build.own_dirs, 0)
                    if args.repeat > 1:     # every run: the fit, the waits' checks
                        o.every[n] = [read_run(path.with_name(f"{path.stem}-r{k}.cg"),
                                              n, o.build.own_dirs, 0)
                                      for k in range(args.repeat)]
                        o.totals[n] = [m.total for m in o.every[n]]
                except (OSError, cg.ParseError) as e:
                    o.failures.append(f"-n {n}: {e}")
        print(f"(re-read from {args.reread})")
        print(table(outs, n1, n2), end="")
        if args.fit:
            print(fit_table(outs, n1, n2), end="")
        print(waits_table(outs, n1, n2, args.hot), end="")
        print("runs:\n" + notes(outs, n1, n2), end="")
        return 1 if any(o.failures for o in outs) else 0
    lab_share = lab.share()
    keep = Path(args.keep).resolve() if args.keep else None
    if keep:
        keep.mkdir(parents=True, exist_ok=True)
    share = Path(tempfile.mkdtemp(prefix="instr-", dir=lab_share))
    share.chmod(0o755)     # the guests write into it
    work = keep or share
    outs = [Outcome(b) for b in bs]
    port = args.port
    try:
        for n in (n1, n2):
            for o in outs:
                if o.failures or o.build.name in args.skip:
                    continue
                print(f"{PROG}: {o.build.name} {args.tool} -n {n} (client under callgrind) ...",
                      file=sys.stderr, flush=True)
                try:
                    o.runs[n] = best_of(args, lab, o, n, port, work, share)
                except (RuntimeError, cg.ParseError) as e:
                    o.failures.append(f"-n {n}: {e}")
                port += args.repeat
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    finally:
        if keep:
            for f in share.iterdir():
                shutil.move(str(f), keep / f.name)
        shutil.rmtree(share, ignore_errors=True)
    desc = " ".join(f"{o.build.name}={o.build.dir}" for o in outs if not o.build.trace)
    print(f"instructions per WR: {args.tool} -c {args.conn} -s {args.size}, client under "
          f"callgrind, (Ir(-n {n2}) - Ir(-n {n1})) / {n2 - n1}; {desc}"
          + (f"; extra: {args.extra}" if args.extra else ""))
    print(table(outs, n1, n2), end="")
    if args.fit:
        print(fit_table(outs, n1, n2), end="")
    print(waits_table(outs, n1, n2, args.hot), end="")
    print("runs:\n" + notes(outs, n1, n2), end="")
    return 1 if any(o.failures for o in outs) else 0

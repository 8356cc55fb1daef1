#!/usr/bin/python3 -B
# SPDX-License-Identifier: BSD-2-Clause
"""bench/instructions --fit (benchlib/lsfit.py, instructions.fit_table):
Ir = a + b*n + c*turns over every run of a build; the exact recovery, the
noisy one, the refusal of turns that do not vary apart from n (fallback to
the two-length difference), --fit without --repeat K >= 2, and --reread of
the kept -rK files."""
import os
import random
import sys
import tempfile
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchtap import case, eq, raises, run  # noqa: E402
from benchlib import callgrind as cg  # noqa: E402
from benchlib import instructions, lsfit  # noqa: E402

NS = [1000, 1000, 1000, 2000, 2000, 2000]
TURNS = [9_100, 12_345, 15_020, 19_870, 26_431, 21_002]   # spin: varies from run to run


def meas(n, turns, own, prov, fn="0x2ca0 [librxe-rdmav34.so]"):
    classes = {cg.OWN: own, cg.PROVIDER: prov, cg.LIBC: 500, cg.OTHER: 2000}
    return instructions.Measured(n, sum(classes.values()), classes, 0, 0, 0, turns, fn, 1.0,
                                 ("poll_send",))


def outcome(name, runs, d="/b"):
    o = instructions.Outcome(instructions.Build(name, Path(d), [d]))
    for m in runs:
        o.every.setdefault(m.n, []).append(m)
    for n, ms in o.every.items():
        o.runs[n] = min(ms, key=lambda m: m.total)
    return o


def rows_of(text):
    """label -> cells of the fit table (its first block, up to the notes)."""
    out = {}
    for line in text.splitlines()[1:]:
        if line.startswith("b: "):
            break
        label, _, rest = line.strip().partition("  ")
        out[label.strip()] = rest.split()
    return out


@case
def exact_recovery():
    """integer runs of known a, b, c: the fit gives them exactly, residual 0"""
    a, b, c = 1_234_567, 312, Fraction(75, 2)
    ys = [a + b * n + c * t for n, t in zip(NS, TURNS)]
    f = lsfit.fit(NS, TURNS, ys)
    eq((f.a, f.b, f.c, f.residual), (a, b, c, 0.0))
    eq(f.cond < 10, True, f.cond)


@case
def noisy_recovery():
    """+-50 instructions of noise per run: b within 0.5, c within 0.05 of the truth"""
    rnd = random.Random(21)
    a, b, c = 5_000_000, 250.0, 41.0
    ns = NS * 2
    ts = [t + rnd.randrange(-3000, 3000) for t in TURNS * 2]
    ys = [round(a + b * n + c * t + rnd.uniform(-50, 50)) for n, t in zip(ns, ts)]
    f = lsfit.fit(ns, ts, ys)
    eq(abs(float(f.b) - b) < 0.5, True, float(f.b))
    eq(abs(float(f.c) - c) < 0.05, True, float(f.c))
    eq(0 < f.residual <= 100, True, f.residual)


@case
def singular_detected():
    """turns constant, exactly a line of n (-e: one poll per WR), or nearly so: Collinear"""
    ys = [100 * n for n in NS]
    raises(lsfit.Collinear, lsfit.fit, NS, [7] * 6, ys, match="same in every run")
    raises(lsfit.Collinear, lsfit.fit, NS, [n + 3 for n in NS], ys, match="straight line")
    raises(lsfit.Collinear, lsfit.fit, NS, [2 * n + (k % 2) for k, n in enumerate(NS)], ys,
           match="condition number")
    raises(lsfit.Collinear, lsfit.fit, [1000] * 4, [1, 2, 3, 4], ys[:4], match="same n")
    raises(lsfit.Collinear, lsfit.fit, NS[:2], TURNS[:2], ys[:2], match="3 or more")
    eq(lsfit.condition(NS, [n + 3 for n in NS]), float("inf"))


@case
def table_fit_and_ratios():
    """the table: b, c and the residual per build and row, the ratios ours/6.06"""
    ours = outcome("ours", [meas(n, t, 10_000 + 300 * n + 20 * t, 5_000 + 100 * n + 40 * t)
                            for n, t in zip(NS, TURNS)])
    up = outcome("6.06", [meas(n, t, 20_000 + 600 * n + 25 * t, 5_000 + 100 * n + 40 * t)
                          for n, t in zip(NS, TURNS)], "/usr/bin")
    text = instructions.fit_table([ours, up], 1000, 2000)
    rows = rows_of(text)
    eq(rows["own code (executable + own libs)"], ["300.0", "20.00", "0", "600.0", "25.00", "0",
                                                  "0.50", "0.80"], text)
    eq(rows["provider (librxe, libibverbs)"][-2:], ["1.00", "1.00"], text)
    eq(rows["total"][:2], ["400.0", "60.00"], text)
    eq(rows["report phase (perftest/report)"][:3], ["n/a", "n/a", "-"], text)
    eq("turns = calls of 0x2ca0 [librxe-rdmav34.so] (own callers: poll_send)" in text, True, text)
    eq("busiest provider fn" in text.split("b: ")[0], False, "the turns row is no fit row")
    for ms in up.every.values():       # stripped: its callers are addresses
        for m in ms:
            m.turn_callers = ("0x0000000000021980",)
    text = instructions.fit_table([ours, up], 1000, 2000)
    eq("6.06: turns = calls of 0x2ca0 [librxe-rdmav34.so] (the same function as in ours)" in text,
       True, text)


@case
def table_falls_back():
    """a build whose turns follow n exactly: its rows are the two-length difference, marked *"""
    ours = outcome("ours", [meas(n, t, 10_000 + 300 * n + 20 * t, 0) for n, t in zip(NS, TURNS)])
    lin = outcome("6.06", [meas(n, n + 5, 20_000 + 600 * n + 25 * (n + 5), 0) for n in NS],
                  "/usr/bin")
    text = instructions.fit_table([ours, lin], 1000, 2000)
    own = rows_of(text)["own code (executable + own libs)"]
    eq(own, ["300.0", "20.00", "0", "625.0*", "-", "-", "0.48", "-"], text)
    eq("6.06: turns = calls of" in text and "no fit: the turns are exactly a straight line of n"
       in text, True, text)
    fns = outcome("6.06", [meas(n, t, 1, 0, fn=f"0x{k}") for k, (n, t) in
                           enumerate(zip(NS, TURNS))], "/usr/bin")
    eq("busiest provider function differs" in instructions.fit_table([ours, fns], 1000, 2000),
       True)


@case
def turns_are_the_spin():
    """turns: the provider function whose calls vary apart from n (the poll), not the busiest
    (a post, n calls a run: ib_write_bw's 8000-WR runs)"""
    post, poll = "0x4da0 [librxe-rdmav34.so]", "0x2ca0 [librxe-rdmav34.so]"
    polls = [900, 700, 1100, 500, 300, 600]     # fewer calls than the post, varying less
    runs = []
    for n, t in zip(NS, polls):
        m = meas(n, n, 50_000 + 300 * n + 218 * t, 0, fn=post)
        m.provider_calls = {post: n, poll: t, "0x9990 [libibverbs.so.1]": 3}
        m.provider_callers = {post: ("wr_build",), poll: ("poll_send",)}
        runs.append(m)
    text = instructions.fit_table([outcome("ours", runs)], 1000, 2000)
    eq(rows_of(text)["own code (executable + own libs)"], ["300.0", "218.00", "0"], text)
    eq(f"turns = calls of {poll} (own callers: poll_send)" in text, True, text)
    eq(instructions.spinning_function(runs), poll)


@case
def fit_needs_repeat():
    """--fit with --repeat 1 (or none) is refused, exit 2, before any run or lab"""
    import contextlib
    import io
    for argv in (["--fit"], ["--fit", "--repeat", "1", "--tool", "ib_write_lat"]):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):   # --reread: nothing would run even unrefused
            rc = instructions.main([*argv, "--reread", "/nonexistent"])
        eq((rc, "--fit needs --repeat K with K >= 2" in err.getvalue()), (2, True),
           err.getvalue())


def listing(exe, n, turns, own_ir):
    """callgrind_annotate --tree=caller text of one run: own code, its poll turns."""
    rxe = "/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so"
    return f"""Profiled target:  {exe} -n {n} (PID 1, part 1)
--------------------------------------------------------------------------------
{own_ir + 40 * turns:,} (100.0%)  PROGRAM TOTALS

--------------------------------------------------------------------------------
Ir                  file:function
--------------------------------------------------------------------------------
{own_ir:,} (50.00%)  *  /src/perftest/engine/run_lat.c:wait_cq_spin [{exe}]

{40 * turns:,} (50.00%)  < /src/perftest/engine/run_lat.c:wait_cq_spin ({turns:,}x) [{exe}]
{40 * turns:,} (50.00%)  *  ???:0x0000000000002ca0 [{rxe}]
"""


@case
def reread_every_run():
    """--reread DIR --fit --repeat K: the fit again from the kept TAG-rK.cg files"""
    exe = "/b/perftest/ib_write_lat"
    real = instructions.annotate
    instructions.annotate = lambda path: cg.parse(Path(path).read_text())
    try:
        with tempfile.TemporaryDirectory() as d:
            for k, (n, t) in enumerate(zip(NS, TURNS)):
                text = listing(exe, n, t, 7_000 + 250 * n + 9 * t)
                Path(d, f"ours-n{n}-r{k % 3}.cg").write_text(text)
                Path(d, f"ours-n{n}.cg").write_text(text)
            old = os.environ.get("PT_BUILD")
            os.environ["PT_BUILD"] = "/b"
            try:
                import contextlib
                import io
                out = io.StringIO()
                with contextlib.redirect_stdout(out):
                    rc = instructions.main(["--tool", "ib_write_lat", "--iters", "1000,2000",
                                            "--bin", "x=/nonexistent", "--skip", "x",
                                            "--repeat", "3", "--fit", "--reread", d])
                text = out.getvalue()
                eq(rows_of(text.split("fit Ir")[1])["own code (executable + own libs)"][:3],
                   ["250.0", "9.00", "0"], text)
                eq(rc, 1, "the skipped build's files are missing: a failure")
                os.remove(Path(d, "ours-n2000-r2.cg"))
                with contextlib.redirect_stdout(io.StringIO()) as out2:
                    instructions.main(["--iters", "1000,2000", "--repeat", "3", "--fit",
                                       "--reread", d])
                eq("FAILED" in out2.getvalue() and "a run failed" in out2.getvalue(), True,
                   out2.getvalue())
            finally:
                if old is None:
                    os.environ.pop("PT_BUILD")
                else:
                    os.environ["PT_BUILD"] = old
    finally:
        instructions.annotate = real


sys.exit(run())

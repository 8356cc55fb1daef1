#!/usr/bin/python3 -B
# SPDX-License-Identifier: BSD-2-Clause
"""bench/monitor-overhead's arithmetic and labels, over a stand-in lab and
run (the lab run itself is bench/README.md's): bad arguments exit 2; the
ratio and the added cost are medians over the ABBA rounds; hooked calls come
from rdmamon's counts, or with --bare from the programs' hits; an --icount
lab prints instructions, not us; no hooked call with stats on is an error."""
import contextlib
import io
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchtap import case, load_script, eq, raises, run  # noqa: E402

mo = load_script("monitor-overhead", "monitor_overhead")
# the built programs it checks for: any file that exists will do
mo.QP_CYCLE = mo.RDMAMON = type(mo.QP_CYCLE)(sys.executable)


class FakeLab:
    def __init__(self, icount):
        self._icount = icount

    def running(self):
        return True

    def icount(self):
        return self._icount

    def device(self, node):
        return "rxe0"


def fake_run(plain_ns, mon_ns, calls_per_block, hits):
    """blocks in the order asked; rdmamon's first and final lines with
    calls_per_block calls counted per monitored block; bpftool's list with
    `hits` run_cnt in all."""
    seen = {}

    def runner(lab, dev, order, cycles, bare, stats):
        seen.update(order=order, bare=bare, stats=stats)
        blocks = []
        for i, b in enumerate(order):
            ns = (mon_ns if b else plain_ns)[i // 2]
            blocks.append({"monitored": b == 1, "cycles": cycles, "min_ns_per_cycle": ns,
                           "median_ns_per_cycle": ns + 1000, "cpu_ns_per_cycle": ns})
        nmon = sum(order)
        first = {"calls": {"create_qp": {"total": 0}}, "cgroups": []}
        final = {"final": True, "calls": {"create_qp": {"total": calls_per_block * nmon}}, "cgroups": []}
        progs = [{"name": "call_0", "run_cnt": hits, "run_time_ns": hits * 300}] if hits else []
        return blocks, first, final, progs
    return runner, seen


def main(args, icount=False, plain=(100000.0, 102000.0), mon=(110000.0, 111000.0), calls=101, hits=0):
    runner, seen = fake_run(plain, mon, calls, hits)
    mo.Lab = lambda top: FakeLab(icount)
    mo.run = runner
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = mo.main(args)
    return rc, out.getvalue(), seen


@case
def bad_arguments():
    """an unknown flag, 0 rounds, too few cycles, a third number: usage, exit 2"""
    for args in (["--bogus"], ["0"], ["2", "8"], ["2", "100", "3"], ["x"]):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            eq(mo.main(args), 2, str(args))
        assert "usage: bench/monitor-overhead" in err.getvalue(), err.getvalue()


@case
def medians_and_ratio():
    """2 rounds (plain 100/102 us, rdmamon 110/111): medians 101 and 110.5, ratio 1.0941, +9500 ns per cycle"""
    rc, text, seen = main(["2", "100"])
    eq(rc, 0)
    eq(seen["order"], [0, 1, 1, 0], "ABBA")
    eq(seen["bare"], False)
    eq(seen["stats"], True)
    line = next(x for x in text.splitlines() if x.startswith("QP create"))
    f = line.split()
    eq(f[-6:], ["101.0", "110.5", "1.0941", "9500", "1.00", "9500"], line)
    assert "plain us" in text and "rdmamon us" in text, text
    assert "rdmamon faster in 0 of 2 rounds" in text, text


@case
def icount_prints_instructions():
    """an --icount lab: the same figures as kinstr and instr, and the note saying so"""
    rc, text, _ = main(["2", "100"], icount=True)
    eq(rc, 0)
    assert "plain kinstr" in text and "+instr/cycle" in text and "+instr/hook" in text, text
    assert "a guest ns is a guest instruction" in text, text
    assert " us" not in text.replace("plain kinstr", ""), text


@case
def bare_counts_program_hits():
    """--bare: the hooks per cycle are the programs' hits (404 over 2 blocks of 100+1 cycles: 2.00)"""
    rc, text, seen = main(["--bare", "2", "100"], calls=0, hits=404)
    eq(rc, 0)
    eq(seen["bare"], True)
    line = next(x for x in text.splitlines() if x.startswith("QP create"))
    assert "(bare)" in line and line.split()[-2] == "2.00", line


@case
def bare_without_stats_has_no_hook_figure():
    """--bare --no-stats: no hits to count, the per-hook columns say n/a, no program table"""
    rc, text, seen = main(["--bare", "--no-stats", "2", "100"], calls=0, hits=0)
    eq(rc, 0)
    eq(seen["stats"], False)
    line = next(x for x in text.splitlines() if x.startswith("QP create"))
    eq(line.split()[-2:], ["n/a", "n/a"], line)
    assert "BPF program" not in text, text


@case
def no_hooked_call_is_an_error():
    """stats on and not one hooked call counted: the run says so and exits 1"""
    e = raises(SystemExit, main, ["2", "100"], False, (1.0, 1.0), (1.0, 1.0), 0, 0)
    eq(e.code, 1)


sys.exit(run())

#!/usr/bin/python3 -B
# SPDX-License-Identifier: BSD-2-Clause
"""bench/capture-vs-tcpdump's verdicts (pure: a table of results in, the
lines out): the rates the sender did not reach are left out, the highest
lossless rate of each capturer and their ratio (a lower bound when rdmacap
held the top rate, or when tcpdump lost at every rate), the CPU ratio at the
highest rate both held and its median over those rates."""
import contextlib
import io
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchtap import case, load_script, eq, run  # noqa: E402

cvt = load_script("capture-vs-tcpdump", "capture_vs_tcpdump")


def row(lost, us, gen):
    return {"sent": 1000, "recorded": 1000 - lost, "lost": lost, "cpu_us_per_pkt": us,
            "gen_pps": gen}


def table(rows):
    """rows: rate -> ((rdmacap lost, us), (tcpdump lost, us), sender pps)"""
    res = {}
    for rate, (r, t, gen) in rows.items():
        res[("rdmacap", rate)] = row(*r, gen)
        res[("tcpdump", rate)] = row(*t, gen)
    return res


def lines(rows):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        cvt.verdicts(table(rows), sorted(rows))
    return out.getvalue()


@case
def both_lossless_then_tcpdump_loses():
    """rdmacap holds the top rate, tcpdump the one below: ratio 1.50 or more; CPU at 200000"""
    text = lines({100000: ((0, 0.4), (0, 1.2), 99000), 200000: ((0, 0.3), (0, 1.0), 195000),
                  300000: ((0, 0.5), (900, 1.5), 290000)})
    assert "rdmacap 300000 pps, tcpdump 200000 pps; ratio 1.50 or more" in text, text
    assert "CPU per packet at 200000 pps (both lossless): rdmacap 0.30 us, tcpdump 1.00 us; ratio 0.30" in text, text
    assert "over the 2 rates both held: median ratio 0.32 (per rate 0.30 to 0.33" in text, text


@case
def unreached_rates_left_out():
    """a rate the sender missed by more than 10 % says nothing: tcpdump's loss there is not counted"""
    text = lines({100000: ((0, 0.4), (0, 1.2), 99000), 200000: ((0, 0.3), (500, 1.0), 150000)})
    assert "the sender reached 100000 pps of the ladder at most" in text, text
    assert "rdmacap 100000 pps, tcpdump 100000 pps; ratio 1.00 or more" in text, text


@case
def tcpdump_never_lossless():
    """tcpdump lost at every rate: its lossless rate is below the lowest, the ratio a lower bound"""
    text = lines({10000: ((0, 3.0), (10, 9.0), 10000), 20000: ((0, 2.5), (300, 9.5), 20000)})
    assert "tcpdump none (it lost at 10000 pps already); ratio > 2.00" in text, text
    assert "CPU per packet at 10000 pps (the lowest rate; tcpdump lost there)" in text, text
    assert "median" not in text, text


@case
def rdmacap_loses_too():
    """both lost at the top rate: the ratio is exact, not a lower bound"""
    text = lines({10000: ((0, 3.0), (0, 9.0), 10000), 20000: ((0, 3.0), (30, 9.0), 20000),
                  40000: ((5, 3.0), (300, 9.0), 40000)})
    assert "rdmacap 20000 pps, tcpdump 10000 pps; ratio 2.00 (goal" in text, text


@case
def nothing_reached():
    """the sender reached no rate: no verdict at all"""
    text = lines({100000: ((0, 0.4), (0, 1.2), 50000)})
    eq(text.strip().splitlines()[-1].strip(),
       "the sender reached none pps of the ladder at most: higher rates are left out of the verdicts")


sys.exit(run())

# SPDX-License-Identifier: BSD-2-Clause
"""Least squares of y = a + b*n + c*t over a few runs (bench/instructions
--fit): n is a run's length (-n), t its count of poll turns, y one row's
instructions. b is then the work per WR with the turns apart, c the work
per turn (bench/README.md, "Spinning tools: the fit").

Solved in exact rationals (fractions): on centred columns the 3x3 normal
equations reduce to 2x2, solved by Cramer's rule, and a follows from the
means. Integer inputs give the exact a, b, c; the tests rely on it.
The fit needs t to vary apart from n: when t is constant or a straight line
of n (every -e run: one poll per WR), or nearly so, b and c cannot be told
apart and Collinear says why."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

# Above this condition number of the centred, unit-scaled (n, t) columns,
# b and c trade against each other: cond 100 means |corr(n, t)| > 0.9998,
# where one poll turn of jitter on a thousand moves c by the run's noise.
MAX_COND = 100.0


class Collinear(ValueError):
    """The turns do not vary independently of n: no fit (the message says how)."""


@dataclass(frozen=True)
class Fit:
    a: Fraction
    b: Fraction               # per WR, turns apart
    c: Fraction               # per turn
    cond: float               # condition number of the centred, scaled (n, t) columns
    residual: float           # max |y - (a + b n + c t)| over the runs

    def at(self, n: int, t: int) -> Fraction:
        return self.a + self.b * n + self.c * t


def condition(ns: Sequence[int], ts: Sequence[int]) -> float:
    """The 2-norm condition number of the centred (n, t) columns scaled to
    unit length: (1 + |r|) / sqrt(1 - r^2), r their correlation; inf when
    either is constant or r = +-1."""
    _, _, snn, stt, snt = _moments(ns, ts)
    if snn == 0 or stt == 0:
        return math.inf
    q = 1 - snt * snt / (snn * stt)          # 1 - r^2, exact
    if q <= 0:
        return math.inf
    return (1 + math.sqrt(1 - float(q))) / math.sqrt(float(q))


def unexplained(ns: Sequence[int], ts: Sequence[int]) -> Fraction:
    """How much t varies apart from n: the residual sum of squares of t on
    a line of n (0: t is constant or exactly such a line)."""
    _, _, snn, stt, snt = _moments(ns, ts)
    return stt if snn == 0 else stt - snt * snt / snn


def _moments(ns: Sequence[int], ts: Sequence[int]) -> tuple[Fraction, Fraction, Fraction,
                                                            Fraction, Fraction]:
    k = len(ns)
    mn = Fraction(sum(ns), k)
    mt = Fraction(sum(ts), k)
    snn = sum(((n - mn) ** 2 for n in ns), Fraction(0))
    stt = sum(((t - mt) ** 2 for t in ts), Fraction(0))
    snt = sum(((n - mn) * (t - mt) for n, t in zip(ns, ts)), Fraction(0))
    return mn, mt, snn, stt, snt


def fit(ns: Sequence[int], ts: Sequence[int], ys: Sequence[int | float],
        max_cond: float = MAX_COND) -> Fit:
    """y = a + b n + c t by least squares; Collinear when t does not vary
    apart from n (constant, a line of n, or cond > max_cond)."""
    if not (len(ns) == len(ts) == len(ys)):
        raise ValueError("n, turns and values differ in length")
    if len(ns) < 3:
        raise Collinear(f"{len(ns)} runs: a fit of 3 parameters needs 3 or more")
    mn, mt, snn, stt, snt = _moments(ns, ts)
    if snn == 0:
        raise Collinear("every run has the same n")
    if stt == 0:
        raise Collinear(f"the turns are the same in every run ({ts[0]})")
    det = snn * stt - snt * snt
    if det == 0:
        raise Collinear("the turns are exactly a straight line of n")
    cond = condition(ns, ts)
    if cond > max_cond:
        raise Collinear(f"the turns follow n too closely (condition number {cond:.3g} > "
                        f"{max_cond:g})")
    yq = [Fraction(y) for y in ys]
    my = sum(yq, Fraction(0)) / len(yq)
    sny = sum(((n - mn) * (y - my) for n, y in zip(ns, yq)), Fraction(0))
    sty = sum(((t - mt) * (y - my) for t, y in zip(ts, yq)), Fraction(0))
    b = (sny * stt - sty * snt) / det
    c = (sty * snn - sny * snt) / det
    a = my - b * mn - c * mt
    resid = max(abs(float(y - (a + b * n + c * t))) for n, t, y in zip(ns, ts, yq))
    return Fit(a, b, c, cond, resid)

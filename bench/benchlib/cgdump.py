# SPDX-License-Identifier: BSD-2-Clause
"""A callgrind output file read per instruction (bench/instructions), and the
spin waits it shows.

callgrind_annotate sums costs per function; a wait that spins on memory
(`ib_write_lat`'s client waiting for the peer's write) calls nothing, so no
call count says how often it turned. With `--dump-instr=yes` the file holds
every executed instruction's own cost, which does: an instruction of the
loop that runs many times per WR is a wait's turn, whatever the build and
whether or not it has symbols.

The file format is callgrind's own ("callgrind format", valgrind's manual):
header lines (`positions: instr line`, `events: Ir`), then `ob=`, `fl=`,
`fi=`, `fe=`, `fn=` lines (names compressed as `(id) name` the first time,
`(id)` after), cost lines `POSITION... COST...`, and call blocks: a
`calls=COUNT TARGET` line whose next cost line is the call's inclusive cost,
not the caller's own. Positions are absolute (`0x4012a3`), or relative to
the last one of their kind (`+3`, `-2`, `*` for the same)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

from benchlib import lsfit

Addr = tuple[Optional[str], int]         # (object, address)


class DumpError(Exception):
    """Not a callgrind output file (the message says where)."""


class NoInstrs(DumpError):
    """A callgrind output file without per-instruction costs (run without
    --dump-instr=yes)."""


_NAMED = re.compile(r"^\((\d+)\)(?: (.*))?$")


@dataclass
class Instr:
    fn: str
    obj: Optional[str]
    addr: int
    ir: int


def _name(value: str, table: dict[str, str]) -> str:
    """`(id) name` defines id, `(id)` refers to it, a bare name is itself."""
    m = _NAMED.match(value)
    if not m:
        return value
    if m.group(2) is not None:
        table[m.group(1)] = m.group(2)
        return m.group(2)
    if m.group(1) not in table:
        raise DumpError(f"name id ({m.group(1)}) used before it is defined")
    return table[m.group(1)]


def _position(tok: str, last: int) -> int:
    if tok == "*":
        return last
    if tok[0] in "+-":
        return last + int(tok, 0)
    return int(tok, 0)


def instructions(text: str) -> list[Instr]:
    """Every instruction's own Ir (call costs left out), summed over the file's
    blocks and parts: one entry per (object, function, address)."""
    # without a positions: line, positions are lines (the format's default)
    declared = re.search(r"^positions:(.*)$", text, re.M)
    if declared is None or declared.group(1).split()[:1] != ["instr"]:
        raise NoInstrs(f"positions are {declared.group(1).strip() if declared else 'line'}: run "
                       "callgrind with --dump-instr=yes for per-instruction costs")
    positions: Optional[list[str]] = None
    events: Optional[list[str]] = None
    names: dict[str, dict[str, str]] = {"ob": {}, "fl": {}, "fn": {}}
    obj: Optional[str] = None
    fn = "???"
    last: list[int] = []
    call_cost_next = False
    out: dict[tuple[Optional[str], str, int], int] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line or line.startswith("#"):
            continue
        c = line[0]
        if c.isdigit() or c in "+-*":
            if positions is None or events is None:
                raise DumpError(f"line {lineno}: a cost line before the positions: and "
                                "events: lines")
            toks = line.split()
            if len(toks) < len(positions):
                raise DumpError(f"line {lineno}: {len(toks)} fields, want at least "
                                f"{len(positions)} positions")
            try:
                pos = [_position(t, last[i]) for i, t in enumerate(toks[:len(positions)])]
                cost = int(toks[len(positions)]) if len(toks) > len(positions) else 0
            except (ValueError, IndexError):
                raise DumpError(f"line {lineno}: not a cost line: {line!r}") from None
            last = pos
            if call_cost_next:          # the call's inclusive cost: the callee's, not ours
                call_cost_next = False
                continue
            key = (obj, fn, pos[0])
            out[key] = out.get(key, 0) + cost
            continue
        field, sep, value = line.partition("=")
        if sep and field in ("ob", "fl", "fn", "fi", "fe", "cob", "cfi", "cfl", "cfn"):
            # cob/cfi/cfn name a call's target: they define ids but do not move us
            table = names["ob" if field.endswith("ob") else
                          "fn" if field.endswith("fn") else "fl"]
            name = _name(value.strip(), table)
            if field == "ob":
                obj = name
            elif field == "fn":
                fn = name
            continue
        if sep and field == "calls":
            call_cost_next = True
            continue
        if sep and field in ("jump", "jcnd"):
            continue
        head, sep, value = line.partition(":")
        if sep and head == "positions":
            positions = value.split()
            last = [0] * len(positions)
        elif sep and head == "events":
            events = value.split()
    if positions is None or events is None:
        raise DumpError("no positions: / events: lines: not a callgrind output file")
    return [Instr(fn, o, addr, ir) for (o, fn, addr), ir in out.items()]


def read(path: str) -> list[Instr]:
    with open(path, encoding="utf-8", errors="replace") as f:
        return instructions(f.read())


def hot(instrs: Iterable[Instr], n: int, per_wr: float) -> set[Addr]:
    """The instructions (by object and address) that ran at least per_wr
    times per WR on average (n: the run's WRs): in a loop, the turns of its
    waits; the rest of a loop runs a fixed number of times per WR."""
    return {(i.obj, i.addr) for i in instrs if i.ir >= per_wr * n}


@dataclass
class WaitRun:
    """One run's loop (own code, report code out): its WRs, its Ir, its
    instructions."""
    n: int
    loop: int
    instrs: list[Instr]


@dataclass
class Waits:
    """A build's loop with its waits at one pass per WR (bench/README.md,
    "Waits at one pass"). The wait instructions are the union over the
    runs of each run's hot ones; a run's spin is their Ir, the rest of its
    loop is fitted as rest = a + b*n + c*spin (c: the share of the wait
    that does not run every turn, the stop rules' checks), or, where the
    spin does not vary apart from n, taken as the two-length difference of
    the runs with the least spin (why_not says why)."""
    hot: set[Addr]
    ns: list[int]
    spin: list[int]           # per run: Ir of the wait instructions
    rest: list[int]           # per run: the loop's Ir without them
    turns: list[int]          # per run: the busiest wait instruction's count
    fit: Optional[lsfit.Fit]
    b: Optional[float]        # the loop per WR without the waits
    why_not: str = ""

    @property
    def one_pass(self) -> Optional[float]:
        """The loop per WR with every wait instruction run once a WR."""
        return None if self.b is None else self.b + len(self.hot)


def waits(runs: Sequence[WaitRun], per_wr: float) -> Waits:
    hot_set: set[Addr] = set()
    for r in runs:
        hot_set |= hot(r.instrs, r.n, per_wr)
    spin = [sum(i.ir for i in r.instrs if (i.obj, i.addr) in hot_set) for r in runs]
    turns = [max((i.ir for i in r.instrs if (i.obj, i.addr) in hot_set), default=0)
             for r in runs]
    rest = [r.loop - s for r, s in zip(runs, spin)]
    ns = [r.n for r in runs]
    w = Waits(hot_set, ns, spin, rest, turns, None, None)
    try:
        w.fit = lsfit.fit(ns, spin, rest)
        w.b = float(w.fit.b)
        return w
    except lsfit.Collinear as e:
        w.why_not = (f"no loop instruction ran {per_wr:g} times a WR or more" if not hot_set
                     else str(e))
    # the two lengths, each by its run with the least spin
    least: dict[int, int] = {}
    for k, n in enumerate(ns):
        if n not in least or spin[k] < spin[least[n]]:
            least[n] = k
    if len(least) == 2:
        (n1, k1), (n2, k2) = sorted(least.items())
        w.b = (rest[k2] - rest[k1]) / (n2 - n1)
    else:
        w.why_not += "; the runs do not have two lengths"
    return w

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
    file: str = "???"        # its source file (an inlined header's where fi= says so)


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
    fl = src = "???"                    # the function's file; the file of the lines now
    last: list[int] = []
    call_cost_next = False
    out: dict[tuple[Optional[str], str, int], int] = {}
    files: dict[tuple[Optional[str], str, int], str] = {}
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
            files.setdefault(key, src)
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
                src = fl
            elif field == "fl":
                fl = src = name
            elif field in ("fi", "fe"):
                src = name
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
    return [Instr(fn, o, addr, ir, files[(o, fn, addr)]) for (o, fn, addr), ir in out.items()]


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
    """One run's loop (own code, report code out): its WRs and its
    instructions."""
    n: int
    instrs: list[Instr]


@dataclass
class Waits:
    """A build's loop with its waits at one pass per WR (bench/README.md,
    "Waits at one pass"), over all its runs:
    - hot: the wait instructions, the union over the runs of each run's hot
      ones (the same rule for every run); spin: their Ir per run;
    - varying: the loop's other instructions whose count differs between
      runs of the same length: code that runs with the waits but not every
      turn (the stop rules' checks, the way out of an inline poll into the
      long wait); checks: their Ir per run;
    - the rest runs the same number of times in every run of a length: the
      work of a WR, b per WR (its two-length difference), exact.
    With one run per length nothing can be told apart but the hot ones: b is
    then the two-length difference of the loop without them (why_not)."""
    hot: set[Addr]
    ns: list[int]
    spin: list[int]
    turns: list[int]          # per run: the busiest wait instruction's count
    varying: set[Addr]
    checks: list[int]
    b: Optional[float]
    why_not: str = ""

    @property
    def one_pass(self) -> Optional[float]:
        """The loop per WR with every wait instruction run once a WR."""
        return None if self.b is None else self.b + len(self.hot)


def waits(runs: Sequence[WaitRun], per_wr: float) -> Waits:
    hot_set: set[Addr] = set()
    for r in runs:
        hot_set |= hot(r.instrs, r.n, per_wr)
    counts = [{(i.obj, i.addr): i.ir for i in r.instrs} for r in runs]
    spin = [sum(c.get(a, 0) for a in hot_set) for c in counts]
    turns = [max((c.get(a, 0) for a in hot_set), default=0) for c in counts]
    ns = [r.n for r in runs]
    lengths = sorted(set(ns))
    w = Waits(hot_set, ns, spin, turns, set(), [0] * len(runs), None)
    if len(lengths) != 2:
        w.why_not = f"the runs have {len(lengths)} lengths, not 2"
        return w
    by_len = {n: [k for k, m in enumerate(ns) if m == n] for n in lengths}
    addrs = set().union(*counts) - hot_set
    if all(len(ks) >= 2 for ks in by_len.values()):
        w.varying = {a for a in addrs
                     if any(len({counts[k].get(a, 0) for k in ks}) > 1 for ks in by_len.values())}
        w.checks = [sum(c.get(a, 0) for a in w.varying) for c in counts]
        fixed = addrs - w.varying
        k1, k2 = by_len[lengths[0]][0], by_len[lengths[1]][0]
        w.b = sum(counts[k2].get(a, 0) - counts[k1].get(a, 0) for a in fixed) / \
            (lengths[1] - lengths[0])
        return w
    # one run of a length: the loop less its waits, by the runs with the least spin
    w.why_not = "one run of a length (--repeat K >= 2 tells the checks apart)"
    k1, k2 = (min(ks, key=lambda k: spin[k]) for ks in by_len.values())
    rest = [sum(c.values()) - sp for c, sp in zip(counts, spin)]
    w.b = (rest[k2] - rest[k1]) / (lengths[1] - lengths[0])
    return w

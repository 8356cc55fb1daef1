# SPDX-License-Identifier: BSD-2-Clause
"""callgrind_annotate's output, read (bench/instructions): the instructions
(Ir) of each function, which shared object it lives in, and who called it how
often; then the split by object class (the tool's own code, the verbs
provider, libc, other) and the difference between two run lengths, per WR.

The input is the text of `callgrind_annotate --threshold=100 --tree=caller
FILE`: for each function a line

    1,474,652 (14.72%)  *  /src/perftest/engine/run_bw.c:post_window [/build/perftest/ib_send_bw]

(its self cost) preceded by one line per caller

    3,115,625 (31.10%)  <  /src/perftest/engine/run_bw.c:pt_run_bw_send (19,805x) [/build/...]

(the cost spent in the function through that caller, and how many calls).
Annotated source (after a "-- Auto-annotated source" line) is not read.
The plain listing (without --tree) has the self lines without the star; both
are read. Code inlined from a header is listed under the header's file with
the caller's name and no object (`/src/util/clock.h:pt_run_bw_send`); it
takes the object that name has elsewhere in the same listing."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional, TypeVar

# "  1,234 (12.3%)  [*|<|>]  file:function [(NNx)] [[object]]"
_LINE = re.compile(r"^\s*(?P<ir>\d[\d,]*)\s+\(\s*[\d.]+%\)\s+(?:(?P<mark>[*<>])\s+)?"
                   r"(?P<name>\S.*?)(?:\s+\((?P<calls>\d[\d,]*)x\))?"
                   r"(?:\s+\[(?P<obj>[^\]]*)\])?\s*$")
_TOTAL = re.compile(r"^\s*(\d[\d,]*)\s+(?:\(\s*[\d.]+%\)\s+)?PROGRAM TOTALS\s*$")
_TARGET = re.compile(r"^Profiled target:\s+(\S+)")

OWN, PROVIDER, LIBC, OTHER = "own", "provider", "libc", "other"
CLASSES = (OWN, PROVIDER, LIBC, OTHER)


class ParseError(Exception):
    """The text is not callgrind_annotate's output (or holds no totals)."""


def _num(s: str) -> int:
    return int(s.replace(",", ""))


@dataclass
class Func:
    """One file:function entry: its self cost and the calls into it."""
    file: str
    fn: str
    obj: Optional[str]
    ir: int = 0
    calls: int = 0                                       # all callers together
    # (caller function, its object or None when the line shows none, calls)
    callers: list[tuple[str, Optional[str], int]] = field(default_factory=list)


@dataclass
class Profile:
    total: int
    target: str                 # the profiled executable (first word of the command)
    funcs: list[Func]

    def obj_of(self, fn: str) -> Optional[str]:
        """The object a function name has in this listing (the costliest
        entry of that name that shows one)."""
        best: Optional[Func] = None
        for f in self.funcs:
            if f.fn == fn and f.obj and (best is None or f.ir > best.ir):
                best = f
        return best.obj if best else None


def split_name(name: str) -> tuple[str, str]:
    """"file:function" -> (file, function); "???:0x2ca0" -> ("???", "0x2ca0")."""
    file, sep, fn = name.partition(":")
    return (file, fn) if sep else ("???", name)


def parse(text: str) -> Profile:
    """The functions of one callgrind_annotate listing (flat or --tree=caller)."""
    total: Optional[int] = None
    target = ""
    funcs: list[Func] = []
    pending: list[tuple[str, Optional[str], int]] = []   # callers before their "*" line
    in_body = False
    for line in text.splitlines():
        m = _TARGET.match(line)
        if m:
            target = m.group(1)
            continue
        m = _TOTAL.match(line)
        if m:
            total = _num(m.group(1))
            continue
        if line.startswith("Ir") and "file:function" in line:
            in_body = True
            continue
        if line.startswith("-- "):      # annotated source follows: no more functions
            break
        if not in_body or not line.strip():
            if not line.strip():
                pending = []
            continue
        m = _LINE.match(line)
        if not m:
            continue
        mark = m.group("mark")
        if mark in ("<", ">"):
            if mark == "<" and m.group("calls"):
                pending.append((split_name(m.group("name"))[1], m.group("obj") or None,
                                _num(m.group("calls"))))
            continue
        file, fn = split_name(m.group("name"))
        f = Func(file, fn, m.group("obj") or None, _num(m.group("ir")))
        f.callers = pending
        f.calls = sum(n for _, _, n in pending)
        pending = []
        funcs.append(f)
    if total is None:
        raise ParseError("no PROGRAM TOTALS line: not callgrind_annotate output")
    if not funcs and total:
        raise ParseError("no file:function lines: not callgrind_annotate output "
                         "(or run without --threshold=100)")
    # code inlined from headers: the object its function has elsewhere
    named = {f.fn: f.obj for f in sorted(funcs, key=lambda f: f.ir) if f.obj}
    for f in funcs:
        if not f.obj:
            f.obj = named.get(f.fn)
        f.callers = [(c, o or named.get(c), n) for c, o, n in f.callers]
    return Profile(total, target, funcs)


PROVIDER_RE = re.compile(r"(^|/)(lib[\w.-]+-rdmav\d+\.so|libibverbs\.so[\d.]*)$")
LIBC_RE = re.compile(r"(^|/)libc(-[\d.]+)?\.so[\d.]*$")


def classify(obj: Optional[str], own: Callable[[str], bool]) -> str:
    """The class of a shared object: own (own(obj) says so), provider
    (lib*-rdmav*.so, libibverbs), libc, or other (ld.so, valgrind's preload,
    libnl, ..., and code no object was found for)."""
    if not obj or obj == "???":
        return OTHER
    if own(obj):
        return OWN
    if PROVIDER_RE.search(obj):
        return PROVIDER
    if LIBC_RE.search(obj):
        return LIBC
    return OTHER


def own_objects(target: str, own_dirs: Iterable[str]) -> Callable[[str], bool]:
    """own(obj): obj is the profiled executable or lies under one of
    own_dirs (our own libraries: the build tree)."""
    dirs = [d.rstrip("/") + "/" for d in own_dirs if d]
    return lambda obj: obj == target or any(obj.startswith(d) for d in dirs)


def by_class(p: Profile, own: Callable[[str], bool]) -> dict[str, int]:
    """Self cost summed per object class; the classes add up to the total
    (what callgrind_annotate did not list, below its threshold, is other)."""
    out = {c: 0 for c in CLASSES}
    for f in p.funcs:
        out[classify(f.obj, own)] += f.ir
    out[OTHER] += p.total - sum(out.values())
    return out


def cost_where(p: Profile, pick: Callable[[Func], bool]) -> int:
    """Self cost of the entries pick() chooses (by file or function name)."""
    return sum(f.ir for f in p.funcs if pick(f))


def called_only_from(p: Profile, roots: Iterable[str]) -> set[str]:
    """The functions that run only under roots: the roots and every function
    whose callers all are such functions (a function one of whose callers
    lies elsewhere, or that has none listed, is not: it counts as run from
    elsewhere, the side that overstates the rest)."""
    callers: dict[str, set[str]] = {}
    for f in p.funcs:
        callers.setdefault(f.fn, set()).update(c for c, _, _ in f.callers)
    return _only_under(callers, set(roots))


T = TypeVar("T")


def _only_under(callers: dict[T, set[T]], roots: set[T]) -> set[T]:
    """The roots and, until nothing more joins, every function whose callers
    (at least one) all are in the set."""
    out = set(roots)
    grew = True
    while grew:
        grew = False
        for fn, cs in callers.items():
            if fn not in out and cs and cs <= out:
                out.add(fn)
                grew = True
    return out


Key = tuple[str, Optional[str]]      # (function, object)


def per_wr_callers(p: Profile, own: Callable[[str], bool], n: int) -> set[Key]:
    """The own functions that call a provider function at least n times in
    all (n: the run's WRs): those that post and poll per WR. Found by the call
    graph alone, so a stripped build's loop is found as ours is."""
    calls: dict[Key, int] = {}
    callers: dict[Key, set[Key]] = {}
    for f in p.funcs:
        if classify(f.obj, own) != PROVIDER:
            continue
        for c, obj, k in f.callers:
            if classify(obj, own) == OWN:
                calls[(f.fn, f.obj)] = calls.get((f.fn, f.obj), 0) + k
                callers.setdefault((f.fn, f.obj), set()).add((c, obj))
    return {c for fn, k in calls.items() if k >= n for c in callers[fn]}


def loop_drivers(p: Profile, roots: set[Key], own: Callable[[str], bool], least: int) -> set[Key]:
    """The roots and the own functions that call into the set at least `least`
    times in all (a loop around posting or polling, per WR or per CQE),
    transitively; a function that calls it a few times (main calling the
    loop once) is not one."""
    edges: dict[Key, dict[Key, int]] = {}          # callee -> caller -> calls
    for f in p.funcs:
        if classify(f.obj, own) != OWN:
            continue
        for c, obj, k in f.callers:
            if classify(obj, own) == OWN:
                e = edges.setdefault((f.fn, f.obj), {})
                e[(c, obj)] = e.get((c, obj), 0) + k
    out = set(roots)
    grew = True
    while grew:
        grew = False
        into: dict[Key, int] = {}
        for callee, cs in edges.items():
            if callee in out:
                for caller, k in cs.items():
                    if caller != callee:
                        into[caller] = into.get(caller, 0) + k
        for caller, k in into.items():
            if caller not in out and k >= least:
                out.add(caller)
                grew = True
    return out


def loop_code(p: Profile, own: Callable[[str], bool], n: int) -> set[Key]:
    """A run's loop by the call graph (n: its WRs): the own functions that
    call a provider function n times or more, the functions that drive them
    (calling into them at least n/1000 times, 3 at least), and what runs
    only under those. A report phase that runs after the loop, and set-up,
    are left out, in a stripped build as in ours."""
    drivers = loop_drivers(p, per_wr_callers(p, own, n), own, max(3, n // 1000))
    return own_under(p, drivers, own)


def own_under(p: Profile, roots: set[Key], own: Callable[[str], bool]) -> set[Key]:
    """The roots and every own function all of whose callers are in the set
    (by function and object: stripped builds name functions by address,
    which two objects can share). A function with a caller elsewhere is out:
    the side that understates the loop."""
    callers: dict[Key, set[Key]] = {}
    for f in p.funcs:
        if classify(f.obj, own) == OWN:
            callers.setdefault((f.fn, f.obj), set()).update((c, o) for c, o, _ in f.callers)
    return _only_under(callers, roots)


def busiest_callee(p: Profile, own: Callable[[str], bool]) -> Optional[Func]:
    """The provider function the tool's own code calls most often: in a
    send loop that is the provider's poll_cq, called once per loop turn
    (stripped providers show it as ???:0x...)."""
    best: Optional[Func] = None
    best_n = 0
    for f in p.funcs:
        if classify(f.obj, own) != PROVIDER:
            continue
        n = calls_from_own(p, f, own)
        if n > best_n:
            best, best_n = f, n
    return best


def calls_from_own(p: Profile, callee: Func, own: Callable[[str], bool]) -> int:
    """How many times the tool's own code called callee (every entry of the
    same function and object)."""
    return sum(n for f in p.funcs if f.fn == callee.fn and f.obj == callee.obj
               for _, obj, n in f.callers if classify(obj, own) == OWN)


def per_wr(a: int, b: int, n_a: int, n_b: int) -> float:
    """(b - a) / (n_b - n_a): the cost of one more WR, constant costs cancelled."""
    if n_b == n_a:
        raise ValueError("the two run lengths must differ")
    return (b - a) / (n_b - n_a)

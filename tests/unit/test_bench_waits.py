#!/usr/bin/python3 -B
# SPDX-License-Identifier: BSD-2-Clause
"""benchlib/cgdump.py (bench/instructions, the waits at one pass): a
callgrind output file read per instruction (names compressed, positions
absolute and relative, call costs left out), refused when it is not one;
the waits found by their count per WR, the rest of the loop fitted on their
Ir, and the table from measured runs; a mutated file never crashes it."""
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchtap import case, eq, raises, run  # noqa: E402
from benchlib import callgrind as cg  # noqa: E402
from benchlib import cgdump, instructions  # noqa: E402

EXE = "/b/perftest/ib_write_lat"
RXE = "/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so"

# Shaped as callgrind 3.19 writes it with --dump-instr=yes --compress-pos=no
# (names compressed); the second block uses relative positions as it does
# without --compress-pos=no.
DUMP = f"""# callgrind format
version: 1
creator: callgrind-3.19.0
cmd:  {EXE} -n 1000
part: 1

positions: instr line
events: Ir
summary: 4000

ob=(1) {EXE}
fl=(1) /src/perftest/engine/run_lat.c
fn=(1) pt_run_lat_write
0x20ac0 82 300
0x20ac3 82 300
cob=(2) {RXE}
cfi=(2) ???
cfn=(2) 0x0000000000002ca0
calls=300 0x2ca0 0
0x20ac9 83 10200
0x20ac9 83 300
fi=(3) /src/perftest/engine/lat_loop.h
0x20b00 40 1000
fe=(1)
fn=(3) pt_lat_wait_byte
0x2e9c8 205 5000
+4 * 5000
+4 +1 5000
* * 7

ob=(2)
fl=(2)
fn=(2)
0x2ca0 0 10200
ob=(1)
fn=(1)
0x20ac0 82 5
"""


def by_addr(instrs):
    return {(i.obj, i.fn, i.addr): i.ir for i in instrs}


@case
def files_of_instructions():
    """each instruction's source file: the function's (fl=), or the inlined
    header's while fi= says so, back at fe="""
    got = {i.addr: i.file for i in cgdump.instructions(DUMP)}
    eq(got[0x20ac0], "/src/perftest/engine/run_lat.c")
    eq(got[0x20b00], "/src/perftest/engine/lat_loop.h")
    eq(got[0x2e9c8], "/src/perftest/engine/run_lat.c")   # fe=(1) went back
    eq(got[0x2ca0], "???")


@case
def reads_each_instruction():
    """own cost per (object, function, address); the call's inclusive cost is not the caller's"""
    got = by_addr(cgdump.instructions(DUMP))
    eq(got, {(EXE, "pt_run_lat_write", 0x20ac0): 305,       # two blocks summed
             (EXE, "pt_run_lat_write", 0x20ac3): 300,
             (EXE, "pt_run_lat_write", 0x20ac9): 300,       # 10200: the call's, left out
             (EXE, "pt_run_lat_write", 0x20b00): 1000,      # inlined file: same function
             (EXE, "pt_lat_wait_byte", 0x2e9c8): 5000,
             (EXE, "pt_lat_wait_byte", 0x2e9cc): 5000,      # +4
             (EXE, "pt_lat_wait_byte", 0x2e9d0): 5007,      # +4, then * (the same) again
             (RXE, "0x0000000000002ca0", 0x2ca0): 10200})


@case
def refuses_what_is_not_a_dump():
    """no per-instruction positions, an unknown name id, a cost before the
    header, a bad cost line, callgrind_annotate's text: DumpError"""
    no_instr = "positions: line\nevents: Ir\nfl=(1) f.c\nfn=(1) main\n82 300\n+1 200\n"
    raises(cgdump.NoInstrs, cgdump.instructions, no_instr)
    raises(cgdump.DumpError, cgdump.instructions, DUMP.replace("fn=(3) pt_lat_wait_byte",
                                                               "fn=(9)"))
    raises(cgdump.DumpError, cgdump.instructions, "0x10 1 5\npositions: instr\nevents: Ir\n")
    raises(cgdump.DumpError, cgdump.instructions, DUMP.replace("+4 +1 5000", "+4 zz 5000"))
    raises(cgdump.DumpError, cgdump.instructions,
           "Profiled target:  /b/x\n10,017,505 (100.0%)  PROGRAM TOTALS\n")
    eq(issubclass(cgdump.NoInstrs, cgdump.DumpError), True)


@case
def mutated_dumps_never_crash():
    """5000 mutations of the dump (lines dropped, doubled, swapped, bytes
    changed): a list of instructions or DumpError, nothing else"""
    rnd = random.Random(20261128)
    lines = DUMP.splitlines()
    alphabet = "0x+-*=() 9af\n:"
    bad = 0
    for _ in range(5000):
        ls = list(lines)
        for _ in range(rnd.randint(1, 4)):
            k = rnd.randrange(len(ls))
            op = rnd.randrange(4)
            if op == 0:
                del ls[k]
            elif op == 1:
                ls.insert(k, ls[rnd.randrange(len(ls))])
            elif op == 2 and ls[k]:
                j = rnd.randrange(len(ls[k]))
                ls[k] = ls[k][:j] + rnd.choice(alphabet) + ls[k][j + 1:]
            else:
                ls[k] = ls[k][:rnd.randrange(len(ls[k]) + 1)]
        try:
            for i in cgdump.instructions("\n".join(ls)):
                assert isinstance(i.addr, int) and isinstance(i.ir, int)
        except cgdump.DumpError:
            bad += 1
    eq(0 < bad < 5000, True, bad)


# --- the waits ---------------------------------------------------------------------------

A = 7_000                         # the loop's set-up, once a run
B = 61                            # per WR, without the waits
CHECK = 40                        # one stop-rule check, every 64 turns of a wait


def loop_run(n, turns, extra_hot=()):
    """A loop of n WRs whose byte wait turned `turns` times in all (6 wait
    instructions) and whose poll turned turns // 2 (3): per-WR code (B a WR,
    spread over addresses run once or twice a WR), a check every 64 turns."""
    instrs = [cgdump.Instr("loop", EXE, 0x1000 + k, n) for k in range(B - 2)]
    instrs.append(cgdump.Instr("loop", EXE, 0x1100, 2 * n))            # twice a WR: not a wait
    instrs.append(cgdump.Instr("loop", EXE, 0x1200, A))                 # set-up
    instrs += [cgdump.Instr("wait_byte", EXE, 0x2000 + k, turns) for k in range(6)]
    instrs += [cgdump.Instr("poll", EXE, 0x3000 + k, turns // 2) for k in range(3)]
    checks = (turns + turns // 2) // 64
    instrs += [cgdump.Instr("waiting", EXE, 0x4000 + k, checks) for k in range(CHECK)]
    for addr, ir in extra_hot:
        instrs.append(cgdump.Instr("poll", EXE, addr, ir))
    return cgdump.WaitRun(n, instrs)


RUNS = [(1000, 120_000), (1000, 190_000), (1000, 131_000),
        (2000, 250_000), (2000, 222_000), (2000, 390_000)]


@case
def waits_recovered():
    """the wait instructions found by their count per WR, the checks by a count
    that differs between runs of one length; b = the rest per WR, exactly;
    one pass = b + each wait instruction once"""
    w = cgdump.waits([loop_run(n, t) for n, t in RUNS], 8)
    eq(len(w.hot), 9)
    eq(sorted(a for _, a in w.hot)[:1], [0x2000])
    eq(w.why_not, "")
    eq(sorted(a for _, a in w.varying), [0x4000 + k for k in range(CHECK)])
    eq(w.b, float(B))
    eq(w.one_pass, B + 9.0)
    eq(w.checks[0], (120_000 + 60_000) // 64 * CHECK)
    eq(w.turns[:2], [120_000, 190_000])
    eq(w.ns, [n for n, _ in RUNS])


@case
def waits_union_of_runs():
    """an instruction hot in one run only is a wait in every run (the same
    rule for all the build's runs)"""
    rs = [loop_run(n, t) for n, t in RUNS]
    rs[0] = loop_run(1000, 120_000, extra_hot=[(0x3100, 9 * 1000)])   # 9 a WR: hot
    rs[3] = loop_run(2000, 250_000, extra_hot=[(0x3100, 5 * 2000)])   # 5 a WR: not by itself
    w = cgdump.waits(rs, 8)
    eq((EXE, 0x3100) in w.hot, True)
    eq(w.spin[3] - w.spin[4], (250_000 - 222_000) * 6 + (125_000 - 111_000) * 3 + 10_000)


@case
def waits_without_a_fit():
    """one run a length (no --repeat): the two-length difference of the loop
    less its waits, and why; no wait at all: b exact; one length: no b"""
    w = cgdump.waits([loop_run(1000, 120_000), loop_run(2000, 250_000)], 8)
    eq("one run of a length" in w.why_not, True, w.why_not)
    checks = ((250_000 + 125_000) // 64 - (120_000 + 60_000) // 64) * CHECK
    eq(w.b, (B * 1000 + checks) / 1000)
    calm = [cgdump.WaitRun(n, [cgdump.Instr("l", EXE, 0x10 + k, n) for k in range(58)]
                           + [cgdump.Instr("l", EXE, 0x100, 115)]) for n in (1000, 1000, 2000, 2000)]
    w = cgdump.waits(calm, 8)
    eq((w.hot, w.varying, w.b, w.one_pass, w.why_not), (set(), set(), 58.0, 58.0, ""))
    w = cgdump.waits([loop_run(1000, 120_000), loop_run(1000, 130_000)], 8)
    eq((w.b, "1 lengths" in w.why_not), (None, True), w.why_not)


def measured(run):
    loop = sum(i.ir for i in run.instrs)
    return instructions.Measured(run.n, loop, {c: 0 for c in cg.CLASSES}, 0, 0, 0, 0, "-",
                                 0, loop_cg=loop, loop_instrs=run.instrs)


@case
def table_of_waits():
    """bench/instructions' table: each build's waits, b and one pass, and the ratio"""
    from pathlib import Path
    ours = instructions.Outcome(instructions.Build("ours", Path("/b"), ["/b"]))
    old = instructions.Outcome(instructions.Build("6.06", Path("/usr/bin"), ["/usr/bin"]))
    for n, t in RUNS:
        ours.every.setdefault(n, []).append(measured(loop_run(n, t)))
    for n, t in ((1000, 100), (1000, 130), (2000, 100), (2000, 140)):
        r = cgdump.WaitRun(n,
                           [cgdump.Instr("f", EXE, 0x100 + k, n) for k in range(58)] +
                           [cgdump.Instr("f", EXE, 0x200, 115)] +
                           [cgdump.Instr("f", EXE, 0x20 + k, t * n) for k in range(12)])
        old.every.setdefault(n, []).append(measured(r))
    text = instructions.waits_table([ours, old], 1000, 2000, 8)
    rows = {}
    for line in text.splitlines():
        label, *cells = re.split(r"\s{2,}", line.strip())
        rows[label] = cells
    eq(rows["wait instructions"], ["9", "12"])
    b = rows["loop without the waits, b/WR"]
    eq(b[1:], ["58.0", f"{float(b[0]) / 58:.2f}"])
    one = rows["loop, waits at one pass, /WR"]
    eq(one[1], "70.0")
    eq(abs(float(one[0]) - (B + 9)) < 0.5, True, one)
    eq(one[2], f"{float(one[0]) / 70:.2f}")
    eq(rows["checks: instructions"], [str(CHECK), "0"])
    eq("one run of a length" in text, False, text)
    eq(instructions.waits_table([instructions.Outcome(ours.build)], 1000, 2000, 8), "")


@case
def hot_below_two_refused():
    """--hot 1.5 (code run once or twice a WR would be a wait): exit 2 before any run"""
    eq(instructions.main(["--hot", "1.5"]), 2)
    eq(instructions.main(["--hot", "nan"]), 2)


run()

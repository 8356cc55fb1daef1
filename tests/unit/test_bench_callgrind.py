#!/usr/bin/python3 -B
# SPDX-License-Identifier: BSD-2-Clause
"""benchlib/callgrind.py (bench/instructions): callgrind_annotate's output
read into functions, objects, callers; the split by object class; the
per-WR difference; and bench/instructions' table from two measured runs."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchtap import case, eq, raises, run  # noqa: E402
from benchlib import callgrind as cg  # noqa: E402
from benchlib import cgdump, instructions  # noqa: E402

EXE = "/src/build/perftest/ib_send_bw"
RXE = "/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so"
LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6"
LD = "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"
VERBS = "/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0"

# Shaped as callgrind_annotate 3.19 --threshold=100 --tree=caller prints it
# (lines from a real run of ours in the lab, fewer of them).
TREE = f"""--------------------------------------------------------------------------------
Profile data file 't1.out' (creator: callgrind-3.19.0)
--------------------------------------------------------------------------------
Profiled target:  {EXE} -d rxe0 -x 1 -c RC -s 64 -n 4000 -F 198.18.0.1 (PID 163, part 1)
Events recorded:  Ir
Thresholds:       100
Auto-annotation:  on

--------------------------------------------------------------------------------
Ir
--------------------------------------------------------------------------------
10,017,505 (100.0%)  PROGRAM TOTALS

--------------------------------------------------------------------------------
Ir                  file:function
--------------------------------------------------------------------------------

3,115,625 (31.10%)  < /src/perftest/engine/run_bw.c:pt_run_bw_send (19,805x) [{EXE}]
1,474,652 (14.72%)  *  /src/perftest/engine/run_bw.c:post_window [{EXE}]

7,562,827 (75.50%)  < /src/perftest/tools/send_bw.c:pt_send_bw_flow (1x) [{EXE}]
  831,752 ( 8.30%)  *  /src/perftest/engine/run_bw.c:pt_run_bw_send [{EXE}]

  812,885 ( 8.11%)  < /usr/include/infiniband/verbs.h:poll_send (19,805x)
  674,250 ( 6.73%)  *  ???:0x0000000000002ca0 [{RXE}]

  300,000 ( 3.00%)  < /src/perftest/engine/post.c:pt_post_send (4,000x) [{EXE}]
  268,000 ( 2.68%)  *  ???:0x0000000000004a20 [{RXE}]

  643,822 ( 6.43%)  *  ./elf/./elf/dl-lookup.c:do_lookup_x [{LD}]

  440,713 ( 4.40%)  < /src/perftest/engine/run_bw.c:poll_send (40x) [{EXE}]
  440,713 ( 4.40%)  *  /src/perftest/report/bw_peak.c:pt_bw_peak_complete [{EXE}]

  238,730 ( 2.38%)  *  ./time/../sysdeps/unix/sysv/linux/clock_gettime.c:clock_gettime@@GLIBC_2.17 [{LIBC}]

  198,071 ( 1.98%)  *  /src/util/clock.h:pt_run_bw_send

  138,635 ( 1.38%)  *  /usr/include/infiniband/verbs.h:poll_send

  476,920 ( 4.76%)  *  /src/perftest/engine/run_bw.c:poll_send [{EXE}]

   20,000 ( 0.20%)  < ???:0x0000000000002ca0 (100x) [{RXE}]
   20,000 ( 0.20%)  *  ???:0x0000000000009990 [{VERBS}]

   12,000 ( 0.12%)  *  /src/plugin/hooks/hooks.c:pt_hooks_run_start [{EXE}]

        1 ( 0.00%)  *  ???:0x0000000004d1a2b0 [???]

--------------------------------------------------------------------------------
-- Auto-annotated source: /src/perftest/engine/run_bw.c
--------------------------------------------------------------------------------
Ir

-- line 15 ----------------------------------------
9,999,999 (99.0%)  {{
"""

# The flat listing (no --tree) of a stripped build: no callers, no stars.
FLAT = """Profiled target:  /usr/bin/ib_send_bw -d rxe0 -n 4000 (PID 9, part 1)
--------------------------------------------------------------------------------
Ir
--------------------------------------------------------------------------------
5,000,000 (100.0%)  PROGRAM TOTALS

--------------------------------------------------------------------------------
Ir                  file:function
--------------------------------------------------------------------------------
3,000,000 (60.00%)  ???:0x000000000001a2b0 [/usr/bin/ib_send_bw]
1,000,000 (20.00%)  ???:0x0000000000002ca0 [/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so]
  500,000 (10.00%)  ???:memcpy [/usr/lib/x86_64-linux-gnu/libc.so.6]
"""


def own():
    return cg.own_objects(EXE, ["/src/build"])


@case
def tree_functions():
    """--tree=caller: self costs, objects, callers and call counts; annotated source not read"""
    p = cg.parse(TREE)
    eq(p.total, 10017505)
    eq(p.target, EXE)
    eq(len(p.funcs), 13)
    pw = p.funcs[0]
    eq((pw.file, pw.fn, pw.obj, pw.ir), ("/src/perftest/engine/run_bw.c", "post_window", EXE,
                                         1474652))
    eq(pw.callers, [("pt_run_bw_send", EXE, 19805)])
    eq(pw.calls, 19805)
    poll = p.funcs[2]
    eq((poll.file, poll.fn, poll.obj), ("???", "0x0000000000002ca0", RXE))
    # the caller line had no object: poll_send's object from its own entry
    eq(poll.callers, [("poll_send", EXE, 19805)])
    eq([f.fn for f in p.funcs if f.fn == "{"], [], "annotated source taken for functions")


@case
def inlined_take_object():
    """code inlined from a header (no [object]) takes the object its function has"""
    p = cg.parse(TREE)
    inl = [f for f in p.funcs if f.file == "/src/util/clock.h"][0]
    eq((inl.fn, inl.obj), ("pt_run_bw_send", EXE))
    inl = [f for f in p.funcs if f.file == "/usr/include/infiniband/verbs.h"][0]
    eq(inl.obj, EXE)


@case
def classes_add_up():
    """by class: own, provider (librxe, libibverbs), libc, other; they add up to the total"""
    p = cg.parse(TREE)
    c = cg.by_class(p, own())
    eq(c[cg.OWN], 1474652 + 831752 + 440713 + 198071 + 138635 + 476920 + 12000)
    eq(c[cg.PROVIDER], 674250 + 268000 + 20000)
    eq(c[cg.LIBC], 238730)
    eq(sum(c.values()), p.total)
    eq(c[cg.OTHER], p.total - c[cg.OWN] - c[cg.PROVIDER] - c[cg.LIBC])


@case
def classify_objects():
    """classify: the executable and the build tree are own; ld.so, ??? and libnl are other"""
    o = own()
    eq(cg.classify(EXE, o), cg.OWN)
    eq(cg.classify("/src/build/plugin/.libs/libwrtrace.so", o), cg.OWN)
    eq(cg.classify(RXE, o), cg.PROVIDER)
    eq(cg.classify("/usr/lib/x86_64-linux-gnu/libibverbs/libmlx5-rdmav34.so", o), cg.PROVIDER)
    eq(cg.classify("/usr/lib/x86_64-linux-gnu/libibverbs.so.1", o), cg.PROVIDER)
    eq(cg.classify(LIBC, o), cg.LIBC)
    eq(cg.classify(LD, o), cg.OTHER)
    eq(cg.classify("/usr/lib/x86_64-linux-gnu/libnl-3.so.200", o), cg.OTHER)
    eq(cg.classify("/usr/lib/x86_64-linux-gnu/libcrypt.so.1", o), cg.OTHER)
    eq(cg.classify("???", o), cg.OTHER)
    eq(cg.classify(None, o), cg.OTHER)
    # another build's executable is not ours
    eq(cg.classify("/usr/bin/ib_send_bw", o), cg.OTHER)


@case
def loop_turns():
    """the provider function our code calls most is the poll (turns); libibverbs' callee does not count"""
    p = cg.parse(TREE)
    f = cg.busiest_callee(p, own())
    eq((f.fn, f.obj), ("0x0000000000002ca0", RXE))
    eq(cg.calls_from_own(p, f, own()), 19805)
    verbs = [g for g in p.funcs if g.obj == VERBS][0]
    eq(cg.calls_from_own(p, verbs, own()), 0)


@case
def flat_stripped():
    """the flat listing of a stripped build: objects by address, no callers"""
    p = cg.parse(FLAT)
    o = cg.own_objects(p.target, ["/usr/bin"])
    eq(p.target, "/usr/bin/ib_send_bw")
    c = cg.by_class(p, o)
    eq((c[cg.OWN], c[cg.PROVIDER], c[cg.LIBC], c[cg.OTHER]), (3000000, 1000000, 500000, 500000))
    eq(cg.busiest_callee(p, o), None)
    eq(cg.cost_where(p, lambda f: "/perftest/report/" in f.file), 0)


@case
def report_by_file():
    """the report phase: own code in perftest/report/ (ours has symbols)"""
    p = cg.parse(TREE)
    eq(cg.cost_where(p, lambda f: "/perftest/report/" in f.file), 440713)


@case
def not_annotate_output():
    """text that is not callgrind_annotate's is an error, not zeros"""
    raises(cg.ParseError, cg.parse, "", match="PROGRAM TOTALS")
    raises(cg.ParseError, cg.parse, "valgrind: no such file\n")
    raises(cg.ParseError, cg.parse, "5,000 (100.0%)  PROGRAM TOTALS\n", match="file:function")


@case
def difference_per_wr():
    """per WR = (Ir(n2) - Ir(n1)) / (n2 - n1); equal lengths refused"""
    eq(cg.per_wr(10_000_000, 14_000_000, 4000, 8000), 1000.0)
    raises(ValueError, cg.per_wr, 1, 2, 4000, 4000)
    eq(instructions.parse_iters("8000,4000"), (4000, 8000))
    raises(instructions.SetupError, instructions.parse_iters, "4000,4000")
    raises(instructions.SetupError, instructions.parse_iters, "4000")


def meas(n, own_ir, prov, report, turns, plugin=0, plugin_loop=0):
    classes = {cg.OWN: own_ir, cg.PROVIDER: prov, cg.LIBC: 100, cg.OTHER: 1000}
    return instructions.Measured(n, sum(classes.values()), classes, report, plugin, plugin_loop,
                                 turns, "poll", 1.0)


@case
def skip_unknown_build():
    """--skip NAME: a build that is not in the comparison is refused before any run (exit 2)"""
    eq(instructions.main(["--skip", "7.0", "--reread", "/nonexistent"]), 2)
    eq(instructions.main(["--skip", "ours --trace", "--reread", "/nonexistent"]), 2)  # no --trace


@case
def run_end_functions():
    """called_only_from: the roots and what only they call, not what the loop calls too"""
    f = cg.Func
    p = cg.Profile(100, EXE, [
        f("/src/plugin/recorder/wrtrace.c", "wrt_run_end", EXE, 1, 1, [("plug_run_end", EXE, 1)]),
        f("/src/plugin/recorder/wrtrace_defer.c", "wrt_lazy_rows", EXE, 10, 2,
          [("wrt_run_end", EXE, 1), ("wrt_complete", EXE, 1)]),
        f("/src/plugin/recorder/wrtrace_write.c", "wrt_write_run", EXE, 10, 1,
          [("wrt_run_end", EXE, 1)]),
        f("/src/plugin/recorder/wrtrace_write.c", "wrt_write_stream", EXE, 10, 1,
          [("wrt_write_run", EXE, 1)]),
        f("/src/plugin/recorder/wrtrace.c", "wrt_post_one", EXE, 10, 9,
          [("post_window", EXE, 9)]),
        f("/src/plugin/hooks/hooks.h", "post_window", EXE, 10, 0, []),
    ])
    eq(cg.called_only_from(p, ["wrt_run_end"]),
       {"wrt_run_end", "wrt_write_run", "wrt_write_stream"})


@case
def loop_by_call_graph():
    """loop_code: the per-WR posting and polling functions, what drives them and what
    runs only under them; not a report after the loop (a stripped build's sort and its
    comparison function, its BW peak), nor set-up, nor main that calls the loop once"""
    f = cg.Func
    s06 = "/usr/bin/ib_read_lat"
    msort = "msort_with_tmp.part.0"
    p = cg.Profile(100, s06, [
        f("???", "0x59f0", s06, 400, 0, []),                               # main
        f("???", "0x21f00", s06, 2_000_000, 1, [("0x59f0", s06, 1)]),      # the loop
        f("???", "0x2ca0", RXE, 5_000_000, 160_000, [("0x21f00", s06, 160_000)]),   # poll
        f("???", "0x3cc0", RXE, 1_400_000, 8000, [("0x21f00", s06, 8000)]),         # post
        f("???", "0x1b410", s06, 70_000, 3, [("0x59f0", s06, 3)]),         # set-up
        f("???", "0x4000", RXE, 900, 5, [("0x1b410", s06, 5)]),            # create QP
        f("???", "0x15c70", s06, 280_000, 1, [("0x59f0", s06, 1)]),       # the report
        f("./stdlib/msort.c", "qsort", LIBC, 96, 1, [("0x15c70", s06, 1)]),
        f("./stdlib/msort.c", msort, LIBC, 1_800_000, 8000, [("qsort", LIBC, 1)]),
        f("???", "0xb740", s06, 690_000, 92_000, [(msort, LIBC, 92_000)]),   # comparison
        f("???", "0x281d0", s06, 880_000, 2, [("0x59f0", s06, 2)]),        # clock guess
    ])
    own = cg.own_objects(s06, [])
    eq(cg.loop_code(p, own, 8000), {("0x21f00", s06)})
    # ours: post_window drives pt_post_send (a WR each), pt_run_bw_send drives both,
    # the peak tracker runs only under them; the flow that calls the loop once is out
    q = cg.Profile(100, EXE, [
        f("/src/perftest/tools/send_bw.c", "pt_send_bw_flow", EXE, 500, 1, []),
        f("/src/perftest/engine/run_bw.c", "pt_run_bw_send", EXE, 800, 1,
          [("pt_send_bw_flow", EXE, 1)]),
        f("/src/perftest/engine/run_bw.c", "post_window", EXE, 300, 80,
          [("pt_run_bw_send", EXE, 80)]),
        f("/src/perftest/engine/post.c", "pt_post_send", EXE, 700, 8000,
          [("post_window", EXE, 8000)]),
        f("???", "0x4a20", RXE, 900, 8000, [("pt_post_send", EXE, 8000)]),
        f("/src/perftest/engine/run_bw.c", "poll_send", EXE, 20, 142,
          [("pt_run_bw_send", EXE, 142)]),
        f("???", "0x2ca0", RXE, 900, 150, [("poll_send", EXE, 150)]),
        f("/src/perftest/report/bw_peak.c", "pt_bw_peak_complete_slow", EXE, 650, 80,
          [("poll_send", EXE, 80)]),
        f("/src/perftest/report/results.c", "pt_report_bw", EXE, 90, 1,
          [("pt_send_bw_flow", EXE, 1)]),
    ])
    eq(cg.loop_code(q, cg.own_objects(EXE, []), 8000),
       {(fn, EXE) for fn in ("pt_run_bw_send", "post_window", "pt_post_send", "poll_send",
                             "pt_bw_peak_complete_slow")})
    m = instructions.measure(q, 8000, [], 0)
    eq((m.loop_cg, m.loop_cg_report), (800 + 300 + 700 + 20 + 650, 650))
    eq(m.loop_instrs, None)      # a file without per-instruction counts
    # per instruction (cgdump): the loop's own, report code out by file, the
    # tracker inlined into the post loop too; set-up and the provider out
    ins = [cgdump.Instr("post_window", EXE, 0x100, 8000, "/src/perftest/engine/run_bw.c"),
           cgdump.Instr("post_window", EXE, 0x104, 8000, "/src/perftest/report/bw_peak.h"),
           cgdump.Instr("pt_bw_peak_complete_slow", EXE, 0x200, 80,
                        "/src/perftest/report/bw_peak.c"),
           cgdump.Instr("pt_send_bw_flow", EXE, 0x300, 1, "/src/perftest/tools/send_bw.c"),
           cgdump.Instr("0x4a20", RXE, 0x4a20, 8000, "???")]
    m = instructions.measure(q, 8000, [], 0, ins)
    eq([i.addr for i in m.loop_instrs or []], [0x100])


@case
def loop_row():
    """the loop row: own code less the report phase and the plugin's run start and end"""
    from pathlib import Path
    ours = instructions.Outcome(instructions.Build("ours", Path("/b"), ["/b"]))
    ours.runs = {4000: meas(4000, 1_000_000, 0, 40_000, 1, 300_000, 100_000),
                 8000: meas(8000, 1_600_000, 0, 80_000, 1, 700_000, 140_000)}
    rows = {r.strip().split("  ")[0]: r.split() for r in
            instructions.table([ours], 4000, 8000).splitlines()[1:]}
    eq(rows["plugin/ (hooks, recorder)"][-1], "100.0")
    eq(rows["of it in the loop"][-1], "10.0")
    # (600k - 40k - (400k - 40k)) / 4000
    eq(rows["loop (own - report - plugin/ outside)"][-1], "50.0")


@case
def table_rows():
    """the table: per-WR rows by class, ratio ours/other, n/a where a build has no symbols"""
    from pathlib import Path
    ours = instructions.Outcome(instructions.Build("ours", Path("/b"), ["/b"]))
    up = instructions.Outcome(instructions.Build("6.06", Path("/usr/bin"), ["/usr/bin"]))
    ours.runs = {4000: meas(4000, 1_000_000, 500_000, 40_000, 8000),
                 8000: meas(8000, 1_400_000, 900_000, 80_000, 16000)}
    up.runs = {4000: meas(4000, 2_000_000, 500_000, 0, 8000),
               8000: meas(8000, 2_800_000, 900_000, 0, 16000)}
    rows = {r.strip().split("  ")[0]: r.split() for r in
            instructions.table([ours, up], 4000, 8000).splitlines()[1:]}
    own = rows["own code (executable + own libs)"]
    eq(own[-3:], ["100.0", "200.0", "0.50"])
    eq(rows["report phase (perftest/report)"][-3:], ["10.0", "n/a", "-"])
    eq(rows["provider (librxe, libibverbs)"][-3:], ["100.0", "100.0", "1.00"])
    eq(rows["busiest provider fn, calls"][-3:], ["2.0", "2.0", "1.00"])
    up.failures = ["-n 8000: boom"]
    up.runs.pop(8000)
    text = instructions.table([ours, up], 4000, 8000)
    eq("failed" in text, True, text)


@case
def repeat_keeps_least():
    """--repeat K: the run with the fewest instructions is kept, as TAG.cg; all totals noted"""
    import argparse
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as d:
        share = Path(d)
        ours = instructions.Outcome(instructions.Build("ours", Path("/b"), ["/b"]))
        totals = iter([3_000_000, 2_000_000, 2_500_000])

        def fake_run(args, lab, b, n, port, work, share_, rep=""):
            m = meas(n, next(totals), 0, 0, 1)
            (share_ / f"{instructions.tag_of(b, n)}{rep}.cg").write_text(str(m.total))
            return m
        real = instructions.run_one
        instructions.run_one = fake_run
        try:
            args = argparse.Namespace(repeat=3)
            m = instructions.best_of(args, None, ours, 4000, 1, share, share)
        finally:
            instructions.run_one = real
        eq(m.total, 2_000_000 + 1100)
        eq((share / "ours-n4000.cg").read_text(), str(2_000_000 + 1100))
        eq(ours.totals[4000], [3_001_100, 2_001_100, 2_501_100])
        ours.runs[4000] = m
        eq("kept the least of 3 runs" in instructions.notes([ours], 4000, 8000), True)
    eq(instructions.main(["--repeat", "0", "--reread", "/nonexistent"]), 2)


sys.exit(run())

#!/usr/bin/python3 -B
# SPDX-License-Identifier: BSD-2-Clause
"""bench/interop's cell verdicts (benchlib/verdict.py, pure) and the parts of
benchlib/interop.py that need no process: modes, the plan, --expect/--flaky
judging, the table and the summary line."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchtap import case, eq, raises, run  # noqa: E402
from benchlib import interop, verdict  # noqa: E402
from benchlib.verdict import End, Expect, classify  # noqa: E402

# Output as the tools print it (bytes, iterations, then figures).
BW_HEAD = (" #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   "
           "MsgRate[Mpps]\n")


def bw(*rows):
    return BW_HEAD + "".join(f" {s:<10} {n:<10}     5.12            5.10          0.000081\n"
                             for s, n in rows)


def lat(*rows):
    return (" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]"
            "    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n" +
            "".join(f" {s:<7} {n:<10} 18.51          91.06        21.52     "
                    f"          23.10       4.72            40.38            91.06   \n"
                    for s, n in rows))


def ok(text):
    return End(0, False, text)


SEND = Expect("ib_send_bw", "RC", 100)
ALL = [1 << i for i in range(1, 24)]


@case
def rows_parsed():
    """result rows: BW and latency tables, headers and other lines ignored, marker stripped"""
    text = (" Send BW Test\n Number of qps   : 1\n" + bw((65536, 100)) +
            "---------------------\n" + verdict.EXIT_MARK + "0\n")
    eq(verdict.result_rows(text), [(65536, 100)])
    eq(verdict.result_rows(lat((2, 1000), (4, 1000))), [(2, 1000), (4, 1000)])
    eq(verdict.result_rows(" local address: LID 0000 QPN 0x0011 PSN 0x1\n 1 2 3\n"), [])
    eq(verdict.result_rows(" 2       50          -nan           inf        0.00     -nan\n"), [(2, 50)])
    eq(verdict.result_rows(" 2 50 1.0 2.0 text\n"), [])


@case
def pass_cells():
    """both ends exit 0 with the expected rows: pass (send_bw, write_bw's last row, read_lat's none)"""
    eq(classify(ok(bw((65536, 100))), ok(bw((65536, 100))), SEND).reason, "pass")
    rows = [(s, 5) for s in ALL]
    eq(classify(ok(bw(rows[-1])), ok(bw(*rows)),
                Expect("ib_write_bw", "RC", 5, all_sizes=True, server_rows="last")).reason, "pass")
    eq(classify(ok("waiting\n"), ok(lat((2, 50))),
                Expect("ib_read_lat", "RC", 50, server_rows="none")).reason, "pass")
    # -q 4: BW tools count the iterations of all QPs, latency tools run one QP
    eq(classify(ok(bw((65536, 400))), ok(bw((65536, 400))),
                Expect("ib_send_bw", "RC", 100, qps=4)).reason, "pass")
    # no -n given: the count is not checked, only that both sides agree
    eq(classify(ok(bw((65536, 5000))), ok(bw((65536, 5000))), Expect("ib_send_bw")).reason, "pass")


@case
def crash_signals():
    """a signal we did not send: SIGABRT from a local child (-6), a shell (134) or the marker line"""
    srv = End(134, False, "*** buffer overflow detected ***: terminated\n")
    cli = End(1, False, " Failed to exchange data between server and clients\n")
    v = classify(srv, cli, SEND)
    eq(v.reason, "crash signal SIGABRT")
    eq(v.detail, "server: exit 134: *** buffer overflow detected ***: terminated")
    eq(classify(End(0, False, bw((65536, 100))), End(-11, False, ""), SEND).reason,
       "crash signal SIGSEGV")
    # ssh may say 255 for a remote signal death; the wrapper's marker line is the truth
    eq(classify(End(255, False, verdict.EXIT_MARK + "134\n"), cli, SEND).reason,
       "crash signal SIGABRT")
    # a crash report with a plain exit code is still a crash
    eq(classify(End(1, False, "==12==ERROR: AddressSanitizer: heap-buffer-overflow\n"), cli,
                SEND).reason, "crash")


@case
def our_kill_is_a_timeout():
    """an end we stopped (SIGTERM from us, 124 from a far-side timeout) is a timeout, not a crash"""
    v = classify(End(-15, True, "waiting\n"), End(124, True, ""), SEND)
    eq(v.reason, "timeout")
    assert "still running at the cell's timeout" in v.detail, v.detail
    v = classify(End(-15, True, ""), End(None, False, ""), SEND,
                 harness="server did not listen on TCP port 18515 within 60 s")
    eq(v.reason, "timeout")
    assert v.detail.startswith("server did not listen"), v.detail


@case
def refused_version():
    """version refusals (upstream's words and ours) beat the peer's failed exchange"""
    cli = End(1, False, " Failed to exchange data between server and clients\n")
    up = End(1, False, "Current implementation is not compatible with versions older than 5.70\n")
    v = classify(up, cli, SEND)
    eq((v.reason, v.detail), ("refused version", "server: Current implementation is not "
                                                  "compatible with versions older than 5.70"))
    ours = End(1, False, " peer perftest version '5.60' is older than 5.70, the oldest compatible "
                         "with this build (we are 6.06)\n")
    eq(classify(End(1, False, ""), ours, SEND).reason, "refused version")
    neg = End(1, False, " peer perftest version '6.28' will negotiate parameters (6.28+ protocol), "
                        "which is not supported by this build (we are 6.06)\n")
    eq(classify(neg, cli, SEND).reason, "refused version")


@case
def refused_parameters():
    """6.28+ negotiation: differing terms are a refusal of their own, before the peer's failed exchange"""
    srv = End(1, False, " size mismatch: local=65536, remote=4096\n Failed to negotiate parameters "
                        "(peer perftest 6.28)\n")
    v = classify(srv, End(1, False, " Failed to exchange data between server and clients\n"), SEND)
    eq((v.reason, v.detail), ("refused parameters", "server: size mismatch: local=65536, remote=4096"))


@case
def completion_and_desync():
    """completion errors (with their status) before the exchange failures they cause; desync; connect"""
    srv = End(1, False, " Completion with error at server\n Failed status 9: remote invalid "
                        "request (wr_id 0x0, vendor_err 0x0)\n")
    cli = End(1, False, " Failed to exchange the BW report: peer closed the connection\n")
    v = classify(srv, cli, SEND)
    eq((v.reason, v.notes), ("completion error", ["status 9"]))
    for line in (" Failed to exchange data between server and clients",
                 "Couldn't parse line <0000:000011:0000>",
                 " peer sent a malformed 108-byte key message 'x' (GID setting -x differs)"):
        eq(classify(End(1, False, line), End(1, False, ""), SEND).reason,
           "desync/exchange failed", line)
    eq(classify(End(0, False, ""), End(1, False, "Couldn't connect to 10.0.0.1:18515\n"),
                SEND).reason, "connect failed")
    v = classify(End(1, False, " Unable to find the Infiniband/RoCE device\n"), End(None), SEND)
    eq((v.reason, v.detail), ("exit 1", "server: Unable to find the Infiniband/RoCE device"))
    # a client that failed by itself, its server stopped by us afterwards: the client's failure
    v = classify(End(-15, True, "waiting\n"), End(1, False, " Couldn't create QP\n"), SEND)
    eq((v.reason, v.detail), ("exit 1", "client: Couldn't create QP"))


@case
def refused_option():
    """an option the build does not know (getopt, ours) is its own reason"""
    eq(classify(End(1, False, "ib_send_bw: unrecognized option '--use_old_post_send'\n"),
                End(None), SEND).reason, "refused option")
    eq(classify(End(0, False, ""), End(1, False, " option --foo is not supported by this build\n"),
                SEND).reason, "refused option")


@case
def rows_disagree():
    """both exit 0 but the rows are wrong: iterations, sizes, server vs client, missing rows"""
    def why(s, c, e=SEND):
        v = classify(ok(s), ok(c), e)
        eq(v.reason, "rows disagree")
        return v.detail
    assert "client printed no result row" in why(bw((65536, 100)), "done\n")
    assert "has 99 iterations, expected 100" in why(bw((65536, 100)), bw((65536, 99)))
    assert "server row 65536 B x 90" in why(bw((65536, 90)), bw((65536, 100)))
    assert "server printed 0 rows" in why("", bw((65536, 100)))
    assert "expected 1" in why(bw((2, 100), (4, 100)), bw((2, 100), (4, 100)))
    e = Expect("ib_send_lat", "RC", 5, all_sizes=True)
    short = [(s, 5) for s in ALL[:12]]
    assert "end at 4096, expected 8388608" in why(lat(*short), lat(*short), e)
    gap = [(s, 5) for s in ALL if s != 64]
    assert "are not 2, 4, 8" in why(lat(*gap), lat(*gap), e)
    assert "client row is 1024 B, expected 4096" in why(
        bw((1024, 100)), bw((1024, 100)), Expect("ib_send_bw", "UD", 100, size=4096))
    assert "expected 400" in why(bw((65536, 100)), bw((65536, 100)),
                                 Expect("ib_write_bw", "RC", 100, qps=4, server_rows="last"))


@case
def ud_loss():
    """a UD receiver that reports its losses passes with a note; an RC shortfall does not"""
    e = Expect("ib_send_bw", "UD", 300)
    srv = ok(bw((1024, 297)) + " 3 of 300 messages lost\n")
    v = classify(srv, ok(bw((1024, 300))), e)
    eq((v.reason, v.notes), ("pass", ["receiver lost 3 of 300 (UD)"]))
    eq(classify(ok(bw((1024, 297))), ok(bw((1024, 300))), e).reason, "rows disagree")
    # UD -a stops at the MTU
    rows = [(s, 20) for s in ALL[:10]]
    eq(classify(ok(bw(*rows)), ok(bw(*rows)),
                Expect("ib_send_bw", "UD", 20, all_sizes=True)).reason, "pass")


@case
def exit_marker():
    """the wrapper's last line gives the exit status; without it the launcher's code counts"""
    eq(verdict.exit_status(255, "x\n" + verdict.EXIT_MARK + "134\n"), 134)
    eq(verdict.exit_status(1, "no marker\n"), 1)
    eq(verdict.exit_status(None, ""), None)
    eq((verdict.signal_of(134), verdict.signal_of(124), verdict.signal_of(-9),
        verdict.signal_of(255), verdict.signal_of(1)), (6, None, 9, None, None))
    eq(verdict.last_line("a\nb\n" + verdict.EXIT_MARK + "1\n"), "b")


@case
def modes():
    """mode names: bases, modifiers, canonical order; bad ones refused with the grammar"""
    m = interop.parse_mode("ud+old+q4")
    eq((m.name, m.conn, m.qps, m.old), ("ud+q4+old", "UD", 4, True))
    eq(interop.parse_mode("mcast").args("225.1.1.20"), ["-c", "UD", "-g", "-M", "225.1.1.20"])
    eq(interop.parse_mode("rc+a+R").args("x"), ["-a", "-R"])
    for bad, msg in (("xrc", "unknown base"), ("rc+q1", "qN takes 2..64"), ("rc+b", "unknown modifier"),
                     ("rc+a+a", "given twice"), ("rc+z+R", "do not combine")):
        raises(interop.InteropError, interop.parse_mode, bad, match=msg)
    eq(interop.mode_refusal("ib_write_bw", interop.parse_mode("mcast")),
       "ib_write_bw does not run UD (send tools only)")
    eq(interop.mode_refusal("ib_send_lat", interop.parse_mode("rc+q4")),
       "ib_send_lat runs one QP (-q is for BW tools)")
    eq(interop.mode_refusal("ib_send_lat", interop.parse_mode("mcast")), None)
    eq(interop.mode_refusal("ib_write_bw", interop.parse_mode("uc+R")), "rdma_cm has no UC")


@case
def plan_cells():
    """the plan: tools x modes x ordered pairs, refused combinations listed, --only filters"""
    modes = [interop.parse_mode(m) for m in ("rc", "ud")]
    pairs = interop.parse_pairs(None, ["ours", "up"], False)
    eq(pairs, [("ours", "ours"), ("ours", "up"), ("up", "ours"), ("up", "up")])
    eq(interop.parse_pairs(None, ["ours", "up"], True), [("ours", "up"), ("up", "ours")])
    cells, skipped = interop.plan(["ib_send_bw", "ib_read_bw"], modes, pairs, [])
    eq(len(cells), 12)
    eq(skipped, [("ib_read_bw", "ud", "ib_read_bw does not run UD (send tools only)")])
    eq(cells[5].id, "ib_send_bw/ud/ours:up")
    cells, _ = interop.plan(["ib_send_bw", "ib_read_bw"], modes, pairs, ["*/rc"])
    eq([c.id for c in cells][::4], ["ib_send_bw/rc/ours:ours", "ib_read_bw/rc/ours:ours"])
    cells, _ = interop.plan(["ib_send_bw", "ib_read_bw"], modes, pairs,
                            ["ib_send_bw/ud/up:*", "*/rc/ours:up"])
    eq([c.id for c in cells], ["ib_send_bw/rc/ours:up", "ib_send_bw/ud/up:ours",
                               "ib_send_bw/ud/up:up", "ib_read_bw/rc/ours:up"])
    raises(interop.InteropError, interop.plan, ["ib_send_bw"], modes, pairs, ["*/rc/ours:vendor"],
           match="--only */rc/ours:vendor: matches no cell")
    raises(interop.InteropError, interop.plan, ["ib_read_bw"], modes[1:], pairs, [],
           match="no cells to run: ib_read_bw ud")
    raises(interop.InteropError, interop.plan, ["ib_send_bw"], modes, pairs, ["send_bw/*"],
           match="--only send_bw/*: matches no")
    raises(interop.InteropError, interop.parse_pairs, "ours:vendor", ["ours", "up"], False,
           match="not SERVER:CLIENT")
    raises(interop.InteropError, interop.parse_bins, ["ours"], match="NAME=DIR")
    raises(interop.InteropError, interop.parse_bins, ["a=/x", "a=/y"], match="given twice")
    raises(interop.InteropError, interop.parse_tools, "send_bw,ib_foo_bw", match="unknown tool")
    eq(interop.parse_tools("send_bw, ib_read_lat"), ["ib_send_bw", "ib_read_lat"])


@case
def judging():
    """--expect and --flaky: xfail, xpass, a different failure stays a failure, flakes named"""
    crash = verdict.Verdict("crash signal SIGABRT", "server: exit 134")
    good = verdict.Verdict("pass")
    cqe = verdict.Verdict("completion error", "server: Failed status 9", ["status 9"])
    exp = [("ib_send_bw/mcast/up:*", "crash signal SIGABRT")]
    fl = [("ib_*/rc+q4/*", "known rxe flake")]
    eq(interop.judge("ib_send_bw/mcast/up:ours", crash, exp, fl), ("xfail", "expected"))
    eq(interop.judge("ib_send_bw/mcast/up:ours", good, exp, fl),
       ("xpass", "expected crash signal SIGABRT"))
    eq(interop.judge("ib_send_bw/mcast/up:ours", cqe, exp, fl),
       ("fail", "expected crash signal SIGABRT"))
    eq(interop.judge("ib_send_bw/mcast/ours:up", crash, exp, fl), ("fail", ""))
    eq(interop.judge("ib_write_bw/rc+q4/up:up", cqe, exp, fl), ("flake", "known rxe flake"))
    eq(interop.judge("ib_write_bw/rc+q4/up:up", good, exp, fl), ("pass", ""))
    eq(interop.judge("ib_write_bw/rc/up:up", cqe, exp, fl), ("fail", ""))


@case
def table_and_summary():
    """the table: tool x mode rows, pair columns, short verdicts; the summary counts every failure"""
    def rec(tool, mode, s, c, status, reason="pass", notes=(), note=""):
        return {"tool": tool, "mode": mode, "server": s, "client": c, "status": status,
                "reason": reason, "notes": list(notes), "note": note}
    cells = [rec("ib_send_bw", "rc", "ours", "up", "pass"),
             rec("ib_send_bw", "rc", "up", "ours", "pass"),
             rec("ib_send_bw", "mcast", "ours", "up", "pass"),
             rec("ib_send_bw", "mcast", "up", "ours", "xfail", "crash signal SIGABRT", note="expected"),
             rec("ib_send_bw", "rc+q4", "ours", "up", "flake", "completion error", ["status 9"],
                 "known rxe flake"),
             rec("ib_write_bw", "rc", "up", "ours", "fail", "desync/exchange failed")]
    t = [re.split(r"\s{2,}", l) for l in
         interop.table(cells, [("ours", "up"), ("up", "ours")]).splitlines()]
    eq(t[0], ["tool", "mode", "ours:up", "up:ours"])
    eq(t[1], ["ib_send_bw", "rc", "pass", "pass"])
    eq(t[2], ["ib_send_bw", "mcast", "pass", "FAIL: crash signal SIGABRT (expected)"])
    eq(t[3], ["ib_send_bw", "rc+q4", "FAIL: completion error (status 9) (known rxe flake)", "-"])
    eq(t[4], ["ib_write_bw", "rc", "-", "FAIL: desync/exchange failed"])
    line, n = interop.summary(cells)
    eq(line, "6 cells: 3 pass, 3 fail (1 expected, 1 known flake)")
    eq((n["fail"], n["xfail"], n["flake"]), (1, 1, 1))
    eq(interop.summary(cells[:3], 5)[0], "5 cells: 3 pass, 0 fail; 2 not run")


if __name__ == "__main__":
    sys.exit(run())

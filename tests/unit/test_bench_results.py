#!/usr/bin/python3 -B
# SPDX-License-Identifier: BSD-2-Clause
"""benchlib/results.py: result rows, the 6.06 calibration allowance, trace
files in CSV and JSON Lines. (The typing of the library: test_bench_types.sh.)"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchtap import case, eq, raises, run  # noqa: E402
from benchlib import labctl, results  # noqa: E402

BW = (" #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]\n"
      " 65536      300              44.75              44.49              0.000712\n"
      " 4096       5                -nan               0.00               0.000000\n")
LAT = (" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]\n"
       " 2       30          2.50           6.39         2.81                2.95\n")
CALIB = ("Conflicting CPU frequency values detected: 0.000000 != 2000.000000.\n"
         "Correlation coefficient r^2: 0.53 < 0.9\n"
         " 65536      300              0.00               0.00               0.000000\n")


@case
def rows_bw():
    """BW rows: size, iterations, figures; nan reads as NaN; headers are no rows"""
    rs = results.rows(BW)
    eq([(r.size, r.iters) for r in rs], [(65536, 300), (4096, 5)])
    eq(rs[0].bw_avg, 44.49)
    eq(rs[0].msg_rate, 0.000712)
    eq(rs[1].bw_peak != rs[1].bw_peak, True, "NaN")
    eq(results.positive(rs[1].bw_avg), False)


@case
def rows_lat():
    """latency rows: t_min, t_max, t_typical"""
    r = results.rows(LAT)[0]
    eq((r.size, r.iters, r.t_min, r.t_max, r.t_typical), (2, 30, 2.5, 6.39, 2.81))
    eq(results.shape("no rows\n 1 2 3\n"), [])


@case
def expect_row():
    """expect_row: the row, BW > 0; 6.06's failed calibration is noted, not failed"""
    eq(results.expect_row(BW, 65536, 300), (None, None))
    why, _ = results.expect_row(BW, 65536, 100)
    eq(why is not None and "no row with size 65536, 100" in why, True, why)
    eq(results.expect_row("", 1, 1), ("no result row", None))
    why, note = results.expect_row(CALIB, 65536, 300)
    eq(why, None)
    eq("r^2: 0.53 < 0.9" in (note or ""), True, note)
    why, _ = results.expect_row(CALIB.replace("0.53 < 0.9", "0.95"), 65536, 300)
    eq(why is not None, True)
    # the message glued to the row's end (6.06 under load): still its row
    glued = (" 4096       400              0.00               0.00   \t\t   0.000000"
             "Correlation coefficient r^2: 0.686447 < 0.9\n")
    eq(results.shape(glued), [(4096, 400)])
    why, note = results.expect_row(glued, 4096, 400)
    eq(why, None)
    eq("0.686447 < 0.9" in (note or ""), True, note)


@case
def row_ok_or_calibration():
    """row_ok, or 6.06's zero row after its failed calibration; zeros alone fail"""
    eq(results.row_ok_or_calibration(BW, False), True)
    eq(results.row_ok(CALIB, False), False)
    eq(results.row_ok_or_calibration(CALIB, False), True)
    eq(results.row_ok_or_calibration(CALIB.replace("0.53 < 0.9", "0.95"), False), False)
    eq(results.row_ok_or_calibration("Correlation coefficient r^2: 0.5 < 0.9\n", False), False)


CSV = ("# wrtrace 1\nrun,qp,seq,wr_id,opcode,bytes,signaled\n"
       "# run=0 tool=ib_send_bw cq_mod=16 msg_size=64\n"
       "0,0,0,0x0,SEND,64,0\n0,0,1,0x1,SEND,64,1\n"
       "# run=1 tool=ib_send_bw cq_mod=1 msg_size=8\n0,0,0,0x0,SEND,8,1\n")
JSONL = ('{"type":"wrtrace","version":1}\n'
         '{"type":"run","run":0,"tool":"ib_send_bw","cq_mod":16}\n'
         '{"type":"wr","run":0,"qp":0,"seq":0,"opcode":"SEND","signaled":true,"t_comp_ns":null}\n')


@case
def trace_files():
    """read_trace: CSV runs with their metadata; JSON Lines alike (null -> "")"""
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "t.csv")
        with open(p, "w") as f:
            f.write(CSV)
        runs = results.read_trace(p)
        eq(len(runs), 2)
        eq(runs[0].meta["cq_mod"], "16")
        eq([r["seq"] for r in runs[0].rows], ["0", "1"])
        eq(runs[1].rows[0]["bytes"], "8")
        p = os.path.join(d, "t.jsonl")
        with open(p, "w") as f:
            f.write(JSONL)
        runs = results.read_trace(p)
        eq(runs[0].meta["cq_mod"], "16")
        eq(runs[0].rows[0]["signaled"], "1")
        eq(runs[0].rows[0]["t_comp_ns"], "")
        with open(p, "w") as f:
            f.write('{"type":"wr","seq":0}\n')
        raises(ValueError, results.read_trace, p)


@case
def lab_qp_timeout():
    """the lab's RC ACK timeout: -u added after the perftest tool, never twice"""
    w = labctl.with_qp_timeout
    eq(w(["/b/ib_send_bw", "-d", "rxe0"], "20"), ["/b/ib_send_bw", "-u", "20", "-d", "rxe0"])
    eq(w(["valgrind", "-q", "/usr/bin/ib_read_lat", "-x", "1"], "20"),
       ["valgrind", "-q", "/usr/bin/ib_read_lat", "-u", "20", "-x", "1"])
    eq(w(["ib_write_bw", "-u", "14"], "20"), ["ib_write_bw", "-u", "14"])
    eq(w(["ib_write_bw", "-u14"], "20"), ["ib_write_bw", "-u14"])
    eq(w(["ib_write_bw", "--qp-timeout=9"], "20"), ["ib_write_bw", "--qp-timeout=9"])
    eq(w(["sh", "-c", "ib_send_bw -d rxe0"], "20"), ["sh", "-c", "ib_send_bw -d rxe0"])
    eq(w(["ib_send_bw_x", "ping"], "20"), ["ib_send_bw_x", "ping"])
    eq(w(["ib_send_bw"], "default"), ["ib_send_bw"])
    lab = labctl.Lab(env={"PTLAB_QP_TIMEOUT": "18"})
    argv = lab.exec_argv(1, ["/usr/bin/ib_send_bw", "-F"])
    eq(argv[argv.index("--") + 1:], ["/usr/bin/ib_send_bw", "-u", "18", "-F"])


sys.exit(run())

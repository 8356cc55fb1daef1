#!/usr/bin/python3 -B
# SPDX-License-Identifier: BSD-2-Clause
"""The dataset writer (JSON Lines and CSV hold the same rows), result
parsing, bench/compare (a dataset against itself is all 1.00; regressions
are flagged and set the exit status) and bench/plot (valid PNGs)."""
import io
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchfake  # noqa: E402
from benchtap import TOP_SRC, case, eq, raises, run  # noqa: E402
from benchlib import comparing, dataset  # noqa: E402

BENCH = os.path.join(TOP_SRC, "bench")


def bw_doc(sizes, scale=1.0, units="MiB/s"):
    rows = [{"MsgSize": s, "n_iterations": 1000, "BW_peak": 100.0 * scale,
             "BW_average": min(s / 10, 900.0) * scale, "MsgRate": s / 1000 * scale,
             "BW_units": units} for s in sizes]
    return {"test_info": {"test": "Send_BW_Test", "Device": "rxe0"}, "results": rows[-1],
            "all_results": rows}


def lat_doc(sizes, scale=1.0):
    rows = [{"MsgSize": s, "n_iterations": 1000, "t_min": 1.0, "t_max": 9.0,
             "t_typical": (2 + s / 1000) * scale, "t_avg": 2.5, "t_stdev": 0.2,
             "percentile_99": (4 + s / 1000) * scale, "percentile_99.9": 6.0 * scale,
             "percentile_50": (2 + s / 1000) * scale} for s in sizes]
    return {"test_info": {"test": "Send_Latency_Test"}, "results": rows[-1], "all_results": rows}


def row(run_id, tool, doc, status="ok", **kw):
    r = {"run_id": run_id, "status": status, "tool": tool, "conn": "RC", "qps": 1,
         "post_api": "new", "placement": "nic-local", "iters": 1000, "repeat": 1,
         "client_cmd": f"numactl --physcpubind=0 --membind=0 {tool} -s 64 host",
         "client_nic": {"device": "rxe0", "limit_reason": "unknown, \"quoted\", a,b"},
         "error": None}
    if doc is not None:
        r.update(dataset.results_fields(doc))
    r.update(kw)
    return r


def synthetic(scale_bw=1.0, scale_lat=1.0):
    return [row("0001", "ib_send_bw", bw_doc([2, 64, 1024, 65536], scale_bw), size="all"),
            row("0002", "ib_send_bw", bw_doc([4096], scale_bw), qps=4, size="4096"),
            row("0003", "ib_send_lat", lat_doc([2, 64, 1024], scale_lat), size="all"),
            row("0004", "ib_send_bw", None, status="failed", qps=2,
                error="client exit 1: Unable to find the Infiniband/RoCE device\nsecond line",
                client_rc=1, server_rc=None)]


def write(rows):
    d = benchfake.tmpdir("dataset-test.")
    w = dataset.Writer(d)
    for r in rows:
        w.write(r)
    w.close()
    return d


@case
def jsonl_and_csv_agree():
    """every row reads back the same from JSON Lines and CSV, all fields in order"""
    rows = synthetic()
    d = write(rows)
    a = dataset.read_jsonl(os.path.join(d, "dataset.jsonl"))
    b = dataset.read_csv(os.path.join(d, "dataset.csv"))
    eq(len(a), 4)
    eq(a, b)
    eq(a, [dataset.normalize(r) for r in rows])
    eq(list(a[0].keys()), dataset.NAMES)
    with open(os.path.join(d, "dataset.csv")) as f:
        eq(f.readline().strip().split(","), dataset.NAMES)


@case
def result_fields():
    """--out_json rows map to fields; MiB/s and Gb/s both give bw_gbps"""
    f = dataset.results_fields(bw_doc([65536]))
    eq((f["msg_size"], f["bw_average"], f["bw_units"]), (65536, 900.0, "MiB/s"))
    eq(round(f["bw_gbps"], 6), round(900 * 1048576 * 8 / 1e9, 6))
    eq(dataset.results_fields(bw_doc([64], units="Gb/s"))["bw_gbps"], 6.4)
    f = dataset.results_fields(lat_doc([2]))
    eq((f["p50"], f["p99"], f["p99_9"], f["bw_gbps"]), (2.002, 4.002, 6.0, None))
    eq(len(f["all_results"]), 1)


@case
def writer_guards():
    """the writer refuses to overwrite a dataset and unknown fields"""
    d = write(synthetic()[:1])
    raises(FileExistsError, dataset.Writer, d)
    w = dataset.Writer(benchfake.tmpdir("dataset-test."))
    raises(KeyError, w.write, {"run_id": "1", "bogus": 2})
    w.close()


@case
def load_variants():
    """load takes the directory, the .jsonl or the .csv; bad files are named"""
    d = write(synthetic())
    eq(dataset.load(d), dataset.load(os.path.join(d, "dataset.csv")))
    bad = os.path.join(d, "bad.jsonl")
    with open(bad, "w") as f:
        f.write('{"run_id": "1"}\nnot json\n')
    raises(ValueError, dataset.load, bad, match="bad.jsonl:2")
    raises(ValueError, dataset.load, benchfake.tmpdir("dataset-test."), match="no dataset")


def compare(a, b, *opts):
    out = io.StringIO()
    rc = comparing.main([a, b, *opts], out=out)
    return rc, out.getvalue()


@case
def compare_with_itself():
    """a dataset against itself: every ratio 1.00, nothing flagged, exit 0"""
    rows = synthetic()
    entries, only_a, only_b = comparing.compare(rows, rows, 5.0)
    eq(len(entries), 4 + 1 + 3)   # sizes of run 1, run 2, and the latency run
    eq((only_a, only_b), ([], []))
    for _, _, cells in entries:
        assert cells, entries
        for a, b, ratio, bad in cells.values():
            eq((ratio, bad), (1.0, False))
    rc, text = compare(write(rows), write(rows))
    eq(rc, 0, text)
    lines = [l.split() for l in text.splitlines() if l.startswith("ib_send")]
    eq(len(lines), 8)
    for t in lines:
        eq(t[-1], "ok")
        assert set(t[-5:-1]) <= {"1.00", "-"} and t[-5:-1].count("1.00") == 2, t
    assert "0 with a regression" in text, text


@case
def compare_flags_regressions():
    """20% less BW and 30% more latency are flagged; exit 1"""
    a = write(synthetic())
    b = write(synthetic(scale_bw=0.8, scale_lat=1.3))
    rc, text = compare(a, b)
    eq(rc, 1, text)
    assert "REGRESSION (BW, rate)" in text and "REGRESSION (p50, p99)" in text, text
    assert "8 with a regression beyond 5%" in text, text
    rc, text = compare(a, b, "--threshold", "35")
    eq(rc, 0, text)
    rc, text = compare(b, a)   # improvements are not regressions
    eq(rc, 0, text)


@case
def compare_bad_input():
    """missing datasets, nothing in common, bad thresholds: exit 2"""
    d = write(synthetic())
    eq(compare(d, "/nonexistent/x.jsonl")[0], 2)
    other = write([row("0001", "ib_write_bw", bw_doc([64]))])
    eq(compare(d, other)[0], 2)
    eq(compare(d, d, "--threshold", "-1")[0], 2)


def is_png(path):
    with open(path, "rb") as f:
        head = f.read(24)
    return head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR" and os.path.getsize(path) > 1000


@case
def plot_pngs():
    """bench/plot draws BW, message rate and latency vs size as valid PNGs"""
    d = write(synthetic())
    out = os.path.join(d, "plots")
    p = subprocess.run([os.path.join(BENCH, "plot"), d, "-o", out], capture_output=True,
                       text=True, timeout=60)
    eq(p.returncode, 0, p.stderr)
    pngs = p.stdout.split()
    eq(sorted(os.path.basename(x) for x in pngs),
       ["bw_vs_size.png", "latency_vs_size.png", "msgrate_vs_size.png"])
    for png in pngs:
        assert is_png(png), png
    # one line per configuration: two BW configurations (q1 and q4)
    with open(os.path.join(out, "plots.gp")) as f:
        gp = f.read()
    eq(gp.count('title "ib_send_bw RC q'), 4)   # in the BW and the rate plot
    eq(gp.count('title "ib_send_lat'), 3)       # one per latency panel


@case
def plot_nothing():
    """a dataset of failed runs has nothing to plot: exit 1 and why"""
    d = write(synthetic()[3:])
    p = subprocess.run([os.path.join(BENCH, "plot"), d, "-o", os.path.join(d, "p")],
                       capture_output=True, text=True, timeout=60)
    eq(p.returncode, 1)
    assert "nothing to plot: 1 rows, 0 ok" in p.stderr, p.stderr
    p = subprocess.run([os.path.join(BENCH, "plot"), "/nonexistent", "-o", d],
                       capture_output=True, text=True, timeout=60)
    eq(p.returncode, 2)


if __name__ == "__main__":
    sys.exit(run())

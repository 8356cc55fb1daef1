#!/usr/bin/python3 -B
# SPDX-License-Identifier: BSD-2-Clause
"""bench/mesh: the schedules cover every ordered pair (n-1 shift rounds, or
2(n-1) strictly disjoint ones) for 2..12 nodes, the other patterns and the
rounds file; the efficiency figure; the outliers (threshold, share of the
median, baseline) and the suspect node; the matrix PNG; and whole runs of
bench/mesh over four fake hosts (bench_fake_ssh running bench_fake_perftest
here, each host on its own loopback address), one of them slow on purpose."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchfake  # noqa: E402
from benchtap import HERE, TOP_SRC, case, eq, raises, run  # noqa: E402
from benchlib import dataset, mesh_plan, mesh_report  # noqa: E402

MESH = os.path.join(TOP_SRC, "bench", "mesh")
PORTS = benchfake.PortBlocks(21000, 24000, 40)


def names(n):
    return [f"h{i}" for i in range(n)]


def all_ordered(nodes):
    return {(c, s) for c in nodes for s in nodes if c != s}


@case
def shift_covers_all_pairs():
    """all-pairs: n-1 rounds, every ordered pair once, each node one server and one client a round"""
    for n in range(2, 13):
        nodes = names(n)
        rounds = mesh_plan.plan("all-pairs", nodes)
        eq(len(rounds), n - 1, f"n={n}")
        got = [(l.client, l.server) for l in mesh_plan.ordered_pairs(rounds)]
        eq(sorted(got), sorted(all_ordered(nodes)), f"n={n}")
        for r in rounds:
            eq(mesh_plan.check_round(r), None)
            eq(sorted(l.server for l in r), sorted(nodes))
            eq(sorted(l.client for l in r), sorted(nodes))


@case
def disjoint_covers_all_pairs():
    """--disjoint: 2(n-1) rounds (2n for odd n), every ordered pair once, no node twice in a round"""
    for n in range(2, 13):
        nodes = names(n)
        rounds = mesh_plan.plan("all-pairs", nodes, disjoint=True)
        eq(len(rounds), 2 * (n - 1) if n % 2 == 0 else 2 * n, f"n={n}")
        got = [(l.client, l.server) for l in mesh_plan.ordered_pairs(rounds)]
        eq(len(got), len(set(got)), f"n={n}: a pair twice")
        eq(set(got), all_ordered(nodes), f"n={n}")
        for r in rounds:
            assert mesh_plan.is_disjoint(r), f"n={n}: {r}"
    eq(len(mesh_plan.plan("all-pairs", names(4), disjoint=True)), 6)


@case
def other_patterns():
    """ring, one-to-many, many-to-one and a rounds file; bad ones refused with the reason"""
    nodes = names(5)
    ring = mesh_plan.plan("ring", nodes)
    eq([str(l) for l in ring[0]], ["h0>h1", "h1>h2", "h2>h3", "h3>h4", "h4>h0"])
    dring = mesh_plan.plan("ring", nodes, disjoint=True)
    eq(sorted(str(l) for r in dring for l in r), sorted(str(l) for l in ring[0]))
    assert all(mesh_plan.is_disjoint(r) for r in dring)
    one = mesh_plan.plan("one-to-many:h2", nodes)
    eq([[str(l) for l in r] for r in one], [["h2>h0"], ["h2>h1"], ["h2>h3"], ["h2>h4"]])
    many = mesh_plan.plan("many-to-one:h0", nodes)
    eq({l.server for r in many for l in r}, {"h0"})
    eq(len(many), 4)
    f = mesh_plan.plan("file:x", nodes, rounds_text="# two rounds\nh0>h1, h2>h3\n\nh1>h0 # back\n")
    eq([[str(l) for l in r] for r in f], [["h0>h1", "h2>h3"], ["h1>h0"]])
    raises(mesh_plan.PlanError, mesh_plan.plan, "one-to-many:zz", nodes, match="zz is not one")
    raises(mesh_plan.PlanError, mesh_plan.plan, "star", nodes, match="unknown pattern")
    raises(mesh_plan.PlanError, mesh_plan.plan, "all-pairs", ["a"], match="2 nodes")
    raises(mesh_plan.PlanError, mesh_plan.plan, "all-pairs", ["a", "a"], match="twice")
    raises(mesh_plan.PlanError, mesh_plan.parse_rounds_file, "h0-h1", nodes, match="CLIENT>SERVER")
    raises(mesh_plan.PlanError, mesh_plan.parse_rounds_file, "h0>h0", nodes, match="itself")
    raises(mesh_plan.PlanError, mesh_plan.parse_rounds_file, "h0>q", nodes, match="'q'")
    raises(mesh_plan.PlanError, mesh_plan.parse_rounds_file, "# none\n", nodes, match="no rounds")
    eq(mesh_plan.check_round([mesh_plan.Link("a", "b"), mesh_plan.Link("a", "c")]),
       "a would run two servers in one round")


@case
def efficiency_figure():
    """efficiency: 1.0 for pairs side by side for the whole round, 1/k when they ran one after another"""
    eq(mesh_plan.efficiency([(10.0, [10.0, 10.0, 10.0])]), 1.0)
    eq(round(mesh_plan.efficiency([(30.0, [10.0, 10.0, 10.0])]), 4), round(1 / 3, 4))
    eq(mesh_plan.efficiency([]), None)


def row(c, s, bw=None, status="ok", t=None):
    r = dataset.empty_row()
    r.update(client_host=c, server_host=s, status=status, bw_gbps=bw, t_typical=t,
             error=None if status == "ok" else "client exit 1: boom")
    return r


@case
def outliers_and_suspect():
    """a slow node: its pairs are the outliers (threshold, % of median), it is the suspect; failures listed first"""
    nodes = names(4)
    rows = []
    for c in nodes:
        for s in nodes:
            if c != s:
                rows.append(row(c, s, 25.0 if "h2" in (c, s) else 100.0))
    rows.append(row("h0", "h1", status="failed"))
    outs = mesh_report.outliers(rows, mesh_report.Limits(pct_of_median=80))
    eq(outs[0].why, "failed: client exit 1: boom")
    flagged = {(o.client, o.server) for o in outs[1:]}
    eq(flagged, {(c, s) for c, s in all_ordered(nodes) if "h2" in (c, s)})
    eq(mesh_report.node_verdicts(outs[1:], nodes, 6), [("h2", 6)])
    eq(len(mesh_report.outliers(rows[:-1], mesh_report.Limits(min_value=20))), 0)
    eq(len(mesh_report.outliers(rows[:-1], mesh_report.Limits(min_value=30))), 6)
    # latency: higher is worse
    lat = [row("h0", "h1", t=2.0), row("h1", "h0", t=2.0), row("h0", "h2", t=9.0)]
    eq([(o.client, o.server) for o in mesh_report.outliers(lat, mesh_report.Limits(min_value=5))],
       [("h0", "h2")])


@case
def baseline():
    """--baseline: a pair more than X % worse than the same pair (else the baseline's median) is an outlier"""
    base = [row("h0", "h1", 100.0), row("h1", "h0", 100.0)]
    now = [row("h0", "h1", 95.0), row("h1", "h0", 80.0)]
    outs = mesh_report.outliers(now, mesh_report.Limits(baseline_pct=10), base)
    eq([(o.client, o.server) for o in outs], [("h1", "h0")])
    assert "20.0% worse than the baseline's 100.000" in outs[0].why, outs[0].why
    # a baseline of the node type (other hosts): each pair against its median link
    typed = [row("x0", "x1", 100.0), row("x1", "x2", 90.0), row("x2", "x0", 110.0)]
    outs = mesh_report.outliers(now, mesh_report.Limits(baseline_pct=10), typed)
    eq([(o.client, o.server) for o in outs], [("h1", "h0")])
    assert "worse than the baseline's median 100.000" in outs[0].why, outs[0].why


@case
def matrix_picture():
    """the matrix PNG is drawn (gnuplot), failed pairs and the diagonal left blank"""
    d = benchfake.tmpdir("mesh-png.")
    p = os.path.join(d, "m.png")
    mesh_report.matrix_png([row("a", "b", 10.0), row("b", "a", status="failed")], ["a", "b"],
                           p, "test")
    with open(p, "rb") as f:
        eq(f.read(8), b"\x89PNG\r\n\x1a\n")


def mesh(*args, env=None):
    out = os.path.join(benchfake.tmpdir("mesh-out."), "o")
    bindir = benchfake.tmpdir("mesh-bin.")
    tool = os.path.join(bindir, "ib_write_bw")
    os.symlink(os.path.join(HERE, "bench_fake_perftest"), tool)
    hosts = [f"host{i}" for i in range(1, 5)]
    addr = ",".join(f"{h}=127.0.0.{i + 2}" for i, h in enumerate(hosts))
    log = os.path.join(bindir, "ssh.log")
    cmd = [MESH, "--launcher", "ssh", "--ssh", os.path.join(HERE, "bench_fake_ssh"),
           "--nodes", ",".join(hosts), "--addr", addr, "--tool", tool, "--out", out,
           "--port", str(PORTS.take()), "--timeout", "60", *args]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, FAKE_SSH_LOG=log, **(env or {})))
    rows = dataset.load(out) if os.path.exists(os.path.join(out, "dataset.jsonl")) else []
    return p.returncode, p.stdout + p.stderr, rows, out


@case
def whole_run_all_pairs():
    """bench/mesh over 4 fake ssh hosts: 12 rows in 3 rounds, the matrix, efficiency, exit 0"""
    rc, text, rows, out = mesh("--", "-s", "65536", "-n", "10")
    eq(rc, 0, text)
    eq(len(rows), 12, text)
    eq({r["round"] for r in rows}, {1, 2, 3})
    eq({(r["client_host"], r["server_host"]) for r in rows},
       all_ordered([f"host{i}" for i in range(1, 5)]))
    assert all(r["status"] == "ok" and r["bw_gbps"] > 0 for r in rows), text
    assert all(r["server_bw_gbps"] and r["server_bw_gbps"] > 0 for r in rows), text
    for k in (1, 2, 3):
        assert f"round {k}/3: 4 pairs" in text, text
    assert os.path.exists(os.path.join(out, "matrix.png")), text
    summary = json.load(open(os.path.join(out, "mesh.json")))
    eq((summary["rounds"], summary["pairs"], summary["ok"]), (3, 12, 12))
    assert summary["efficiency"] is not None and 0 < summary["efficiency"] <= 1.0, summary


@case
def whole_run_slow_node_and_failure():
    """a slow host is named as the outlier and suspect (exit 1); --disjoint takes 6 rounds"""
    rc, text, rows, _ = mesh("--disjoint", "--pct-of-median", "60", "--", "-n", "10",
                             env={"FAKE_PERFTEST_SLOW_HOST": "127.0.0.4",   # ssh's target
                                  "FAKE_PERFTEST_SLOW_ADDR": "127.0.0.4"})
    eq(rc, 1, text)
    eq(len(rows), 12, text)
    eq(max(r["round"] for r in rows), 6)
    assert "suspect node: host3 (in 6 of its 6 pairs' outliers)" in text, text
    eq(text.count("outlier: "), 6, text)


@case
def nic_local_pinning():
    """--nic-local DEV: each side runs through the NUMA wrapper; a device without a node runs unpinned, said on stderr"""
    rc, text, rows, out = mesh("--nic-local", "nosuchdev0", "--pattern", "ring", "--", "-n", "5")
    eq(rc, 0, text)
    eq(len(rows), 4, text)
    for r in rows:
        assert r["client_cmd"].startswith("sh -c ") and " nosuchdev0 " in r["client_cmd"], r
        eq(r["status"], "ok")
    with open(os.path.join(out, "runs", rows[0]["run_id"] + "-client.err")) as f:
        assert "not pinned" in f.read()


@case
def bad_usage():
    """bad input: unknown pattern node, missing --addr '=', an existing dataset: exit 2, nothing run"""
    rc, text, rows, _ = mesh("--pattern", "one-to-many:nobody")
    eq(rc, 2, text)
    assert "nobody is not one of the nodes" in text, text
    rc, text, _, _ = mesh("--addr", "junk")
    eq(rc, 2, text)
    assert "NODE=ADDRESS" in text, text
    p = subprocess.run([MESH, "--tool", "x", "--out", "/tmp/x", "--launcher", "ssh",
                        "--nodes", "a,b", "--dry-run"], capture_output=True, text=True)
    eq(p.returncode, 0, p.stderr)
    assert "1 rounds, 2 pairs" in p.stdout, p.stdout


if __name__ == "__main__":
    sys.exit(run())

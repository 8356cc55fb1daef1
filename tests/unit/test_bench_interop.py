#!/usr/bin/python3 -B
# SPDX-License-Identifier: BSD-2-Clause
"""bench/interop end to end without RDMA hardware: directories of stand-in
tools (bench_fake_perftest, each build with its own failings) through the
local launcher and stand-ins for ci/lab and ssh; the table, interop.json and
interop.csv; bad input refused before anything runs."""
import csv
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchfake  # noqa: E402
from benchtap import HERE, TOP_SRC, case, eq, run  # noqa: E402

INTEROP = os.path.join(TOP_SRC, "bench", "interop")
FAKE = os.path.join(HERE, "bench_fake_perftest")
TOOLS = [f"ib_{v}_{k}" for v in ("send", "write", "read", "atomic") for k in ("bw", "lat")]
PORTS = benchfake.PortBlocks(21000, 32000, 60)   # each run gets its own block
PORT = [0]


def build(name, tools=TOOLS, **env):
    """A directory of stand-in tools; env (FAKE_PERFTEST_*) is this build's behaviour."""
    d = os.path.join(benchfake.tmpdir("interop-bin."), name)
    os.mkdir(d)
    env.setdefault("ALL_MAX", "23")
    sets = " ".join(f"FAKE_PERFTEST_{k}='{v}'" for k, v in env.items())
    for t in tools:
        with open(os.path.join(d, t), "w") as f:
            f.write(f"#!/bin/sh\nFAKE_PERFTEST_TOOL={t} {sets} exec '{FAKE}' \"$@\"\n")
        os.chmod(os.path.join(d, t), 0o755)
    return d


def interop(*args, out=True, env=None, timeout=240):
    """(exit code, stdout, stderr, interop.json or None, out dir)."""
    d = os.path.join(benchfake.tmpdir("interop-out."), "o") if out else None
    PORT[0] = PORTS.take()
    cmd = [INTEROP, "--port", str(PORT[0]), "--timeout", "20", *args]
    if d:
        cmd += ["--out", d]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                       env=dict(os.environ, **(env or {})))
    doc = None
    if d and os.path.exists(os.path.join(d, "interop.json")):
        with open(os.path.join(d, "interop.json")) as f:
            doc = json.load(f)
    return p.returncode, p.stdout, p.stderr, doc, d


def grid(stdout):
    """The table as {(tool, mode): {pair: text}}."""
    lines = stdout.splitlines()
    i = next(n for n, l in enumerate(lines) if l.startswith("tool "))
    head = re.split(r"\s{2,}", lines[i])
    out = {}
    for l in lines[i + 1:]:
        if not l.startswith("ib_"):
            break
        cols = re.split(r"\s{2,}", l)
        out[(cols[0], cols[1])] = dict(zip(head[2:], cols[2:]))
    return out


def by_id(doc):
    return {c["id"]: c for c in doc["cells"]}


@case
def all_pairs_pass():
    """two good builds: every ordered pair incl. X:X, per tool and mode; table, JSON and CSV agree"""
    a, b = build("a"), build("b")
    rc, out, err, doc, d = interop("--bin", f"a={a}", "--bin", f"b={b}",
                                   "--tools", "send_bw,read_lat,atomic_bw",
                                   "--modes", "rc,ud,rc+a,rc+q4", "--iters", "20")
    eq(rc, 0, out + err)
    g = grid(out)
    eq(sorted(g), sorted([("ib_send_bw", m) for m in ("rc", "ud", "rc+a", "rc+q4")] +
                         [("ib_read_lat", m) for m in ("rc", "rc+a")] +
                         [("ib_atomic_bw", m) for m in ("rc", "rc+q4")]))
    for row in g.values():
        eq(row, {"a:a": "pass", "a:b": "pass", "b:a": "pass", "b:b": "pass"})
    assert out.rstrip().endswith("32 cells: 32 pass, 0 fail"), out
    assert re.search(r"^\[32/32\] ib_atomic_bw rc\+q4 b:b: pass .*ETA", err, re.M), err
    eq(doc["summary"]["line"], "32 cells: 32 pass, 0 fail")
    eq(len(doc["skipped"]), 4)
    eq(doc["binaries"]["a"], {"dir": a, "version": "6.06"})
    c = by_id(doc)["ib_send_bw/rc+q4/a:b"]
    eq((c["server_rows"], c["client_rows"]), ([[65536, 80]], [[65536, 80]]))
    assert c["client_cmd"] == f"{b}/ib_send_bw -F -q 4 -n 20 -p {c['port']} 127.0.0.1", c
    eq(by_id(doc)["ib_read_lat/rc/b:a"]["server_rows"], [])
    with open(os.path.join(d, "interop.csv")) as f:
        rows = list(csv.DictReader(f))
    eq([r["id"] for r in rows], [c["id"] for c in doc["cells"]])
    eq({r["status"] for r in rows}, {"pass"})
    assert os.path.exists(os.path.join(d, "logs", "0032-server.out"))
    # --size: -s for RC/UC but -a and the atomics (UD keeps the MTU); the row must have it
    rc, out, err, doc, d = interop("--bin", f"a={a}", "--tools", "send_bw,atomic_lat",
                                   "--modes", "rc,rc+a,ud", "--iters", "20", "--size", "4096")
    eq(rc, 0, out + err)
    eq([(c["id"], " -s 4096 " in c["client_cmd"], c["client_rows"][-1][0]) for c in doc["cells"]],
       [("ib_send_bw/rc/a:a", True, 4096), ("ib_send_bw/rc+a/a:a", False, 1 << 23),
        ("ib_send_bw/ud/a:a", False, 1024), ("ib_atomic_lat/rc/a:a", False, 8)])


@case
def crash_is_reported():
    """interop table: a stand-in build whose multicast server dies of signal 6 is named in its server cells"""
    ours, up = build("ours"), build("up", ABORT="server", ABORT_IF="-M")
    rc, out, err, doc, _ = interop("--bin", f"ours={ours}", "--bin", f"up={up}",
                                   "--tools", "send_bw", "--modes", "rc,mcast", "--iters", "20")
    eq(rc, 1, out + err)
    g = grid(out)
    eq(g[("ib_send_bw", "mcast")], {"ours:ours": "pass", "ours:up": "pass",
                                    "up:ours": "FAIL: crash signal SIGABRT",
                                    "up:up": "FAIL: crash signal SIGABRT"})
    eq(set(g[("ib_send_bw", "rc")].values()), {"pass"})
    c = by_id(doc)["ib_send_bw/mcast/up:ours"]
    eq((c["reason"], c["server_rc"]), ("crash signal SIGABRT", 134))
    eq(c["detail"], "server: exit 134: *** buffer overflow detected ***: terminated")
    assert "  ib_send_bw/mcast/up:ours: FAIL: crash signal SIGABRT: server: exit 134: " \
           "*** buffer overflow detected ***" in out, out
    assert out.rstrip().endswith("8 cells: 6 pass, 2 fail"), out
    # expected: reported all the same, and the exit status is 0
    rc, out, err, doc, _ = interop("--bin", f"ours={ours}", "--bin", f"up={up}",
                                   "--tools", "send_bw", "--modes", "mcast", "--iters", "20",
                                   "--expect", "ib_send_bw/mcast/up:*=crash signal SIGABRT")
    eq(rc, 0, out + err)
    eq(grid(out)[("ib_send_bw", "mcast")]["up:ours"], "FAIL: crash signal SIGABRT (expected)")
    assert out.rstrip().endswith("4 cells: 2 pass, 2 fail (2 expected)"), out


@case
def failures_named():
    """refused version, completion error, rows disagree, refused option, timeout: each named"""
    good = build("good")
    cases = {"old": (dict(VERSION="5.60"), "refused version"),
             "cqe": (dict(CQE="client"), "completion error (status 12)"),
             "rows": (dict(ITERS="19"), "rows disagree"),
             "noold": (dict(NO_OPT="--use_old_post_send"), "refused option"),
             "hang": (dict(HANG="client"), "timeout")}
    args = []
    for name, (env, _) in cases.items():
        args += ["--bin", f"{name}={build(name, tools=['ib_send_bw'], **env)}"]
    pairs = ",".join(f"good:{n}" for n in cases)
    rc, out, err, doc, _ = interop("--bin", f"good={good}", *args, "--pairs", pairs,
                                   "--tools", "send_bw", "--modes", "rc+old", "--iters", "20",
                                   "--timeout", "6")
    eq(rc, 1, out + err)
    row = grid(out)[("ib_send_bw", "rc+old")]
    for name, (_, want) in cases.items():
        eq(row[f"good:{name}"], "FAIL: " + want, name)
    cells = by_id(doc)
    assert "Current implementation is not compatible" in cells["ib_send_bw/rc+old/good:old"]["detail"]
    assert cells["ib_send_bw/rc+old/good:hang"]["client_stopped"], cells
    assert out.rstrip().endswith("5 cells: 0 pass, 5 fail"), out


@case
def flaky_cells_named():
    """--flaky: a failing cell says 'known rxe flake' in the table, counts as a failure, exit 0"""
    a, b = build("a"), build("b", CQE="server")
    rc, out, err, doc, _ = interop("--bin", f"a={a}", "--bin", f"b={b}", "--no-self",
                                   "--tools", "write_bw", "--modes", "rc+q4", "--iters", "20",
                                   "--flaky", "ib_*/rc+q4/*=known rxe flake")
    eq(rc, 0, out + err)
    eq(grid(out)[("ib_write_bw", "rc+q4")],
       {"a:b": "pass", "b:a": "FAIL: completion error (status 12) (known rxe flake)"})
    assert out.rstrip().endswith("2 cells: 1 pass, 1 fail (1 known flake)"), out
    eq(by_id(doc)["ib_write_bw/rc+q4/b:a"]["status"], "flake")


@case
def lab_launcher():
    """lab (a stand-in ci/lab): servers on node 1, clients on node 2 at its address, rxe0 -x 1"""
    share = benchfake.tmpdir("interop-share.")
    a = build("a")
    rc, out, err, doc, _ = interop("--bin", f"a={a}", "--launcher", "lab", "--lab-cmd",
                                   os.path.join(HERE, "bench_fake_lab"), "--tools", "send_lat",
                                   "--modes", "ud", "--iters", "20", "--json", out=False,
                                   env={"FAKE_LAB_SHARE": share})
    eq(rc, 0, out + err)
    doc = json.loads(out)
    eq(doc["summary"]["line"], "1 cells: 1 pass, 0 fail")
    assert "ib_send_lat  ud    pass" in err, err
    with open(os.path.join(share, "exec.log")) as f:
        log = [l for l in f.read().splitlines() if "ib_send_lat" in l and "-V" not in l]
    eq(len(log), 2, log)
    assert log[0].startswith(f"1 {TOP_SRC}/ci/lab-serve {share}/listening.") and \
        f" {PORT[0]} sh -c " in log[0] and log[0].endswith("-d rxe0 -x 1 -F -c UD -n 20 -p "
                                                                f"{PORT[0]}"), log
    assert log[1].startswith("2 sh -c ") and log[1].endswith(" 127.0.0.1"), log


@case
def ssh_launcher():
    """ssh (a stand-in ssh): tools checked on both hosts first; a tool missing there stops it"""
    d = benchfake.tmpdir("interop-ssh.")
    env = {"FAKE_SSH_LOG": os.path.join(d, "ssh.log")}
    a = build("a")
    base = ["--bin", f"a={a}", "--launcher", "ssh", "--ssh-cmd",
            os.path.join(HERE, "bench_fake_ssh"), "--server-addr", "127.0.0.1",
            "--tools", "send_bw", "--modes", "rc", "--iters", "20"]
    rc, out, err, doc, _ = interop(*base, "--hosts", "srv,cli", env=env)
    eq(rc, 0, out + err)
    with open(env["FAKE_SSH_LOG"]) as f:
        log = f.read().splitlines()
    assert any(l.startswith("cli timeout -k 5 ") and "[ -x" in l for l in log), log
    assert any(l.startswith("srv ") and "ib_send_bw -F -n 20" in l for l in log), log
    eq(doc["launcher"]["hosts"], {"server": "srv", "client": "cli"})
    rc, out, err, doc, _ = interop(*base, "--bin", f"b={os.path.dirname(a)}", "--hosts",
                                   "srv,cli", env=env)
    eq((rc, doc), (2, None))
    assert "missing or not executable on the ssh hosts: srv: " in err, err


@case
def bad_input():
    """bad input: a clear message, exit 2, nothing run and no output written"""
    a = build("a")
    f = os.path.join(a, "ib_send_bw")
    part = build("part", tools=["ib_send_bw"])
    tree = build("perftest", tools=["ib_send_bw"])   # as in a build tree
    for args, msg in (
            (["--bin", "a=/nonexistent/dir"], "--bin a=/nonexistent/dir: not a directory"),
            (["--bin", f"a={f}"], "not a directory (give the directory holding the ib_* tools)"),
            (["--bin", f"a={a}", "--bin", f"p={part}", "--tools", "send_bw,write_lat"],
             f"missing or not executable here: p: {part}/ib_write_lat"),
            (["--bin", f"a={os.path.dirname(tree)}", "--tools", "send_bw"],
             f"no ib_send_bw there; did you mean a={tree}?"),
            (["--bin", f"a={a}", "--modes", "rc,xrc"], "mode 'xrc': unknown base 'xrc'"),
            (["--bin", f"a={a}", "--modes", "rc+q99"], "qN takes 2..64"),
            (["--bin", f"a={a}", "--tools", "send_bandwidth"], "unknown tool 'send_bandwidth'"),
            (["--bin", f"a={a}", "--no-self"], "no pairs: --no-self with a single --bin"),
            (["--bin", f"a={a}", "--pairs", "a:up"], "--pairs: 'a:up' is not SERVER:CLIENT"),
            (["--bin", f"a={a}", "--tools", "read_bw", "--modes", "ud"],
             "no cells to run: ib_read_bw ud: ib_read_bw does not run UD"),
            (["--bin", f"a={a}", "--only", "ib_send_bw/uc+q4"], "--only ib_send_bw/uc+q4: matches no"),
            (["--bin", f"a={a}", "--expect", "send_bw/mcast/*=crash"], "'send_bw/mcast/*' matches no cell"),
            (["--bin", f"a={a}", "--expect", "ib_send_bw/mcast/*"], "expected TOOL/MODE/SERVER:CLIENT=REASON"),
            (["--bin", f"a={a}", "--iters", "2"], "--iters 2 is outside 5..100000000"),
            (["--bin", f"a={a}", "--launcher", "ssh"], "--launcher ssh needs --hosts"),
            (["--bin", "a"], "--bin 'a': expected NAME=DIR")):
        rc, out, err, doc, d = interop(*args)
        eq(rc, 2, f"{args}: {out}{err}")
        assert err.startswith("interop: ") and msg in err, (args, err)
        assert not os.path.exists(d), (args, "wrote output")
    rc, out, err, doc, d = interop("--bin", f"a={a}", "--tools", "send_lat", "--modes", "rc",
                                   "--iters", "20")
    eq(rc, 0, out + err)
    p = subprocess.run([INTEROP, "--bin", f"a={a}", "--out", d], capture_output=True, text=True,
                       timeout=60)
    eq(p.returncode, 2)
    assert "already holds interop.json" in p.stderr, p.stderr


@case
def dry_run():
    """--dry-run: the cells and both commands, the combinations not applicable; runs nothing"""
    a = build("a")
    rc, out, err, doc, d = interop("--bin", f"ours={a}", "--bin", f"up={a}", "--no-self",
                                   "--tools", "send_bw,write_lat", "--modes", "rc,mcast",
                                   "--launcher", "lab", "--dry-run")
    eq(rc, 0, err)
    assert "n/a: ib_write_lat mcast: ib_write_lat does not run UD" in out, out
    assert re.search(r"^\[2/6\] ib_send_bw/rc/up:ours\n    server: \S+/ib_send_bw -d rxe0 -x 1 -F "
                     r"-p \d+\n    client: .* '<server address>'$", out, re.M), out
    assert "-c UD -g -M 225.1.1.20" in out, out
    assert out.rstrip().endswith("6 cells, 1 tool/mode combinations not applicable"), out
    assert doc is None and not os.path.exists(d)
    rc, out, err, _, _ = interop("--bin", f"a={a}", "--tools", "write_bw", "--modes", "rc,rc+a",
                                 "--iters", "50", "--all-iters", "5", "--size", "4096",
                                 "--dry-run")
    eq(rc, 0, err)
    eq(re.findall(r"server: \S+ -F (.*) -p", out), ["-s 4096 -n 50", "-a -n 5"])


@case
def memory_modes():
    """+hugepages and +mr_per_qp (issue 18): their options on both ends, in the mode's name"""
    a = build("a")
    rc, out, err, _, _ = interop("--bin", f"a={a}", "--tools", "write_bw",
                                 "--modes", "rc+hugepages,rc+q2+mr_per_qp", "--iters", "50",
                                 "--size", "4096", "--dry-run")
    eq(rc, 0, err)
    eq(re.findall(r"server: \S+ -F (.*) -p", out),
       ["--use_hugepages -s 4096 -n 50", "-q 2 --mr_per_qp -s 4096 -n 50"])
    assert "ib_write_bw/rc+q2+mr_per_qp/" in out, out
    rc, out, err, _, _ = interop("--bin", f"a={a}", "--modes", "rc+mr_per_qp+mr_per_qp",
                                 "--dry-run")
    eq(rc, 2, out)
    assert "'mr_per_qp' given twice" in err, err
@case
def pace_modes():
    """rc+rate_limit and rc+reversed: the options on both sides, BW tools only"""
    a = build("a")
    rc, out, err, doc, d = interop("--bin", f"a={a}", "--tools", "write_bw,read_lat",
                                   "--modes", "rc+rate_limit,rc+reversed", "--iters", "50",
                                   "--dry-run")
    eq(rc, 0, err)
    eq(re.findall(r"server: \S+ -F (.*) -p", out),
       ["--rate_limit 0.02 --rate_limit_type SW -n 50", "--reversed -n 50"])
    assert "n/a: ib_read_lat rc+rate_limit: ib_read_lat: the rate limiter and --reversed" in out, out
    rc, out, err, _, _ = interop("--bin", f"a={a}", "--modes", "rc+reversed+reversed", "--dry-run")
    assert rc == 2 and "'reversed' given twice" in err, (rc, err)


if __name__ == "__main__":
    sys.exit(run())

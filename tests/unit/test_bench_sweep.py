#!/usr/bin/python3 -B
# SPDX-License-Identifier: BSD-2-Clause
"""bench/sweep end to end without RDMA hardware: our ib_send_bw failing for
want of a device (recorded, the sweep goes on), and a stand-in tool
(bench_fake_perftest) run through the local launcher and through stand-ins
for ci/lab and ssh, on a fake sysfs tree read by the real nicinfo."""
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchfake  # noqa: E402
from benchtap import BUILD, HERE, TOP_SRC, Skip, case, eq, run  # noqa: E402
from benchlib import dataset, launchers  # noqa: E402

SWEEP = os.path.join(TOP_SRC, "bench", "sweep")
NICINFO = os.path.join(BUILD, "bench", "nicinfo")
OUR_SEND_BW = os.path.join(BUILD, "perftest", "ib_send_bw")
PORTS = benchfake.PortBlocks(10000, 21000, 50)   # each sweep gets its own block
PORT = [0]


def fake_env():
    """bindir of stand-in tools and a nicinfo that reads a one-node fake tree
    (rxe0 on eth0 at 10 Gb/s, CPU 0 on node 0)."""
    d = benchfake.tmpdir("sweep-test.")
    os.mkdir(os.path.join(d, "bin"))
    for t in ("ib_send_bw", "ib_send_lat", "ib_write_bw"):
        os.symlink(os.path.join(HERE, "bench_fake_perftest"), os.path.join(d, "bin", t))
    sysfs = os.path.join(d, "sys")
    benchfake.host(sysfs, {0: "0"})
    benchfake.rxe(sysfs, numa="0", cpus="0", speed="10000")
    wrapper = os.path.join(d, "nicinfo")
    with open(wrapper, "w") as f:
        f.write(f"#!/bin/sh\nexec '{NICINFO}' --sysfs-root '{sysfs}' \"$@\"\n")
    os.chmod(wrapper, 0o755)
    return d


def sweep(*args, env=None, bindir=None, nicinfo=None, timeout=120):
    """Run bench/sweep into a new directory: (exit code, output, rows, out dir)."""
    out = os.path.join(benchfake.tmpdir("sweep-out."), "o")
    PORT[0] = PORTS.take()
    cmd = [SWEEP, "--out", out, "--port", str(PORT[0]), *args]
    if bindir:
        cmd += ["--bindir", bindir]
    if nicinfo:
        cmd += ["--nicinfo", nicinfo]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                       env=dict(os.environ, **(env or {})))
    rows = []
    if os.path.exists(os.path.join(out, "dataset.jsonl")):
        rows = dataset.load(os.path.join(out, "dataset.jsonl"))
        eq(rows, dataset.load(os.path.join(out, "dataset.csv")), "JSONL vs CSV")
    return p.returncode, p.stdout + p.stderr, rows, out


def fake(*args, **kw):
    d = fake_env()
    return sweep("--device", "rxe0", *args, bindir=os.path.join(d, "bin"),
                 nicinfo=os.path.join(d, "nicinfo"), **kw)


@case
def our_tool_without_device():
    """our ib_send_bw on a host without RDMA: each run recorded as failed with its message; the sweep goes on"""
    if not os.access(OUR_SEND_BW, os.X_OK) or os.path.exists("/sys/class/infiniband"):
        raise Skip("needs our ib_send_bw built and a host without RDMA devices")
    rc, text, rows, _ = sweep("--size", "64, 1024", "--iters", "100",
                              bindir=os.path.dirname(OUR_SEND_BW), nicinfo=NICINFO)
    eq(rc, 1, text)
    eq(len(rows), 2, text)
    for r in rows:
        eq((r["status"], r["server_rc"], r["client_rc"]), ("failed", 1, None))
        assert re.match(r"server exit 1: .*(Unable to find|Did not detect)", r["error"]), r["error"]
        eq(r["tool_version"], "6.06")
        assert "--out_json_file=" in r["server_cmd"], r["server_cmd"]
    assert re.search(r"^\[1/2\] .*FAILED.*elapsed \d+:\d\d, ETA \d+:\d\d$", text, re.M), text
    assert "[2/2]" in text and "2 runs, 0 ok, 2 failed" in text, text


META = ("tool_version", "peer_version", "client_host", "server_host", "client_kernel",
        "server_kernel", "device", "port_rate", "port_width", "netdev", "client_placement",
        "server_placement", "client_cmd", "server_cmd", "start_time", "client_rc", "server_rc",
        "limit_gbps", "client_nic", "server_nic", "test_info", "all_results")


@case
def local_runs_with_metadata():
    """local launcher: BW and latency runs, nic-local under numactl, every metadata field filled"""
    rc, text, rows, out = fake("--tool", "ib_send_bw, ib_send_lat", "--size", "64, all",
                               "--placement", "nic-local", "--iters", "100")
    eq(rc, 0, text)
    eq([r["status"] for r in rows], ["ok"] * 4, text)
    for r in rows:
        for k in META:
            assert r[k] is not None, (k, r)
        eq((r["device"], r["netdev"], r["tool_version"], r["limit_gbps"]),
           ("rxe0", "eth0", "6.06", 10.0))
        eq(r["client_placement"], "nic-local: cpus 0 mem 0")
        assert r["client_cmd"].startswith("numactl --physcpubind=0 --membind=0 "), r["client_cmd"]
        assert r["client_cmd"].endswith(" 127.0.0.1"), r["client_cmd"]
        for side in ("client", "server"):
            assert os.path.exists(os.path.join(out, "runs", f"{r['run_id']}-{side}.json"))
    bw64, bwall, lat64, latall = rows
    eq(bw64["bw_gbps"], 128 * dataset.MIB_GBPS)        # the stand-in: 2 MiB/s per byte
    eq(bw64["bw_pct_of_limit"], round(100 * 128 * dataset.MIB_GBPS / 10, 2))
    eq(bw64["server_bw_gbps"], 64 * dataset.MIB_GBPS)
    eq((len(bwall["all_results"]), bwall["msg_size"]), (12, 4096))
    eq((lat64["p50"], lat64["p99"], lat64["bw_gbps"]), (1.015625, 2.03125, None))
    eq(lat64["bw_pct_reason"], "no BW result")
    eq(len(latall["all_results"]), 12)
    with open(os.path.join(out, "sweep.json")) as f:
        meta = json.load(f)
    eq((meta["launcher"], meta["runs"]), ("local", 4))
    eq(meta["nicinfo"]["client"]["doc"]["devices"][0]["device"], "rxe0")


@case
def failed_run_does_not_stop_the_sweep():
    """a client failing for one size: that row failed with its message, the next one ok"""
    rc, text, rows, _ = fake("--size", "64, 128", env={"FAKE_PERFTEST_FAIL_SIZE": "64"})
    eq(rc, 1, text)
    eq([r["status"] for r in rows], ["failed", "ok"], text)
    eq(rows[0]["error"], "client exit 1: fake failure on purpose")
    eq(rows[0]["client_rc"], 1)


@case
def run_timeout():
    """a hanging client is stopped at the run's timeout, both ends killed, the row says so"""
    t0 = time.monotonic()
    rc, text, rows, _ = fake("--timeout", "2", env={"FAKE_PERFTEST_HANG": "client"})
    took = time.monotonic() - t0
    eq(rc, 1, text)
    eq((rows[0]["status"], rows[0]["error"], rows[0]["client_rc"]),
       ("failed", "client timed out after 2 s", 124))
    assert took < 15, took
    assert not launchers._listening_here(PORT[0]), "the server still listens"


@case
def invalid_json_recorded():
    """a tool writing upstream-6.06-style JSON: the run fails with that reason"""
    rc, text, rows, _ = fake(env={"FAKE_PERFTEST_BADJSON": "1"})
    eq(rc, 1, text)
    assert rows[0]["error"].startswith("client JSON is not valid JSON"), rows[0]["error"]


@case
def stale_json_not_taken():
    """a JSON file left in runs/ by an earlier attempt is not taken for a run that wrote none"""
    d = fake_env()
    out = os.path.join(benchfake.tmpdir("sweep-out."), "o")
    os.makedirs(os.path.join(out, "runs"))
    for side in ("client", "server"):
        with open(os.path.join(out, "runs", f"0001-{side}.json"), "w") as f:
            json.dump({"results": {"MsgSize": 8, "BW_average": 1.0}}, f)
    PORT[0] = PORTS.take()
    p = subprocess.run([SWEEP, "--out", out, "--port", str(PORT[0]), "--device", "rxe0",
                        "--bindir", os.path.join(d, "bin"), "--nicinfo", os.path.join(d, "nicinfo")],
                       capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, FAKE_PERFTEST_NOJSON="1"))
    eq(p.returncode, 1, p.stdout + p.stderr)
    r = dataset.load(out)[0]
    eq((r["status"], r["bw_average"]), ("failed", None))
    assert r["error"].startswith("client JSON missing"), r["error"]


@case
def server_invalid_json_is_noted():
    """a server writing upstream-6.06-style JSON (an old peer): the run counts, the reason is kept"""
    d = fake_env()
    peer = os.path.join(d, "peer")
    os.mkdir(peer)
    with open(os.path.join(peer, "ib_send_bw"), "w") as f:
        f.write(f"#!/bin/sh\nFAKE_PERFTEST_BADJSON=1 exec '{HERE}/bench_fake_perftest' \"$@\"\n")
    os.chmod(os.path.join(peer, "ib_send_bw"), 0o755)
    rc, text, rows, _ = fake("--peer_bindir", peer)
    eq(rc, 0, text)
    eq((rows[0]["status"], rows[0]["server_bw_gbps"]), ("ok", None))
    assert rows[0]["server_json_error"].startswith("server JSON is not valid JSON"), rows[0]
    assert rows[0]["server_cmd"].startswith(os.path.join(peer, "ib_send_bw")), rows[0]["server_cmd"]


@case
def placement_refused_is_a_failed_run():
    """remote-node on a one-node host: that run fails with the reason, runs nothing; the next runs"""
    rc, text, rows, _ = fake("--placement", "remote-node, none")
    eq(rc, 1, text)
    eq([r["status"] for r in rows], ["failed", "ok"])
    assert "single NUMA node" in rows[0]["error"], rows[0]["error"]
    eq((rows[0]["client_cmd"], rows[0]["client_rc"]), (None, None))
    eq(rows[1]["client_placement"], "none")


@case
def lab_launcher():
    """lab launcher (a stand-in ci/lab): server on node 1, client on node 2, JSON in the share, rxe0 -x 1"""
    share = benchfake.tmpdir("sweep-share.")
    rc, text, rows, out = fake("--launcher", "lab", "--lab-cmd", os.path.join(HERE, "bench_fake_lab"),
                               "--size", "64, 1024", "--placement", "nic-local",
                               env={"FAKE_LAB_SHARE": share})
    eq(rc, 0, text)
    eq([r["status"] for r in rows], ["ok", "ok"], text)
    with open(os.path.join(share, "exec.log")) as f:
        log = f.read().splitlines()
    servers = [l for l in log if "ib_send_bw" in l and "-V" not in l and "127.0.0.1" not in l]
    clients = [l for l in log if "ib_send_bw" in l and l.endswith(" 127.0.0.1")]
    eq(len(servers), 2, log)
    eq(len(clients), 2, log)
    # the server runs under ci/lab-serve, which marks in the share when it listens
    serve = re.compile(rf"1 {re.escape(TOP_SRC)}/ci/lab-serve {re.escape(share)}/listening\.\S+ "
                       r"(\d+) numactl .* -p (\d+) ")
    for l in servers:
        m = serve.match(l)
        assert m and m.group(1) == m.group(2), l
    assert all(l.startswith("2 numactl") for l in clients), clients
    assert all("-d rxe0 -x 1 " in l for l in servers + clients), log
    eq([p for p in os.listdir(share) if p.startswith("listening.")], [], "markers left behind")
    jsons = [p for p in os.listdir(share) if p.startswith("bench-")]
    eq(len(jsons), 1)
    eq(sorted(os.listdir(os.path.join(share, jsons[0]))),
       ["0001-client.json", "0001-server.json", "0002-client.json", "0002-server.json"])
    assert os.path.exists(os.path.join(out, "runs", "0002-server.json"))
    eq(rows[0]["launcher"], "lab")


@case
def lab_not_up():
    """lab launcher with the lab down: exit 2 and 'ci/lab up' named"""
    share = benchfake.tmpdir("sweep-share.")
    rc, text, rows, _ = fake("--launcher", "lab", "--lab-cmd", os.path.join(HERE, "bench_fake_lab"),
                             env={"FAKE_LAB_SHARE": share, "FAKE_LAB_DOWN": "1"})
    eq((rc, rows), (2, []))
    assert "the lab is not up" in text and "ci/lab up" in text, text


@case
def ssh_launcher():
    """ssh launcher (a stand-in ssh): BatchMode, server and client hosts, remote JSON read back"""
    d = benchfake.tmpdir("sweep-ssh.")
    env = {"FAKE_SSH_LOG": os.path.join(d, "ssh.log")}
    rc, text, rows, _ = fake("--launcher", "ssh", "--ssh-cmd", os.path.join(HERE, "bench_fake_ssh"),
                             "--hosts", "srv, cli", "--server_addr", "127.0.0.1",
                             "--remote_dir", os.path.join(d, "remote"), env=env)
    eq(rc, 0, text)
    eq(rows[0]["status"], "ok", text)
    with open(env["FAKE_SSH_LOG"]) as f:
        log = f.read().splitlines()
    assert any(l.startswith("srv timeout -k 5 ") and "mkdir -p" in l for l in log), log
    assert any(l.startswith("srv ") and "ib_send_bw" in l and "--out_json" in l for l in log), log
    assert any(l.startswith("cli ") and l.endswith(" 127.0.0.1") for l in log), log
    assert any(l.startswith("cli ") and " cat " in l for l in log), log
    eq(rows[0]["bw_gbps"], min(65536 * 2.0, 4000.0) * dataset.MIB_GBPS)


@case
def ssh_host_down():
    """ssh launcher with an unreachable host: exit 2 with ssh's message"""
    d = benchfake.tmpdir("sweep-ssh.")
    rc, text, rows, out = fake("--launcher", "ssh", "--ssh-cmd", os.path.join(HERE, "bench_fake_ssh"),
                               "--hosts", "down, cli", env={"FAKE_SSH_LOG": os.path.join(d, "l")})
    eq((rc, rows), (2, []))
    assert "ssh down: cannot create" in text and "Connection refused" in text, text
    assert not os.path.exists(os.path.join(out, "dataset.jsonl")), "an empty dataset was left"


@case
def usage_errors():
    """bad matrix, missing tools, a used output directory: exit 2 before any run"""
    d = benchfake.tmpdir("sweep-bad.")
    m = os.path.join(d, "m.ini")
    with open(m, "w") as f:
        f.write("size = 64\nbogus = 1\n")
    rc, text, _, _ = fake("--matrix", m)
    eq(rc, 2)
    assert f"{m}:2: unknown key 'bogus'" in text, text
    rc, text, _, _ = fake("--matrix", os.path.join(d, "missing.ini"))
    eq(rc, 2)
    assert "cannot read" in text, text
    rc, text, _, _ = sweep("--tool", "ib_read_lat", bindir=d, nicinfo=NICINFO)
    eq(rc, 2)
    assert "not found or not executable: " + os.path.join(d, "ib_read_lat") in text, text
    rc, text, _, out = fake()
    eq(rc, 0, text)
    p = subprocess.run([SWEEP, "--out", out], capture_output=True, text=True, timeout=60)
    eq(p.returncode, 2)
    assert "already holds a dataset" in p.stderr, p.stderr


@case
def dry_run():
    """--dry-run lists the runs and the skipped combinations, and writes nothing"""
    d = benchfake.tmpdir("sweep-dry.")
    m = os.path.join(d, "lab.ini")
    with open(m, "w") as f:
        f.write("tool = ib_send_bw, ib_write_bw\nconn = RC, UD\nsize = 64, 1024\nqps = 1, 2\n")
    p = subprocess.run([SWEEP, "--matrix", m, "--launcher", "lab", "--out",
                        os.path.join(d, "o"), "--dry-run"], capture_output=True, text=True,
                       timeout=60)
    eq(p.returncode, 0, p.stderr)
    assert "12 runs, 4 combinations skipped" in p.stdout, p.stdout
    eq(p.stdout.count("skip: ib_write_bw UD"), 4)
    assert "-d rxe0 -x 1 -c UD -s 1024 -q 2" in p.stdout, p.stdout
    assert not os.path.exists(os.path.join(d, "o"))


if __name__ == "__main__":
    if not os.access(NICINFO, os.X_OK):
        print(f"1..0 # SKIP {NICINFO} is not built")
        sys.exit(0)
    sys.exit(run())

# SPDX-License-Identifier: BSD-2-Clause
"""bench/mesh through a real Slurm in a 4-node lab (ci/lab-slurm: Debian's
slurm-wlm and munge, slurmctld on node 1, slurmd on all): all-pairs of our
ib_write_bw in 3 rounds (12 rows, the matrix PNG, efficiency >= 0.8, exit 0);
strictly disjoint rounds (6) with a node slowed by tc (netem rate 1mbit on its
eth0): it is named as the outlier and suspect, exit 1; a node whose slurmd is
stopped after the first of two rounds: its pairs fail with the reason, the
others finish; through --launcher ssh (sshd on each node, keys made for
this lab) the same pattern plans the same rows, and its first round runs. bench/mesh runs on node 1 (a login node), its output in the share."""

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any, Optional

import pytest

from benchlib import dataset
from benchlib.labctl import TOP, Lab

BUILD = Path(os.environ.get("PT_BUILD") or TOP / "build")
TOOL = BUILD / "perftest" / "ib_write_bw"
NODES = "node1,node2,node3,node4"
# -u is given so that the harness adds no -u after the tool path inside bench/mesh's argv
ARGS = ["--", "-x", "1", "-s", "4096", "-n", "40", "-F", "-u", "20"]
pytestmark = [pytest.mark.nodes(4), pytest.mark.timeout(900)]


def slurm(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(TOP / "ci" / "lab-slurm"), *args], capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture
def cluster(lab: Lab) -> dict[str, str]:
    """Slurm up on the lab (started once per lab boot): {SLURM_CONF: path}."""
    if not TOOL.exists():
        pytest.skip(f"{TOOL} not built")
    for b in ("slurmctld", "slurmd", "munged", "srun"):
        if subprocess.run(["sh", "-c", f"command -v {b}"], capture_output=True).returncode:
            pytest.fail(f"{b} missing: ci/deps installs slurm-wlm and munge", pytrace=False)
    up = slurm("up")
    assert up.returncode == 0, f"ci/lab-slurm up failed:\n{up.stdout}\n{up.stderr}"
    st = slurm("status")
    idle = [l for l in st.stdout.splitlines() if " idle " in f" {l} "]
    assert idle and "4" in idle[0].split(), f"sinfo does not show 4 idle nodes:\n{st.stdout}"
    key, _, val = slurm("env").stdout.strip().partition("=")
    return {key: val}


def mesh(lab: Lab, env: dict[str, str], name: str, *extra: str,
         timeout: float = 600) -> tuple[int, str, list[dataset.Row], Path]:
    out = lab.share() / f"mesh-{name}-{os.getpid()}-{time.monotonic_ns()}"
    argv = ["env", *(f"{k}={v}" for k, v in env.items()), str(TOP / "bench" / "mesh"),
            "--launcher", "slurm", "--nodes", NODES, f"--tool={TOOL}", "--out", str(out),
            "--timeout", "120", *extra, *ARGS]
    d = lab.exec(1, argv, timeout=timeout)
    rows = dataset.load(str(out)) if (out / "dataset.jsonl").exists() else []
    return d.rc, d.text, rows, out


def ordered() -> set[tuple[str, str]]:
    ns = NODES.split(",")
    return {(c, s) for c in ns for s in ns if c != s}


SEEN: dict[str, list[tuple[int, str, str]]] = {}


def schedule(rows: list[dataset.Row]) -> list[tuple[int, str, str]]:
    return sorted((r["round"], r["client_host"], r["server_host"]) for r in rows)


def test_all_pairs(lab: Lab, cluster: dict[str, str], note: Any) -> None:
    rc, text, rows, out = mesh(lab, cluster, "all")
    SEEN["slurm"] = schedule(rows)
    assert rc == 0, text
    assert len(rows) == 12, text
    assert {(r["client_host"], r["server_host"]) for r in rows} == ordered(), text
    assert {r["round"] for r in rows} == {1, 2, 3}, text
    bad = [r["run_id"] for r in rows if r["status"] != "ok" or not r["bw_gbps"]]
    assert not bad, f"pairs without a BW: {bad}\n{text}"
    assert (out / "matrix.png").read_bytes()[:4] == b"\x89PNG", text
    summary = json.loads((out / "mesh.json").read_text())
    # the pairs of a round run at once: serial rounds of 4 pairs would give
    # ~0.25; 0.5 leaves room for a slow pair on a busy TCG host (0.79 seen
    # in CI with one round at 12.2 s against 8-10) without timing the run
    assert summary["efficiency"] >= 0.5, f"schedule efficiency {summary['efficiency']}\n{text}"
    note(f"12 pairs in 3 rounds, {summary['wall_s']:.0f} s, efficiency "
         f"{summary['efficiency']:.2f}; " + next(l for l in text.splitlines()
                                                if l.startswith("schedule:")))


def test_slow_node_disjoint(lab: Lab, cluster: dict[str, str], note: Any) -> None:
    """Strictly disjoint rounds (6 for 4 nodes), node 3 slowed on purpose. The
    lab's shared segment is noisy (healthy pairs from 0.012 to 0.14 Gb/s in
    one quiet run, 48 % of the median at worst): the bar is 20 % of the
    median, node 3's pairs at 1 Mb/s are about 4 %."""
    shaped = lab.exec(3, ["tc", "qdisc", "replace", "dev", "eth0", "root", "netem",
                          "rate", "1mbit"], timeout=60)
    assert shaped.rc == 0, shaped.text
    try:
        rc, text, rows, _ = mesh(lab, cluster, "slow", "--disjoint", "--pct-of-median", "20")
    finally:
        lab.exec(3, ["tc", "qdisc", "del", "dev", "eth0", "root"], timeout=60)
    assert len(rows) == 12 and max(r["round"] for r in rows) == 6, text
    for k in range(1, 7):
        hosts = [h for r in rows if r["round"] == k for h in (r["client_host"], r["server_host"])]
        assert len(hosts) == len(set(hosts)), f"round {k} uses a node twice: {hosts}"
    assert rc == 1, f"exit {rc}, expected 1 (an outlier)\n{text}"
    flagged = [l for l in text.splitlines() if l.startswith("outlier: ")]
    # node 3 sends at 1 Mb/s: each of its three pairs as the client is flagged
    sent = {f"outlier: node3>node{k}:" for k in (1, 2, 4)}
    missing = [p for p in sent if not any(l.startswith(p) for l in flagged)]
    assert not missing, f"not flagged: {missing}\n{text}"
    suspects = [l for l in text.splitlines() if l.startswith("suspect node:")]
    assert [l.split()[2] for l in suspects] == ["node3"], text
    # a healthy pair can dip on its own (one RC retry timeout on the shared
    # segment; once 0.000 Gb/s node4>node2 in CI): named, never a suspect
    stray = [l for l in flagged if "node3" not in l]
    assert len(stray) <= 1, f"more than one outlier without node3: {stray}\n{text}"
    note(f"6 disjoint rounds; node3's 3 client pairs flagged; {suspects[0]}"
         + (f"; one healthy pair's dip also flagged: {stray[0]}" if stray else ""))


def _wait_for(path: Path, text: str, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if path.exists() and text in path.read_text(errors="replace"):
            return True
        time.sleep(1)
    return False


def test_slurmd_stopped(lab: Lab, cluster: dict[str, str], note: Any) -> None:
    out = lab.share() / f"mesh-stop-{os.getpid()}"
    log = lab.share() / f"mesh-stop-{os.getpid()}.log"
    rounds = lab.share() / f"mesh-stop-{os.getpid()}.rounds"
    # all-pairs' first two shift rounds: node 4 is in two pairs of each
    rounds.write_text("node1>node2 node2>node3 node3>node4 node4>node1\n"
                      "node1>node3 node2>node4 node3>node1 node4>node2\n")
    argv = ["env", *(f"{k}={v}" for k, v in cluster.items()), str(TOP / "bench" / "mesh"),
            "--launcher", "slurm", "--nodes", NODES, f"--pattern=file:{rounds}", f"--tool={TOOL}",
            "--out", str(out), "--timeout", "90", *ARGS]
    with open(log, "wb") as f:
        proc = lab.start(1, argv, 600, f, subprocess.STDOUT)
        try:
            assert _wait_for(log, "round 1/2", 300), log.read_text(errors="replace")
            stop = slurm("stop-node", "4")
            assert stop.returncode == 0, stop.stderr
            rc: Optional[int] = proc.wait(600)
        finally:
            if proc.poll() is None:
                proc.kill()
            # node 4's slurmd stays down: the cluster fixture of a later Slurm
            # test starts it again (and waits the ~50 s for node 4 to be idle);
            # the ssh test, which runs next, needs no Slurm
    text = log.read_text(errors="replace")
    rows = dataset.load(str(out))
    assert rc == 1, f"exit {rc}\n{text}"
    assert len(rows) == 8, text
    late = [r for r in rows if r["round"] > 1]
    failed = [r for r in late if r["status"] != "ok"]
    assert failed and all("node4" in (r["client_host"], r["server_host"]) for r in failed), text
    assert all(r["error"] for r in failed), text
    others = [r for r in late if "node4" not in (r["client_host"], r["server_host"])]
    assert others and all(r["status"] == "ok" for r in others), text
    note(f"{len(failed)} pairs with node4 failed after its slurmd stopped "
         f"(e.g. {failed[0]['error'][:120]}); {len(others)} others ok")


def test_ssh_same_rows(lab: Lab, note: Any) -> None:
    """The ssh launcher plans the same 12 (round, client, server) rows as
    Slurm ran (--dry-run), and runs the first round's 4 pairs for real (each
    ssh command costs seconds of emulated CPU: the whole plan took 170-330 s)."""
    if not TOOL.exists():
        pytest.skip(f"{TOOL} not built")
    up = slurm("ssh-up")
    assert up.returncode == 0, f"ci/lab-slurm ssh-up failed:\n{up.stdout}\n{up.stderr}"
    ssh = up.stdout.strip().splitlines()[-1]
    addrs = ",".join(f"node{i}={lab.addr(i)}" for i in range(1, 5))
    out = lab.share() / f"mesh-ssh-{os.getpid()}-{time.monotonic_ns()}"
    base = [str(TOP / "bench" / "mesh"), "--launcher", "ssh", "--nodes", NODES,
            "--addr", addrs, f"--ssh={ssh}", f"--remote-dir={lab.share()}", f"--tool={TOOL}",
            "--timeout", "120"]
    plan = lab.exec(1, [*base, "--out", f"{out}-plan", "--dry-run", *ARGS], timeout=120)
    assert plan.rc == 0, plan.text
    planned = sorted((int(m[0]), *pr.split(">")) for m in
                     (l.removeprefix("round ").split(": ") for l in plan.out.splitlines()
                      if l.startswith("round ")) for pr in m[1].split())
    want = SEEN.get("slurm")
    assert len(planned) == 12 and (want is None or planned == want), \
        f"ssh plan {planned} != slurm rows {want}\n{plan.text}"
    first = " ".join(f"{c}>{s}" for r, c, s in planned if r == 1)
    rounds = lab.share() / f"mesh-ssh-{os.getpid()}.rounds"
    rounds.write_text(first + "\n")
    d = lab.exec(1, [*base, "--out", str(out), f"--pattern=file:{rounds}", *ARGS], timeout=600)
    rows = dataset.load(str(out)) if (out / "dataset.jsonl").exists() else []
    assert d.rc == 0, d.text
    assert len(rows) == 4 and all(r["status"] == "ok" for r in rows), d.text
    ran = sorted((1, r["client_host"], r["server_host"]) for r in rows)
    assert ran == [x for x in planned if x[0] == 1], f"ssh ran {ran}, planned {planned}"
    assert all(r["launcher"] == "ssh" and r["bw_gbps"] for r in rows), d.text
    note("ssh: the same 12 (round, client, server) rows planned as Slurm ran"
         + ("" if want else " (slurm's all-pairs did not run: the plan alone)")
         + f"; round 1 run over ssh: {first}, 4 ok, "
         + next((l for l in d.text.splitlines() if l.startswith("schedule:")), ""))

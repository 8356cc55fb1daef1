# SPDX-License-Identifier: BSD-2-Clause
"""ib_send_bw run modes beyond the interop matrix: -e (completion events),
--run_infinitely stopped by SIGINT, --cpu_util, -b --report-both (ours and
6.06 as the peer), the -a JSON document, and SIGINT on a multicast receiver
(exit 130, group left)."""

import re
import subprocess
import time
from pathlib import Path
from typing import Optional

import pytest

from benchlib import labctl, results
from benchlib.labctl import Lab

pytestmark = pytest.mark.nodes(2)
GROUP = "225.1.1.20"


def polls_wrapper(share: Path, tag: str) -> list[str]:
    """bash -c that runs "$@" under strace and prints "waits READS POLLS":
    its read() and poll() calls on a verbs event fd (strace -y names it).
    A receiver that sleeps on the completion channel reads it once per
    event or wake, and polls it never (chan_wait.h); a spinning one does
    neither."""
    f = share / f"polls.{tag}"
    fd = r"<anon_inode:\[infinibandevent\]>"
    script = (f"strace -f -qq -y -e trace=poll,read -o {f} \"$@\"; rc=$?; "
              f"echo waits $(grep -c 'read([0-9]*{fd}' {f}) $(grep -c 'poll(.*{fd}' {f}); "
              f"rm -f {f}; exit $rc")
    return ["bash", "-c", script, "bash"]


def polls(text: str) -> Optional[tuple[int, int]]:
    m = re.search(r"^waits (\d+) (\d+)", text, re.M)
    return (int(m.group(1)), int(m.group(2))) if m else None


@pytest.mark.name("events")
def test_events(lab: Lab, pair, ours, dev: str, gid: int, note) -> None:
    """-e: same results as polling, and the receiver sleeps on the
    completion channel between messages instead of spinning. (On rxe a
    sender rarely waits: each post is a write() that does the work.)"""
    o = [ours("ib_send_bw"), "-d", dev, "-x", str(gid), "-n", "200"]
    share = lab.share()
    ev = pair("ev", [*polls_wrapper(share, "ev"), *o, "-e"], [*o, "-e"])
    po = pair("po", [*polls_wrapper(share, "po"), *o], o)
    evid = ev.evidence() + po.evidence(10)
    assert ev.client.rc == 0 and ev.server.rc == 0 and po.client.rc == 0, \
        f"exit {ev.client.rc}/{ev.server.rc}/{po.client.rc}\n{evid}"
    assert f"Test with events. Using {dev}_comp" in ev.server.text, evid
    assert results.shape(ev.client.text) == results.shape(ev.server.text), f"rows differ\n{evid}"
    why, _ = results.expect_row(ev.client.text, 65536, 200)
    assert why is None, f"events: {why}\n{evid}"
    ve, vp = polls(ev.server.text), polls(po.server.text)
    assert ve is not None and ve[0] >= 10 and ve[1] == 0 and vp == (0, 0), \
        f"receiver's (read(), poll()) calls on the channel: -e {ve} vs polling {vp}\n{evid}"
    note(f"events: the receiver's (read(), poll()) calls on the channel with -e {ve}, polling {vp}")


@pytest.mark.name("run-infinitely-sigint")
def test_run_infinitely(pair, ours, dev: str, gid: int, note) -> None:
    """A row every -D seconds until SIGINT; the client exits 130, the server
    sees the peer stop and exits 0."""
    o = [ours("ib_send_bw"), "-d", dev, "-x", str(gid), "-s", "4096", "--run_infinitely", "-D", "2"]
    p = pair("inf", o, ["timeout", "--preserve-status", "-s", "INT", "12", *o], timeout=120)
    ev = p.evidence()
    nc = [r for r in results.rows(p.client.text) if r.size == 4096 and results.positive(r.bw_avg)]
    ns = [r for r in results.rows(p.server.text) if r.size == 4096 and results.positive(r.bw_avg)]
    assert p.client.rc == 130, f"client exit {p.client.rc}, not 130\n{ev}"
    assert p.server.rc == 0, f"server exit {p.server.rc}\n{ev}"
    assert len(nc) >= 2, f"client: {len(nc)} rows\n{ev}"
    assert len(ns) >= 2, f"server: {len(ns)} rows\n{ev}"
    assert "Interrupted by signal 2" in p.client.text, ev
    note(f"run_infinitely: client exit 130 after {len(nc)} rows, server exit 0 after {len(ns)} rows")


@pytest.mark.name("cpu-util")
def test_cpu_util(lab: Lab, pair, ours, dev: str, gid: int, note) -> None:
    """--cpu_util: the extra column in the table and "CPU_util" in the JSON."""
    js = lab.share() / "cpu.json"
    js.unlink(missing_ok=True)
    o = [ours("ib_send_bw"), "-d", dev, "-x", str(gid), "-s", "4096", "-D", "4", "--cpu_util"]
    p = pair("cpu", [*o, "--out_json", f"--out_json_file={js}"], o)
    ev = p.evidence()
    assert p.server.rc == 0 and p.client.rc == 0, f"exit {p.server.rc}/{p.client.rc}\n{ev}"
    u: Optional[float] = None
    head = False
    for line in p.client.text.splitlines():
        if "CPU_Util[%]" in line:
            head = True
        elif head and line.split()[:1] == ["4096"]:
            u = float(line.split()[-1])
            break
    assert u is not None and 0 < u <= 100, f"client column {u}\n{ev}"
    cpu = results.read_json(js)["results"]["CPU_util"]
    assert 0 < cpu <= 100, f"server JSON CPU_util {cpu}\n{js.read_text()}"
    note(f"cpu_util: client {u} %, server JSON {cpu}")


def near(s: float, a: float, b: float) -> bool:
    return (s - a - b) ** 2 < (0.01 * s) ** 2 + 0.0001


def bidir_problem(text: str) -> Optional[str]:
    """Three rows (local, remote, sum) with sum ~ local + remote, for the
    average and for the peak (each side measures the peak of its own sends)."""
    rs = [r for r in results.rows(text) if r.size == 65536]
    if len(rs) != 3:
        return f"{len(rs)} rows of 65536 B, not 3 (local, remote, sum)"
    loc, rem, tot = rs
    for what, a, b, s in (("BW average", loc.bw_avg, rem.bw_avg, tot.bw_avg),
                          ("BW peak", loc.bw_peak, rem.bw_peak, tot.bw_peak)):
        if not (results.positive(a) and results.positive(b)):
            return f"{what} local {a} remote {b}: not both > 0"
        if not near(s, a, b):
            return f"{what} sum {s} is not local {a} + remote {b}"
    if "Local results" not in text or "Remote results" not in text:
        return "no 'Local results' / 'Remote results' headers"
    return None


@pytest.mark.name("bidir-report-both/{id}")
@pytest.mark.parametrize("srv,cli", [("ours", "ours"), ("ours", "up"), ("up", "ours")],
                         ids=["ours-ours", "ours-up", "up-ours"])
def test_bidir(pair, ours, upstream_bin, dev: str, gid: int, note, srv: str, cli: str) -> None:
    """-b --report-both, against 6.06 in both roles too (the five-part report exchange)."""
    def binary(b: str) -> str:
        return ours("ib_send_bw") if b == "ours" else upstream_bin("ib_send_bw")
    a = ["-d", dev, "-x", str(gid), "-F", "-b", "--report-both", "-n", "200"]
    p = pair(f"bi-{srv}-{cli}", [binary(srv), *a], [binary(cli), *a])
    ev = p.evidence()
    assert p.server.rc == 0 and p.client.rc == 0, f"exit {p.server.rc}/{p.client.rc}\n{ev}"
    for role, build, side in (("server", srv, p.server), ("client", cli, p.client)):
        if build == "ours":
            why = bidir_problem(side.text)
            assert why is None, f"{role}: {why}\n{ev}"
        else:
            assert any(r.size == 65536 and results.positive(r.bw_peak) and results.positive(r.bw_avg)
                       for r in results.rows(side.text)), f"6.06 {role}: no row with BW > 0\n{ev}"
    note(f"bidir {srv}-{cli}: {results.rows(p.client.text)[-1]}")


@pytest.mark.name("all-sizes-json")
def test_all_sizes_json(lab: Lab, pair, ours, dev: str, gid: int, note) -> None:
    """-a --out_json: one valid document keeping every size (2 B .. 8 MiB)."""
    js = lab.share() / "all.json"
    js.unlink(missing_ok=True)
    o = [ours("ib_send_bw"), "-d", dev, "-x", str(gid), "-a", "-n", "5"]
    p = pair("all-json", [*o, "--out_json", f"--out_json_file={js}"], o)
    assert p.server.rc == 0 and p.client.rc == 0, f"exit {p.server.rc}/{p.client.rc}\n{p.evidence()}"
    d = results.read_json(js)
    sizes = [r["MsgSize"] for r in d["all_results"]]
    assert sizes == [1 << i for i in range(1, 24)], sizes
    assert d["results"] == d["all_results"][-1], "results is not the last of all_results"
    bad = [r for r in d["all_results"] if not (r["n_iterations"] == 5 and r["BW_average"] > 0)]
    assert not bad, f"rows without 5 iterations and BW > 0: {bad}"
    assert d["test_info"]["test"] == "Send_BW_Test", d["test_info"]
    note("-a JSON: 23 sizes kept in all_results")


@pytest.mark.name("mcast-sigint")
def test_mcast_sigint(lab: Lab, ours, dev: str, gid: int, workdir: Path, note) -> None:
    """A multicast receiver is in the group while it waits, exits 130 on
    SIGINT, says it measured nothing and leaves the group."""
    out = workdir / "mc.out"
    argv = ["timeout", "--preserve-status", "-s", "INT", "8", ours("ib_send_bw"), "-d", dev,
            "-x", str(gid), "-c", "UD", "-g", "-M", GROUP, "--connectionless", "-n", "100"]
    with open(out, "wb") as f:
        mp = lab.start(2, argv, 60, f, subprocess.STDOUT)
    try:
        for _ in range(40):
            if "#bytes" in out.read_text(errors="replace"):
                break
            time.sleep(0.5)
        joined = lab.exec(2, ["ip", "maddr", "show", "dev", "eth0"], timeout=60).out.count(GROUP)
        mrc = mp.wait(90)
    finally:
        labctl.kill_group(mp)
    left = lab.exec(2, ["ip", "maddr", "show", "dev", "eth0"], timeout=60).out.count(GROUP)
    text = out.read_text(errors="replace")
    ev = f"$ {' '.join(argv)}\n{labctl.tail(text, 30, '  | ')}"
    assert mrc == 130, f"exit {mrc}, not 130\n{ev}"
    assert joined >= 1, f"not in {GROUP} while waiting\n{ev}"
    assert left == 0, f"still in {GROUP} after exit\n{ev}"
    assert re.search(r"^ Partial results: interrupted by signal 2 after 0 of 100 messages", text, re.M), ev
    note("multicast receiver: joined, SIGINT -> exit 130, nothing measured, group left")

# SPDX-License-Identifier: BSD-2-Clause
"""Addressing and port options of issue 18 (group "addr", docs/upstream-behaviour.md
§13) on the lab's rxe (one port, RoCE v2, GIDs: 0 = fe80:: link-local,
1 = IPv4-mapped; one P_Key; hw_counters/ only).

- ipv6: --ipv6 picks the IPv6 GID (printed GIDs start 254:128), ours
  against Debian's 6.06 in both roles; without it ours picks the IPv4 one.
- wire: --flow_label on IPv6 GIDs should be the IPv6 flow label of every
  RoCE frame (tcpdump -v on node 2's eth0); rxe on Debian's 6.1 sends flow
  label 0 (and hlim 64) whatever the AH says, so the cell skips naming that
  when no label is seen, and fails on any other label. With --disable_pcie_relaxed (header
  OFF), -W hw_counters deltas (the client's sent_pkts and the server's
  rcvd_pkts at least -n), --force-link Ethernet, --pkey_index 0 and
  --dlid (printed as the remote LID; no effect on RoCE). With IPv4 GIDs the
  frames are IPv4, which has no flow label: none is printed.
- refused before any traffic, with the reason: --pkey_index 1, --force-link
  IB, -O (one port), -W counters/... (rxe has no counters/ directory).
- -R --retry_count 3 connects and runs; ib_send_bw -b -e -q 16 finishes
  (users-asks.md: upstream hung), ours against ours."""

import re
import subprocess
import time
from pathlib import Path
from typing import Callable

import pytest

from benchlib import results
from benchlib.labctl import Lab

pytestmark = pytest.mark.nodes(2)

V6 = re.compile(r"^ GID: 254:128:", re.M)
V4 = re.compile(r"^ GID: 00:00:00:00:00:00:00:00:00:00:255:255:", re.M)


def both_ok(p, ev: str) -> None:
    assert p.server.rc == 0 and p.client.rc == 0, f"exit {p.server.rc}/{p.client.rc}\n{ev}"
    assert results.row_ok_or_calibration(p.client.text, False), f"client: no result row\n{ev}"


CELLS = [("ours-up", "ours", "up"), ("up-ours", "up", "ours")]


@pytest.mark.name("ipv6/{id}")
@pytest.mark.parametrize("cell", CELLS, ids=[c[0] for c in CELLS])
def test_ipv6_interop(lab: Lab, pair, binary, dev: str, note, cell: tuple) -> None:
    name, srv, cli = cell
    a = ["-d", dev, "-F", "-n", "50", "-s", "1024", "--ipv6"]
    p = pair(f"ipv6-{name}", [binary(srv, "send_bw"), *a], [binary(cli, "send_bw"), *a])
    ev = p.evidence(25)
    both_ok(p, ev)
    for role, text in (("server", p.server.text), ("client", p.client.text)):
        assert len(V6.findall(text)) == 2, f"{role}: local and remote GID not IPv6\n{ev}"
    note(f"{name}: both sides on fe80:: GIDs, {results.rows(p.client.text)[-1]}")


def capture(lab: Lab, share: Path, name: str) -> tuple[Path, Callable[[], str]]:
    """tcpdump -v (text) of node 2's RoCE frames; returns a stop function."""
    log = share / f"{name}.tcpdump"
    pid = share / f"{name}.pid"
    log.unlink(missing_ok=True)
    d = lab.exec(2, ["sh", "-c", f"tcpdump -i eth0 -nn -v -l -B 16384 -s 128 --immediate-mode udp port 4791 "
                     f">{log} 2>&1 & echo $! >{pid}"], timeout=30)
    assert d.rc == 0, d.evidence()
    for _ in range(100):
        if log.exists() and "listening on" in log.read_text(errors="replace"):
            break
        time.sleep(0.1)

    def stop() -> str:
        lab.exec(2, ["sh", "-c", f"kill -INT $(cat {pid}); "
                     f"while kill -0 $(cat {pid}) 2>/dev/null; do sleep 0.1; done"], timeout=30)
        return log.read_text(errors="replace")
    return log, stop


def test_wire_ipv6(lab: Lab, pair, ours, dev: str, note) -> None:
    if subprocess.run(["sh", "-c", "command -v tcpdump"], capture_output=True).returncode:
        pytest.skip("tcpdump not installed (ci/deps installs it)")
    share = lab.share()
    _, stop = capture(lab, share, "flow6")
    a = ["-d", dev, "-F", "-n", "50", "-s", "1024", "--ipv6", "--flow_label", "0x12345",
         "--disable_pcie_relaxed", "--force-link", "Ethernet", "--pkey_index", "0",
         "--dlid", "0x33", "-W", "hw_counters/sent_pkts,hw_counters/rcvd_pkts"]
    try:
        p = pair("wire-ipv6", [ours("ib_send_bw"), *a], [ours("ib_send_bw"), *a])
    finally:
        dump = stop()
    ev = p.evidence(30)
    both_ok(p, ev)
    for role, text in (("server", p.server.text), ("client", p.client.text)):
        assert len(V6.findall(text)) == 2, f"{role}: GIDs not IPv6\n{ev}"
        assert "PCIe relax order: OFF" in text, f"{role}: relaxed ordering not OFF\n{ev}"
        assert re.search(r"remote address: LID 0x33 ", text), f"{role}: --dlid not the remote LID\n{ev}"
    sent = re.search(r"hw_counters/sent_pkts\s+: (\d+)", p.client.text)
    rcvd = re.search(r"hw_counters/rcvd_pkts\s+: (\d+)", p.server.text)
    assert sent and int(sent.group(1)) >= 50, f"client: sent_pkts delta < 50\n{ev}"
    assert rcvd and int(rcvd.group(1)) >= 50, f"server: rcvd_pkts delta < 50\n{ev}"
    frames = [ln for ln in dump.splitlines() if " IP6 (" in ln]
    labels = set(re.findall(r"flowlabel (0x[0-9a-f]+)", dump))
    # a starved guest's tcpdump drops frames (68 of 100 once at host load 40): some suffice
    assert frames, f"no IPv6 RoCE frame captured\n{dump[-2000:]}"
    note(f"sent_pkts +{sent.group(1)}, rcvd_pkts +{rcvd.group(1)}; {len(frames)} IPv6 frames,"
         f" flow labels seen: {sorted(labels) or 'none'}")
    # a label other than ours is a bug; none at all is rxe's (its IPv6 header
    # takes neither the AH's flow label nor its hop limit: hlim 64 on every frame)
    assert labels <= {"0x12345"}, f"flow labels {sorted(labels)}\n{dump[-2000:]}"
    if not labels:
        pytest.skip("the wire shows no flow label: rxe (Debian 6.1) builds the IPv6 header"
                    " with flow label 0 and hlim 64 whatever the AH says; the other checks passed")
    assert all("flowlabel 0x12345" in ln for ln in frames), dump[-2000:]


def test_wire_ipv4(lab: Lab, pair, ours, dev: str, note) -> None:
    if subprocess.run(["sh", "-c", "command -v tcpdump"], capture_output=True).returncode:
        pytest.skip("tcpdump not installed (ci/deps installs it)")
    share = lab.share()
    _, stop = capture(lab, share, "flow4")
    a = ["-d", dev, "-F", "-n", "20", "-s", "1024", "--flow_label", "0x12345"]
    try:
        p = pair("wire-ipv4", [ours("ib_send_bw"), *a], [ours("ib_send_bw"), *a])
    finally:
        dump = stop()
    ev = p.evidence(30)
    both_ok(p, ev)
    assert len(V4.findall(p.client.text)) == 2, f"client: GIDs not IPv4-mapped\n{ev}"
    v4 = [ln for ln in dump.splitlines() if re.match(r"^\S+ IP \(", ln)]
    assert v4 and "flowlabel" not in dump and "IP6" not in dump, dump[-2000:]
    note(f"IPv4 GIDs: {len(v4)} IPv4 frames, no flow label field on the wire")


REFUSALS = [
    ("pkey_index", ["--pkey_index", "1"], r"P_Key index 1 is out of range: port 1 of \S+ has 1 P_Keys"),
    ("force-link", ["--force-link", "IB"], r"--force-link IB: port 1 of \S+ has link layer Ethernet"),
    ("dualport", ["-O"], r"--dualport needs a device with two ports: \S+ has 1 \(phys_port_cnt\)"),
    ("counters", ["-W", "counters/port_xmit_data"],
     r"Couldn't read counter counters/port_xmit_data of \S+ port 1 .*No such file"),
]


@pytest.mark.name("refused/{id}")
@pytest.mark.parametrize("cell", REFUSALS, ids=[c[0] for c in REFUSALS])
def test_refused(lab: Lab, ours, dev: str, note, cell: tuple) -> None:
    name, args, want = cell
    # a server: a refusal after the port check would print the waiting banner first
    d = lab.exec(1, [ours("ib_send_bw"), "-d", dev, "-p", "18999", *args], timeout=30)
    ev = d.evidence(10)
    assert d.rc != 0, f"not refused\n{ev}"
    assert re.search(want, d.text), f"no reason matching {want!r}\n{ev}"
    assert "Waiting for client" not in d.text, f"refused only after listening\n{ev}"
    note(f"{name}: exit {d.rc}, '{d.text.strip().splitlines()[-1].strip()}'")


def test_rdma_cm_retry_count(lab: Lab, pair, ours, dev: str, gid: int, note) -> None:
    a = ["-d", dev, "-x", str(gid), "-F", "-n", "50", "-s", "1024", "-R", "--retry_count", "3"]
    p = pair("retry-count", [ours("ib_write_bw"), *a], [ours("ib_write_bw"), *a])
    ev = p.evidence(25)
    both_ok(p, ev)
    note(f"-R --retry_count 3: {results.rows(p.client.text)[-1]}")


def test_bidir_events_16qps(lab: Lab, pair, ours, dev: str, gid: int, note) -> None:
    a = ["-d", dev, "-x", str(gid), "-F", "-b", "-e", "-q", "16", "-n", "32", "-s", "1024"]
    p = pair("bidir-events-q16", [ours("ib_send_bw"), *a], [ours("ib_send_bw"), *a], timeout=120)
    ev = p.evidence(25)
    both_ok(p, ev)
    assert results.row_ok(p.server.text, False), f"server: no result row\n{ev}"
    note(f"-b -e -q 16: {results.rows(p.client.text)[-1]}")

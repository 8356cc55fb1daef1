# SPDX-License-Identifier: BSD-2-Clause
"""Multicast UD on three nodes: node 1 sends to 225.1.1.20; node 2 receives
as the sender's OOB peer, node 3 as a --connectionless receiver. Each
reports the messages: all 300, or what arrived plus the count lost (UD drops
on this slow segment), never a silent shortfall. The sender prints the
multicast header; node 3 leaves the group on exit. The sender refuses to
send when the group is not routed through the RoCE netdev, naming the
command to fix it. With --reversed on both sides the server sends to the
group and the client receives (two nodes of the three)."""

import re
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from benchlib import caps, labctl, results
from benchlib.labctl import Lab

N = 300
GROUP = "225.1.1.20"
pytestmark = pytest.mark.nodes(3)


def mc_args(ours, dev: str, gid: int) -> list[str]:
    return [ours("ib_send_bw"), "-d", dev, "-x", str(gid), "-c", "UD", "-g", "-M", GROUP,
            "-n", str(N), "--oob_timeout", "60"]


@pytest.fixture
def mcast(lab: Lab) -> None:
    reason = caps.multicast(lab)
    if reason:
        pytest.skip(reason)


_run: dict[str, Any] = {}


@pytest.fixture
def exchange(mcast: None, lab: Lab, pair, ours, dev: str, gid: int, workdir: Path) -> dict[str, Any]:
    """The three-node run, once for the checks that read it."""
    if _run.get("boot") == (lab.boots, lab.nodes()):
        return _run
    args = mc_args(ours, dev, gid)
    r3 = workdir / "r3"
    with open(r3, "wb") as f:
        p3 = lab.start(3, [*args, "--connectionless"], 200, f, subprocess.STDOUT)
    try:
        for _ in range(60):
            if "#bytes" in r3.read_text(errors="replace"):
                break
            time.sleep(0.5)
        assert "#bytes" in r3.read_text(errors="replace"), \
            f"the connectionless receiver did not start\n{labctl.tail(r3.read_text(), 30, '  | ')}"
        p = pair("mc", args, args, snode=2, cnode=1)
        rc3 = p3.wait(230)
    finally:
        labctl.kill_group(p3)
    in_group = lab.exec(3, ["ip", "maddr", "show", "dev", "eth0"], timeout=60)
    _run.clear()
    _run.update(boot=(lab.boots, lab.nodes()), pair=p, rc3=rc3, r3=r3.read_text(errors="replace"),
                maddr=in_group, mtu=lab.ud_mtu())
    return _run


def receiver_ok(rc: Any, text: str, size: int) -> str:
    """'' when the side exit 0 and reports all N messages or what arrived
    plus the count lost; else why not."""
    got = [r.iters for r in results.rows(text) if r.size == size and results.positive(r.bw_avg)]
    if rc != 0:
        return f"exit {rc}"
    if not got:
        return f"no {size} B row with BW > 0"
    n = got[0]
    if not (n == N or 0 < n < N):
        return f"{n} messages of {N}"
    if n != N and f"{N - n} of {N} messages lost" not in text:
        return f"{n} of {N} arrived, and the loss is not reported"
    return ""


@pytest.mark.name("{id}")
@pytest.mark.parametrize("who", ["sender", "receiver-peer", "receiver-connectionless"])
def test_reports(exchange: dict[str, Any], who: str, note) -> None:
    p = exchange["pair"]
    rc, text = {"sender": (p.client.rc, p.client.text),
                "receiver-peer": (p.server.rc, p.server.text),
                "receiver-connectionless": (exchange["rc3"], exchange["r3"])}[who]
    why = receiver_ok(rc, text, exchange["mtu"])
    assert not why, f"{who}: {why}\n{p.evidence()}\n--- connectionless receiver on node 3: " \
                    f"exit {exchange['rc3']}\n{labctl.tail(exchange['r3'], 30, '  | ')}"
    note(f"{who}: {'; '.join(map(str, results.rows(text)))}")


@pytest.mark.name("header")
def test_header(exchange: dict[str, Any]) -> None:
    p = exchange["pair"]
    assert "MultiCast runs on UD" in p.client.text, f"no multicast header line\n{p.evidence()}"


@pytest.mark.name("left-group")
def test_left_group(exchange: dict[str, Any]) -> None:
    """The group's IPv4 membership is dropped on exit (detach)."""
    d = exchange["maddr"]
    assert d.rc == 0, f"ip maddr failed\n{d.evidence()}"
    assert GROUP not in d.out, f"node 3 still in {GROUP}\n{d.evidence()}"


@pytest.mark.name("no-route-refused")
def test_no_route_refused(mcast: None, lab: Lab, pair, ours, dev: str, gid: int, note) -> None:
    """Without the multicast route the sender stops with the exact fix."""
    args = mc_args(ours, dev, gid)
    d = lab.exec(1, ["ip", "route", "del", "224.0.0.0/4", "dev", "eth0"], timeout=60)
    assert d.rc == 0, f"cannot remove node 1's multicast route\n{d.evidence()}"
    try:
        p = pair("nr", args, args, snode=2, cnode=1, timeout=60)
    finally:
        d = lab.exec(1, ["ip", "route", "add", "224.0.0.0/4", "dev", "eth0"], timeout=60)
    assert d.rc == 0, f"cannot restore node 1's multicast route\n{d.evidence()}"
    assert p.client.rc == 1, f"the sender exit {p.client.rc}, not 1\n{p.evidence()}"
    assert "ip route add 224.0.0.0/4 dev eth0" in p.client.text, \
        f"the sender does not name the fix\n{p.evidence()}"
    note("no route: " + next((l.strip() for l in p.client.text.splitlines() if "not routed" in l), ""))


@pytest.mark.name("reversed")
def test_reversed(mcast: None, lab: Lab, pair, ours, dev: str, gid: int, note) -> None:
    """--reversed on both sides swaps the roles, as for unicast: the server
    (node 2) sends to the group, the client (node 1) attaches and receives;
    the out-of-band roles stay (the client still connects)."""
    args = [*mc_args(ours, dev, gid), "--reversed"]
    p = pair("rev", args, args, snode=2, cnode=1)
    ev = p.evidence()
    why = receiver_ok(p.client.rc, p.client.text, lab.ud_mtu())
    assert not why, f"the receiving client: {why}\n{ev}"
    assert p.server.rc == 0, f"the sending server: exit {p.server.rc}\n{ev}"
    assert any(r.iters == N and results.positive(r.bw_avg) for r in results.rows(p.server.text)), \
        f"the sending server: no row of {N} messages with BW > 0\n{ev}"
    assert re.search(r"local address: .*QPN 0xffffff", p.client.text), \
        f"the client's own key is not the group's (QPN 0xffffff)\n{ev}"
    note(f"server sent: {results.rows(p.server.text)[-1]}; client got: {results.rows(p.client.text)[-1]}")

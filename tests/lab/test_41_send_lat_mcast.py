# SPDX-License-Identifier: BSD-2-Clause
"""ib_send_lat -g: multicast latency on UD (docs/wire-protocol.md §6.3, §10). Each side
attaches to a group, advertises it in its keys and sends to the peer's.
Ours <-> ours with one -M group for both sides (no message of a side comes
back to it: rxe's received-packet counters) and with a group per side; a
group that does not match the GID type is refused before any traffic; the
groups are left on exit; a side whose peer's group is not routed through
the RoCE netdev stops with the `ip route add` to run; Debian's 6.06 in both
roles (a group per side, and a membership held for it: 6.06 never joins the
IPv4 group, recorded here)."""

import re
import subprocess
import time
from pathlib import Path
from typing import Optional

import pytest

from benchlib import labctl, results
from benchlib.labctl import TOP, Lab, Pair

pytestmark = pytest.mark.nodes(2)
HOLD = TOP / "tests" / "lab" / "igmp_hold.py"


def m16(ip: str) -> str:
    """Upstream's -M form of an IPv4 group."""
    return "0:0:0:0:0:0:0:0:0:0:255:255:" + ip.replace(".", ":")


def gid_re(ip: str) -> str:
    return (r"^ M?GID: 00:00:00:00:00:00:00:00:00:00:255:255:"
            + ":".join(f"{int(x):02d}" for x in ip.split(".")) + "$")


def after(text: str, head: str) -> list[str]:
    """The lines that follow each line matching head."""
    lines = text.splitlines()
    return [lines[i + 1] for i, l in enumerate(lines[:-1]) if re.search(head, l)]


def mc_lat(text: str, group: str, peer: str) -> Optional[str]:
    """Our multicast latency output: the test name and the UD line, the
    local address with our group and the remote one with the peer's
    ("MGID" for the server's, "GID" for the client's, as upstream labels
    them), QPN 0xffffff on both, and a latency row of 200 iterations,
    0 < t_min <= t_typical <= t_max. None when it is all there."""
    if "Send Latency Multicast Test" not in text:
        return "no 'Send Latency Multicast Test'"
    if "MultiCast runs on UD!" not in text:
        return "no 'MultiCast runs on UD!'"
    if not any(re.search(gid_re(group), l) for l in after(text, r"^ local address: .* QPN 0xffffff")):
        return f"the local address (QPN 0xffffff) does not carry {group}"
    if not any(re.search(gid_re(peer), l) for l in after(text, r"^ remote address: .* QPN 0xffffff")):
        return f"the remote address (QPN 0xffffff) does not carry {peer}"
    if not any(r.size == 2 and r.iters == 200 and r.t_min > 0 and r.t_min <= r.t_typical <= r.t_max
               for r in results.rows(text)):
        return "no 2 B x 200 row with 0 < t_min <= t_typical <= t_max"
    return None


@pytest.fixture
def lat(ours, upstream_bin, dev: str, gid: int):
    a = ["-d", dev, "-x", str(gid), "-F", "-n", "200", "-g"]

    def argv(build: str, *extra: str) -> list[str]:
        b = ours("ib_send_lat") if build == "ours" else upstream_bin("ib_send_lat")
        return [b, *a, *extra]
    return argv


def rcvd(lab: Lab, node: int, dev: str) -> int:
    d = lab.exec(node, ["cat", f"/sys/class/infiniband/{dev}/ports/1/hw_counters/rcvd_pkts"])
    assert d.rc == 0 and d.out.strip().isdigit(), f"no rcvd_pkts counter\n{d.evidence()}"
    return int(d.out)


def both_ok(p: Pair, srv: tuple[str, str], cli: tuple[str, str]) -> None:
    ev = p.evidence()
    assert p.server.rc == 0 and p.client.rc == 0, f"exit {p.server.rc}/{p.client.rc}\n{ev}"
    why = mc_lat(p.server.text, *srv)
    assert why is None, f"server: {why}\n{ev}"
    why = mc_lat(p.client.text, *cli)
    assert why is None, f"client: {why}\n{ev}"


@pytest.mark.name("ours-ours/one-group")
def test_one_group(lab: Lab, pair, lat, dev: str, note) -> None:
    """One group for both sides: each side leaves its own address out of
    its membership, so each node's rxe receives the peer's 200 messages,
    not twice as many."""
    r1, r2 = rcvd(lab, 1, dev), rcvd(lab, 2, dev)
    g = "225.1.1.20"
    p = pair("same", lat("ours", "-M", g), lat("ours", "-M", g))
    d1, d2 = rcvd(lab, 1, dev) - r1, rcvd(lab, 2, dev) - r2
    both_ok(p, (g, g), (g, g))
    assert 200 <= d1 <= 220 and 200 <= d2 <= 220, \
        f"packets received {d1}/{d2} (200 each expected)\n{p.evidence()}"
    note(f"one group: {results.rows(p.client.text)[-1]}; packets received: node 1 {d1}, node 2 {d2}")


@pytest.mark.name("ours-ours/two-groups")
def test_two_groups(pair, lat, note) -> None:
    p = pair("two", lat("ours", "-M", "225.1.1.20"), lat("ours", "-M", "225.1.1.21"))
    both_ok(p, ("225.1.1.20", "225.1.1.21"), ("225.1.1.21", "225.1.1.20"))
    note(f"two groups: {results.rows(p.client.text)[-1]}")


@pytest.mark.name("groups-left")
def test_groups_left(lab: Lab) -> None:
    """Groups are left on exit (detach and IGMP leave) on both nodes."""
    left = []
    for n in (1, 2):
        d = lab.exec(n, ["ip", "maddr", "show", "dev", "eth0"])
        assert d.rc == 0, d.evidence()
        left += [f"node {n}: {l.strip()}" for l in d.out.splitlines()
                 if re.search(r"225\.1\.1\.2[01]", l)]
    assert not left, f"{len(left)} memberships of 225.1.1.20/21 remain: {left}"


@pytest.mark.name("default-group-refused")
def test_default_group(lab: Lab, lat, gid: int, note) -> None:
    """The default group (ff01:0:2:c985::, IPv6) with the IPv4 GID: refused
    by name on both sides before any traffic."""
    port = 18999
    s = lab.exec(1, [*lat("ours"), "-p", str(port)], timeout=30)
    c = lab.exec(2, [*lat("ours"), "-p", str(port), lab.addr(1)], timeout=30)
    ev = s.evidence() + c.evidence()
    assert s.rc == 1 and c.rc == 1, f"exit {s.rc}/{c.rc}\n{ev}"
    assert re.search(r"MGID and GID .* differ in type", s.text), ev
    assert re.search(r"MGID and GID .* differ in type", c.text), ev
    assert "Waiting for client" not in s.text, f"the server waited for a client\n{ev}"
    note(f"default group with -x {gid}: {c.text.strip().splitlines()[0]}")


@pytest.mark.name("no-route-refused")
def test_no_route(lab: Lab, pair, lat, note) -> None:
    """No multicast route on the client's node: it stops with the fix; the
    server sees its peer go and fails too (bounded)."""
    d = lab.exec(2, ["ip", "route", "del", "224.0.0.0/4", "dev", "eth0"])
    assert d.rc == 0, d.evidence()
    try:
        p = pair("noroute", lat("ours", "-M", "225.1.1.20", "--oob_timeout", "20"),
                 lat("ours", "-M", "225.1.1.21", "--oob_timeout", "20"))
    finally:
        d = lab.exec(2, ["ip", "route", "add", "224.0.0.0/4", "dev", "eth0"])
    assert d.rc == 0, f"cannot restore node 2's multicast route\n{d.evidence()}"
    assert p.client.rc == 1 and p.server.rc != 0, f"exit {p.server.rc}/{p.client.rc}\n{p.evidence()}"
    assert "ip route add 224.0.0.0/4 dev eth0" in p.client.text, p.evidence()
    note("no route: " + next((l.strip() for l in p.client.text.splitlines() if "not routed" in l), ""))


@pytest.mark.name("up-without-membership-hangs")
def test_up_without_membership(lab: Lab, lat, workdir: Path, note) -> None:
    """Debian's 6.06 attaches its QP but never joins the IPv4 group, so on
    rxe it receives nothing: as a server it waits forever after the table
    header while our client gives up after --oob_timeout (8 s; 6.06 is
    stopped at 25 s). (stdbuf: 6.06 is killed, its output must not wait in
    a buffer.)"""
    port = 18998
    srv_argv = ["stdbuf", "-oL", *lat("up", "-M", m16("225.1.1.26")), "-p", str(port)]
    out = workdir / "nohold.srv"
    with open(out, "wb") as f:
        sp = lab.start(1, srv_argv, 25, f, subprocess.STDOUT)
    try:
        assert lab.wait_listen(1, port), f"6.06 does not listen on {port}"
        c = lab.exec(2, [*lat("ours", "-M", "225.1.1.27", "--oob_timeout", "8"), "-p", str(port),
                         lab.addr(1)], timeout=60)
        nrs = sp.wait(90)
    finally:
        labctl.kill_group(sp)
    s = out.read_text(errors="replace")
    ev = f"--- 6.06 server: exit {nrs}\n{labctl.tail(s, 20, '  | ')}{c.evidence()}"
    assert c.rc == 17, f"our client exit {c.rc}, not 17\n{ev}"
    assert nrs == 124, f"6.06 server exit {nrs}, not stopped (124)\n{ev}"
    assert "No completion for 8 seconds" in c.text, ev
    assert "#bytes" in s, f"6.06 printed no table header\n{ev}"
    assert not results.rows(s), f"6.06 printed a row\n{ev}"
    note(f"6.06 server without an IPv4 membership: no row, stopped after 25 s (exit {nrs}); "
         f"our client exit {c.rc}")


class Holder:
    """igmp_hold.py on a node: holds an IPv4 membership for 6.06 until stopped."""

    def __init__(self, lab: Lab, node: int, group: str, workdir: Path) -> None:
        self.stop = lab.share() / f"igmp-stop.{node}.{time.monotonic_ns()}"
        self.log = workdir / f"hold{node}"
        with open(self.log, "wb") as f:
            self.proc = lab.start(node, ["python3", str(HOLD), "eth0", "180", str(self.stop), group],
                                  200, f, subprocess.STDOUT)
        for _ in range(40):
            if "holding" in self.log.read_text(errors="replace"):
                return
            time.sleep(0.5)
        self.close()
        raise AssertionError(f"could not hold {group} on node {node}: {self.log.read_text()}")

    def close(self) -> None:
        self.stop.touch()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            pass
        labctl.kill_group(self.proc)
        self.stop.unlink(missing_ok=True)


def up_row(text: str) -> bool:
    return any(r.size == 2 and r.iters == 200 for r in results.rows(text))


@pytest.mark.name("up-ours")
def test_up_ours(lab: Lab, pair, lat, workdir: Path, note) -> None:
    """6.06 server (a membership held for its group), our client. 6.06's own
    numbers may read inf in a VM: only its row is checked."""
    h = Holder(lab, 1, "225.1.1.22", workdir)
    try:
        p = pair("up-ours", lat("up", "-M", m16("225.1.1.22")), lat("ours", "-M", "225.1.1.23"))
    finally:
        h.close()
    ev = p.evidence()
    assert p.server.rc == 0 and p.client.rc == 0, f"exit {p.server.rc}/{p.client.rc}\n{ev}"
    assert up_row(p.server.text), f"6.06 server: no 2 B x 200 row\n{ev}"
    why = mc_lat(p.client.text, "225.1.1.23", "225.1.1.22")
    assert why is None, f"client: {why}\n{ev}"
    note(f"6.06 server, our client: {results.rows(p.client.text)[-1]}")


@pytest.mark.name("ours-up")
def test_ours_up(lab: Lab, pair, lat, workdir: Path, note) -> None:
    h = Holder(lab, 2, "225.1.1.25", workdir)
    try:
        p = pair("ours-up", lat("ours", "-M", "225.1.1.24"), lat("up", "-M", m16("225.1.1.25")))
    finally:
        h.close()
    ev = p.evidence()
    assert p.server.rc == 0 and p.client.rc == 0, f"exit {p.server.rc}/{p.client.rc}\n{ev}"
    why = mc_lat(p.server.text, "225.1.1.24", "225.1.1.25")
    assert why is None, f"server: {why}\n{ev}"
    assert up_row(p.client.text), f"6.06 client: no 2 B x 200 row\n{ev}"
    note(f"our server, 6.06 client: {results.rows(p.server.text)[-1]}")

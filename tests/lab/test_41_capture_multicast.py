# SPDX-License-Identifier: BSD-2-Clause
"""rdmacap on three nodes (capture/rdmacap.8).

ud: node 3 joins two RoCE v2 groups with a UD QP; our ib_send_bw sends N
messages to the first from node 1 (its OOB peer on node 2), Debian's 6.06
N to the second from node 2 (its peer on node 1, whose IPv4 membership
igmp_hold.py holds: 6.06 joins none). Every message is
counted, each source has its own pcap, nothing is dropped, and tshark
decodes each pcap as RoCE v2 UD SENDs with the same count.

packet: streamgen on nodes 1 and 2 sends 4 groups with sequence numbers
skipped on purpose; rdmacap on node 3 reports that loss exactly, per
source, and tshark counts what rdmacap counted.

The three-node segment drops frames when a burst outruns a TCG guest
(docs/lab.md; lab test 40: our UD receiver reports the loss): N is kept
under the burst the segment carries whole, and the generator is paced."""

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from benchlib import caps, labctl
from benchlib.labctl import Lab

pytestmark = pytest.mark.nodes(3)
TOP = Path(__file__).resolve().parents[2]


def losses(j: dict[str, Any]) -> int:
    """Packets dropped, by any cause. A write stall (a write over 50 ms, as on
    the lab's 9p share under load) is counted apart: a warning, not a loss."""
    return sum(v for k, v in j["drops"].items() if k not in ("write_stalls", "not_udp"))
CAPTURE = Path(os.environ.get("PT_BUILD") or TOP / "build") / "capture"
N = 50
SIZE = 1024
UD_GROUPS = ["225.1.1.30", "225.1.1.31"]
HOLD = TOP / "tests" / "lab" / "igmp_hold.py"


def mgid16(group: str) -> str:
    """6.06 reads -M only as 16 byte tokens (docs/upstream-behaviour.md §4.2)."""
    return "0:0:0:0:0:0:0:0:0:0:255:255:" + group.replace(".", ":")


def tshark_count(pcap: Path, field: str = "frame.number") -> list[str]:
    d = subprocess.run(["tshark", "-r", str(pcap), "-T", "fields", "-e", field],
                       capture_output=True, text=True, timeout=120)
    assert d.returncode == 0, f"tshark -r {pcap}: exit {d.returncode}\n{d.stderr}"
    return d.stdout.split()


@pytest.fixture
def mcast(lab: Lab) -> None:
    reason = caps.multicast(lab)
    if reason:
        pytest.skip(reason)


def start_capture(lab: Lab, argv: list[str], log: Path) -> "subprocess.Popen[bytes]":
    """rdmacap on node 3, returned once its banner says the joins are done."""
    with open(log, "wb") as f:
        p = lab.start(3, argv, 450, f, subprocess.STDOUT)
    for _ in range(120):
        if "rdmacap: ud:" in log.read_text(errors="replace") or \
                "rdmacap: packet:" in log.read_text(errors="replace") or p.poll() is not None:
            break
        time.sleep(0.5)
    assert p.poll() is None, f"rdmacap stopped at start\n{labctl.tail(log.read_text(), 30, '  | ')}"
    return p


def wait(p: "subprocess.Popen[bytes]", secs: float) -> Any:
    """The exit code, or None when it did not end in time (the evidence says)."""
    try:
        return p.wait(secs)
    except subprocess.TimeoutExpired:
        return None


_ud: dict[str, Any] = {}


@pytest.fixture
def ud_run(mcast: None, lab: Lab, pair, ours, upstream_bin, dev: str, gid: int,
           workdir: Path) -> dict[str, Any]:
    """Both senders and the capture, once for the checks that read it."""
    if _ud.get("boot") == (lab.boots, lab.nodes()):
        return _ud
    out = lab.share() / "node3" / "cap-ud"
    subprocess.run(["rm", "-rf", str(out)], check=True)
    out.mkdir(parents=True)
    log = workdir / "rdmacap-ud.log"
    g = [a for grp in UD_GROUPS for a in ("-g", grp)]
    cap = start_capture(lab, [str(CAPTURE / "rdmacap"), "ud", "-d", dev, *g, "-o", str(out),
                              "-c", str(2 * N), "-t", "400", "--json", str(out / "run.json")], log)
    try:
        common = ["-d", dev, "-x", str(gid), "-c", "UD", "-g", "-n", str(N), "-s", str(SIZE)]
        a = [ours("ib_send_bw"), *common, "-M", UD_GROUPS[0], "--oob_timeout", "60"]
        p_ours = pair("ud-ours", a, a, snode=2, cnode=1, timeout=120)
        b = [upstream_bin("ib_send_bw"), *common, "-F", "-M", mgid16(UD_GROUPS[1])]
        stop = lab.share() / f"igmp-stop.cap.{time.monotonic_ns()}"
        with open(workdir / "hold1", "wb") as f:
            hold = lab.start(1, ["python3", str(HOLD), "eth0", "150", str(stop), UD_GROUPS[1]], 170, f,
                             subprocess.STDOUT)
        try:
            for _ in range(40):
                if "holding" in (workdir / "hold1").read_text(errors="replace"):
                    break
                time.sleep(0.5)
            p_deb = pair("ud-debian", b, b, snode=1, cnode=2, timeout=120)
        finally:
            stop.touch()
            labctl.kill_group(hold)
            stop.unlink(missing_ok=True)
        rc = wait(cap, 60)  # the count is reached once both senders are done
    finally:
        labctl.kill_group(cap)
    _ud.clear()
    _ud.update(boot=(lab.boots, lab.nodes()), rc=rc, log=log.read_text(errors="replace"), out=out,
               pairs=[p_ours, p_deb], addrs=[lab.addr(1), lab.addr(2)])
    return _ud


def evidence(run: dict[str, Any]) -> str:
    return "--- rdmacap on node 3:\n" + labctl.tail(run["log"], 30, "  | ") + \
        "".join("\n" + p.evidence() for p in run.get("pairs", []))


@pytest.mark.name("ud-count")
def test_ud_every_message(ud_run: dict[str, Any], note) -> None:
    run = ud_run
    for p in run["pairs"]:
        assert p.ok, f"a sender failed\n{evidence(run)}"
    assert run["rc"] == 0, f"rdmacap exit {run['rc']}\n{evidence(run)}"
    j = json.loads((run["out"] / "run.json").read_text())
    got = {(s["source"], s["group"]): s["packets"] for s in j["sources"]}
    want = {(run["addrs"][0], UD_GROUPS[0]): N, (run["addrs"][1], UD_GROUPS[1]): N}
    assert got == want, f"per source {got}, want {want}\n{evidence(run)}"
    assert losses(j) == 0, f"drops {j['drops']}\n{evidence(run)}"
    assert j["lost"] == 0 and j["timestamps"] == "host", f"{j}\n{evidence(run)}"
    note(f"ud: {j['packets']} messages from 2 sources (ours, 6.06), drops 0, "
         f"polls/packet {j['polls_per_packet']:.1f}")


@pytest.mark.name("ud-tshark")
def test_ud_pcaps_decode(ud_run: dict[str, Any], note) -> None:
    run = ud_run
    pcaps = sorted(run["out"].glob("*.pcap"))
    want = sorted(f"{a}-{g}-4791.pcap" for a, g in zip(run["addrs"], UD_GROUPS))
    assert [p.name for p in pcaps] == want, f"pcaps {[p.name for p in pcaps]}\n{evidence(run)}"
    for p in pcaps:
        ops = tshark_count(p, "infiniband.bth.opcode")
        assert len(ops) == N and set(ops) == {"100"}, \
            f"{p.name}: tshark finds {len(ops)} frames, opcodes {sorted(set(ops))}"
    note(f"tshark: {N} UD SEND Only frames in each of {', '.join(want)}")


PK_GROUPS = [f"239.45.0.{i}:5000" for i in range(1, 5)]
COUNT = 100
SKIP = "10,11,12,60"


@pytest.mark.name("packet-seeded-loss")
def test_packet_seeded_loss(mcast: None, lab: Lab, workdir: Path, note) -> None:
    out = lab.share() / "node3" / "cap-packet"
    subprocess.run(["rm", "-rf", str(out)], check=True)
    out.mkdir(parents=True)
    log = workdir / "rdmacap-packet.log"
    g = [a for grp in PK_GROUPS for a in ("-g", grp)]
    cap = start_capture(lab, [str(CAPTURE / "rdmacap"), "packet", "-i", "eth0", *g, "-o", str(out),
                              "--preset", "seed", "-c", str(2 * 4 * (COUNT - 4)), "-t", "300",
                              "--json", str(out / "run.json")], log)
    gens = []
    try:
        for node in (1, 2):
            f = open(workdir / f"streamgen-{node}.log", "wb")
            gens.append(lab.start(node, [str(CAPTURE / "streamgen"), "-i", "eth0", *g, "-n", str(COUNT),
                                         "-l", "512", "-r", "100", "--skip", SKIP], 120, f,
                                  subprocess.STDOUT))
        grc = [wait(p, 200) for p in gens]
        rc = wait(cap, 60)
    finally:
        for p in [*gens, cap]:
            labctl.kill_group(p)
    text = log.read_text(errors="replace")
    ev = "--- rdmacap on node 3:\n" + labctl.tail(text, 30, "  | ") + "".join(
        f"\n--- streamgen on node {n}:\n" + (workdir / f"streamgen-{n}.log").read_text() for n in (1, 2))
    assert grc == [0, 0] and rc == 0, f"streamgen exits {grc}, rdmacap exit {rc}\n{ev}"
    j = json.loads((out / "run.json").read_text())
    assert j["sources_count"] == 8, f"{j['sources_count']} sources, want 8\n{ev}"
    lost = sorted(s["lost"] for s in j["sources"])
    pk = sorted(s["packets"] for s in j["sources"])
    # 10, 11, 12 and 60 skipped in every stream: 4 lost, COUNT - 4 received
    assert lost == [4] * 8 and pk == [COUNT - 4] * 8 and losses(j) == 0, \
        f"lost {lost}, packets {pk}, drops {j['drops']}\n{ev}"
    counts = [len(tshark_count(p)) for p in sorted(out.glob("*.pcap"))]
    assert counts == [COUNT - 4] * 8, f"tshark counts {counts}\n{ev}"
    note(f"packet: 8 streams x {COUNT - 4}, lost 4 each (seeded), tshark agrees")

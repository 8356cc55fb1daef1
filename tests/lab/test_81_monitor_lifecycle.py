# SPDX-License-Identifier: BSD-2-Clause
"""rdmamon's lifecycle view in the lab, against what the tools print.
`rdmamon lifecycle --json` runs on both nodes at once while ib_send_bw runs
between them (server node 1, client node 2):
- rc-tuple: ours, then Debian's 6.06: on each node, the QP the tool names in
  its "local address" line (QPN in hex, then its GID line) has an RTR event
  whose local GID, sgid index (the -x index), local QPN, remote GID and
  remote QPN are the tool's local and remote address; its states go
  RESET -> INIT -> RTR (-> RTS, which the sending client must reach) and
  each old state is the previous new one; then a destroy.
- rdma-cm: a -R run: node 2 shows cm_req_sent to node 1's address and the
  server's port, node 1 cm_req_recv from node 2's address and that port
  (the ports cross-checked), and the RTR tuple as above.
- ud-ah: -c UD: the client's node shows the AH created towards the
  server's GID (the client's "remote address" GID) from its own GID, and
  its destroy; UD QPs have no remote at RTR.
- filter: a server and a client on node 1 (loopback): `--pid` of the
  server selects the server's QP events only, while an unfiltered monitor
  on the same node shows the client's QP too.
At SIGINT each monitor prints its summary (nothing lost) and the final
connection table (`rdmamon conns`' JSON), and exits 0. Skips when rdmamon is
not built or the node has no BPF support."""

import ipaddress
import json
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Any, Optional

import pytest

from benchlib import caps
from benchlib.labctl import TOP, Lab, Pair

BUILD = Path(os.environ.get("PT_BUILD") or TOP / "build")
RDMAMON = BUILD / "monitor" / "rdmamon"
UPSTREAM = os.environ.get("LABTEST_UPSTREAM") or "/usr/bin"
pytestmark = pytest.mark.nodes(2)
N = ["-n", "200"]


class LifeMon:
    """rdmamon lifecycle --json [ARGS] on a node, its lines in the share."""

    def __init__(self, lab: Lab, node: int, tag: str, workdir: Path, args: tuple[str, ...] = ()) -> None:
        share = lab.share()
        self.node, self.tag = node, tag
        self.out = share / f"life-{tag}.jsonl"
        self.err = share / f"life-{tag}.err"
        self.stop_file = share / f"life-{tag}.stop"
        for f in (self.out, self.err, self.stop_file):
            f.unlink(missing_ok=True)
        cmd = " ".join([str(RDMAMON), "lifecycle", "--json", *args])
        script = (f'{cmd} > {self.out} 2> {self.err} & p=$!; '
                  f'while [ ! -e {self.stop_file} ] && kill -0 $p 2>/dev/null; do sleep 0.2; done; '
                  f'kill -INT $p; wait $p')
        self.log = open(workdir / f"life-{tag}.exec", "wb")
        self.proc = lab.start(node, ["sh", "-c", script], 300, self.log, subprocess.STDOUT)

    def wait_ready(self, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.err.exists() and "hooks attached" in self.err.read_text():
                return
            assert self.proc.poll() is None, f"rdmamon on node {self.node} ended\n{self.evidence()}"
            time.sleep(0.2)
        raise AssertionError(f"rdmamon on node {self.node} not attached in {timeout}s\n{self.evidence()}")

    def lines(self) -> list[dict[str, Any]]:
        """The complete lines written so far."""
        text = self.out.read_text() if self.out.exists() else ""
        return [json.loads(l) for l in text[:text.rfind("\n") + 1].splitlines() if l.strip()]

    def wait_destroyed(self, qpns: set[int], since: int, timeout: float = 30) -> list[dict[str, Any]]:
        """The lines after the first since, once every QP of qpns has its destroy."""
        deadline = time.monotonic() + timeout
        while True:
            evs = self.lines()[since:]
            gone = {e["qpn"] for e in evs if e["event"] == "qp_destroy"}
            if qpns <= gone or time.monotonic() > deadline:
                return evs
            time.sleep(0.3)

    def stop(self) -> list[dict[str, Any]]:
        """SIGINT; its lines, the last two the summary and the final table."""
        self.stop_file.touch()
        try:
            rc = self.proc.wait(timeout=60)
        finally:
            self.log.close()
        lines = self.lines()
        assert rc == 0, f"rdmamon {self.tag} exit {rc}\n{self.evidence()}"
        assert len(lines) >= 2 and lines[-2]["event"] == "summary" and lines[-1]["event"] == "conns" \
            and lines[-1]["final"] is True, f"{self.tag}: no summary and final table\n{self.evidence()}"
        assert sum(lines[-2]["lost"].values()) == 0, f"{self.tag}: events lost {lines[-2]['lost']}"
        return lines[:-2]

    def evidence(self) -> str:
        err = self.err.read_text() if self.err.exists() else ""
        out = self.out.read_text() if self.out.exists() else ""
        return f"rdmamon {self.tag} stderr:\n{err[-2000:]}\nstdout tail:\n{out[-2000:]}"


def monitors(lab: Lab, workdir: Path, tag: str) -> dict[int, LifeMon]:
    mons = {n: LifeMon(lab, n, f"{tag}{n}", workdir) for n in (1, 2)}
    for m in mons.values():
        m.wait_ready()
    return mons


# The tests share one unfiltered monitor per node (each start loads the BPF
# object: seconds under TCG); filter, the last, stops them and checks their
# summaries. A test run alone, or after a lab reboot, starts them.
_SHARED: dict[str, dict[int, LifeMon]] = {}
_OTHERS: list[LifeMon] = []   # stopped at the end of the module if a test could not


def shared_monitors(lab: Lab, workdir: Path) -> dict[int, LifeMon]:
    mons = _SHARED.get("mons")
    if mons is None or any(m.proc.poll() is not None for m in mons.values()):
        mons = _SHARED["mons"] = monitors(lab, workdir, "shared")
    return mons


@pytest.fixture(scope="module", autouse=True)
def _stop_shared() -> Any:
    yield
    for m in [*_SHARED.pop("mons", {}).values(), *_OTHERS]:
        m.stop_file.touch()


def run_watched(lab: Lab, workdir: Path, runs: list[tuple[str, Any]]) -> tuple[list[tuple[str, Pair]], dict[int, list[dict[str, Any]]]]:
    """Each run() under the shared monitors; the events since, per node,
    once the QPs the tools name are destroyed."""
    mons = shared_monitors(lab, workdir)
    since = {n: len(m.lines()) for n, m in mons.items()}
    done = [(name, run()) for name, run in runs]
    evs = {}
    for n, m in mons.items():
        qpns: set[int] = set()
        for _, p in done:
            if p.ok:
                qpns |= {t[0] for t in addresses(p.server.text if n == 1 else p.client.text)}
        evs[n] = m.wait_destroyed(qpns, since[n])
    return done, evs


def stop_all(mons: dict[int, LifeMon]) -> dict[int, list[dict[str, Any]]]:
    return {n: m.stop() for n, m in mons.items()}


def gid_of(tool_line: str) -> ipaddress.IPv6Address:
    """perftest's 'GID: 00:00:...:255:255:198:18:00:01' (decimal bytes)."""
    parts = tool_line.split("GID:")[1].split()[0].split(":")
    assert len(parts) == 16, tool_line
    return ipaddress.IPv6Address(bytes(int(p) for p in parts))


def addresses(text: str) -> list[tuple[int, ipaddress.IPv6Address, int, ipaddress.IPv6Address]]:
    """(local QPN, local GID, remote QPN, remote GID) per QP, from the
    tool's 'local address: ... QPN 0x0011' / 'remote address:' lines, each
    followed by its GID line."""
    lines = text.splitlines()
    found: dict[str, list[tuple[int, ipaddress.IPv6Address]]] = {"local": [], "remote": []}
    for i, line in enumerate(lines):
        m = re.search(r"(local|remote) address:.*QPN (0x[0-9a-fA-F]+)", line)
        if m and i + 1 < len(lines) and "GID:" in lines[i + 1]:
            found[m.group(1)].append((int(m.group(2), 16), gid_of(lines[i + 1])))
    assert found["local"] and len(found["local"]) == len(found["remote"]), \
        f"no local/remote address lines with GIDs:\n{text[-2500:]}"
    return [(lq, lg, rq, rg) for (lq, lg), (rq, rg) in zip(found["local"], found["remote"])]


def run_pair(pair: Any, name: str, server: list[str], client: list[str], **kw: Any) -> Pair:
    """One run, again once on rxe's status 9 under host load (lab noise)."""
    for attempt in range(2):
        p = pair(f"{name}-{attempt}" if attempt else name, server, client, **kw)
        noise = "status 9" in p.server.text + p.client.text
        if p.ok or attempt == 1 or not noise:
            return p
    return p


def qp_events(evs: list[dict[str, Any]], qpn: int) -> list[dict[str, Any]]:
    return [e for e in evs if e.get("qpn") == qpn and e["event"].startswith("qp_")]


def check_qp(evs: list[dict[str, Any]], tup: tuple[int, Any, int, Any], gidx: int, sender: bool,
             where: str) -> str:
    """The QP's events: created once, the state chain, the RTR tuple, destroyed."""
    lq, lg, rq, rg = tup
    qe = qp_events(evs, lq)
    kinds = [e["event"] for e in qe]
    assert kinds.count("qp_create") == 1 and kinds[0] == "qp_create" and kinds[-1] == "qp_destroy" \
        and kinds.count("qp_destroy") == 1, f"{where}: QP {lq:#x}: events {kinds}"
    states = [qe[0]["new_state"]]
    for e in qe[1:-1]:
        assert e["old_state"] == states[-1], f"{where}: QP {lq:#x}: {e} after {states}"
        states.append(e["new_state"])
    assert qe[-1]["old_state"] == states[-1], f"{where}: destroy {qe[-1]} after {states}"
    chain = [s for i, s in enumerate(states) if i == 0 or s != states[i - 1]]
    want = ["RESET", "INIT", "RTR", "RTS"] if sender else ["RESET", "INIT", "RTR"]
    assert chain[:len(want)] == want, f"{where}: QP {lq:#x} states {chain}, want {want} first"
    rtr = [e for e in qe if e["event"] == "qp_modify" and e["new_state"] == "RTR"]
    assert len(rtr) == 1 and "remote" in rtr[0], f"{where}: QP {lq:#x}: RTR events {rtr}"
    loc, rem = rtr[0]["local"], rtr[0]["remote"]
    got = (loc["qpn"], ipaddress.IPv6Address(loc["gid"]), rem["qpn"], ipaddress.IPv6Address(rem["gid"]))
    assert got == (lq, lg, rq, rg), f"{where}: RTR tuple {got} != tool's {tup}\n{rtr[0]}"
    assert loc["sgid_index"] == gidx, f"{where}: sgid index {loc['sgid_index']} != -x {gidx}"
    assert rtr[0]["comm"] == "ib_send_bw" and rtr[0]["qp_type"] == "RC", rtr[0]
    return f"{lq:#x} {' -> '.join(chain)}"


@pytest.fixture
def monitor_ready(lab: Lab, dev: str) -> None:
    need(None if RDMAMON.exists() else
         f"{RDMAMON} is not built (configure found no clang, bpftool or libbpf-dev)")
    need(caps.bpf(lab))


def need(reason: Optional[str]) -> None:
    if reason:
        pytest.skip(reason)


@pytest.mark.name("rc-tuple")
def test_rc_tuple(monitor_ready: None, lab: Lab, dev: str, gid: int, pair: Any, ours: Any,
                  workdir: Path, note: Any) -> None:
    builds = [("ours", ours("ib_send_bw"))]
    no_upstream = caps.upstream(UPSTREAM, "ib_send_bw")
    if no_upstream:
        note(f"6.06 not run: {no_upstream}")
    else:
        builds.append(("6.06", str(Path(UPSTREAM) / "ib_send_bw")))
    def one(tool: str, name: str) -> Any:
        argv = [tool, "-d", dev, "-x", str(gid), *N]
        return lambda: run_pair(pair, f"rc-{name}", argv, argv)
    runs, evs = run_watched(lab, workdir, [(name, one(tool, name)) for name, tool in builds])
    for name, p in runs:
        assert p.ok, p.evidence()
        seen = []
        for node, text, sender in ((1, p.server.text, False), (2, p.client.text, True)):
            for tup in addresses(text):
                seen.append(check_qp(evs[node], tup, gid, sender, f"{name} node {node}"))
        note(f"{name}: {'; '.join(seen)}")


@pytest.mark.name("rdma-cm")
def test_rdma_cm(monitor_ready: None, lab: Lab, dev: str, gid: int, pair: Any, ours: Any,
                 workdir: Path, note: Any) -> None:
    need(caps.rdma_cm(lab, 1) or caps.rdma_cm(lab, 2))
    argv = [ours("ib_send_bw"), "-d", dev, "-x", str(gid), "-R", *N]
    ((_, p),), evs = run_watched(lab, workdir, [("-R", lambda: run_pair(pair, "rdma-cm", argv, argv))])
    assert p.ok, p.evidence()
    port = int(p.server.argv[p.server.argv.index("-p") + 1])
    a1, a2 = lab.addr(1), lab.addr(2)
    sent = [e for e in evs[2] if e["event"] == "cm_req_sent" and e["dst"] == f"{a1}:{port}"]
    assert sent, f"node 2: no cm_req_sent to {a1}:{port}: {[e for e in evs[2] if e['event'].startswith('cm_')]}"
    assert all(e["src"].startswith(f"{a2}:") and e["dev"] == dev for e in sent), sent
    srcs = {e["src"] for e in sent}
    recv = [e for e in evs[1] if e["event"] == "cm_req_recv" and e["src"] == f"{a1}:{port}"]
    assert recv, f"node 1: no cm_req_recv on {a1}:{port}: {[e for e in evs[1] if e['event'].startswith('cm_')]}"
    assert {e["dst"] for e in recv} == srcs, f"requests received from {[e['dst'] for e in recv]}, sent from {srcs}"
    assert all(e["comm"] == "ib_send_bw" for e in sent + recv), sent + recv
    seen = []
    for node, text, sender in ((1, p.server.text, False), (2, p.client.text, True)):
        for tup in addresses(text):
            seen.append(check_qp(evs[node], tup, gid, sender, f"-R node {node}"))
    note(f"{len(sent)} request(s) {sorted(srcs)} -> {a1}:{port}; QPs {'; '.join(seen)}")


@pytest.mark.name("ud-ah")
def test_ud_ah(monitor_ready: None, lab: Lab, dev: str, gid: int, pair: Any, ours: Any,
               workdir: Path, note: Any) -> None:
    argv = [ours("ib_send_bw"), "-d", dev, "-x", str(gid), "-c", "UD", *N]
    ((_, p),), evs = run_watched(lab, workdir, [("UD", lambda: run_pair(pair, "ud", argv, argv))])
    assert p.ok, p.evidence()
    (lq, lg, rq, rg), = addresses(p.client.text)
    ahs = [e for e in evs[2] if e["event"] == "ah_create"
           and ipaddress.IPv6Address(e["remote"]["gid"]) == rg]
    assert ahs, f"node 2: no AH towards {rg}: {[e for e in evs[2] if e['event'].startswith('ah_')]}"
    ah = ahs[0]
    assert ipaddress.IPv6Address(ah["local"]["gid"]) == lg and ah["local"]["sgid_index"] == gid, ah
    assert ah["dev"] == dev and ah["comm"] == "ib_send_bw", ah
    gone = [e for e in evs[2] if e["event"] == "ah_destroy" and e["ah"] == ah["ah"]]
    assert len(gone) == 1 and ipaddress.IPv6Address(gone[0]["remote"]["gid"]) == rg, gone
    for node, q in ((2, lq), (1, rq)):
        qe = qp_events(evs[node], q)
        assert qe and all(e["qp_type"] == "UD" and "remote" not in e for e in qe), \
            f"node {node}: UD QP {q:#x}: {qe}"
        assert qe[-1]["event"] == "qp_destroy", qe
    note(f"AH {ah['ah']} {lg} -> {rg} on node 2, destroyed; UD QPs {lq:#x}, {rq:#x} without remote")


PIDWRAP = 'echo $$ > "$0"; while [ ! -e "$0.go" ]; do sleep 0.1; done; exec "$@"'


@pytest.mark.name("filter")
def test_filter(monitor_ready: None, lab: Lab, dev: str, gid: int, ours: Any, workdir: Path,
                note: Any) -> None:
    pidf = lab.share() / "life-filter.pid"
    go = Path(f"{pidf}.go")
    for f in (pidf, go):
        f.unlink(missing_ok=True)
    port = str(18900 + os.getpid() % 100)
    argv = [ours("ib_send_bw"), "-d", dev, "-x", str(gid), *N, "-p", port]
    # the server waits for go under its final pid (sh execs it), so that
    # --pid can name it before it creates its QP; the client runs on node 1 too
    shared = shared_monitors(lab, workdir)
    since = len(shared[1].lines())
    srv_log = open(workdir / "filter.srv", "wb")
    srv = lab.start(1, ["sh", "-c", PIDWRAP, str(pidf), *argv], 120, srv_log, subprocess.STDOUT)
    mon: Optional[LifeMon] = None
    cli = None
    try:
        deadline = time.monotonic() + 60
        while not (pidf.exists() and pidf.read_text().strip()) and time.monotonic() < deadline:
            assert srv.poll() is None, "the server ended before it wrote its pid"
            time.sleep(0.1)
        spid = int(pidf.read_text())
        mon = LifeMon(lab, 1, "filter-pid", workdir, ("--pid", str(spid)))
        _OTHERS.append(mon)
        mon.wait_ready()
        go.touch()
        assert lab.wait_listen(1, port=int(port)), f"the server does not listen on {port}"
        cli = lab.exec(1, [*argv, lab.addr(1)], timeout=120)
        src = srv.wait(timeout=60)
    finally:
        go.touch()
        if srv.poll() is None:
            srv.kill()
        srv_log.close()
    srv_text = (workdir / "filter.srv").read_text(errors="replace")
    assert cli.rc == 0 and src == 0, f"server exit {src}:\n{srv_text[-2000:]}\nclient:\n{cli.evidence()}"
    (sq, *_), = addresses(srv_text)
    (cq, *_), = addresses(cli.text)
    every = shared[1].wait_destroyed({sq, cq}, since)
    assert mon is not None
    picked = mon.stop()
    # the last test on the shared monitors: SIGINT, summaries, nothing lost
    stop_all(_SHARED.pop("mons"))
    assert picked and all(e["pid"] == spid for e in picked), \
        f"--pid {spid} let others through: {[e for e in picked if e['pid'] != spid][:3]}"
    assert {e["qpn"] for e in picked} == {sq}, f"--pid {spid}: QPs {[e['qpn'] for e in picked]}, server's {sq:#x}"
    assert [e["event"] for e in picked][0] == "qp_create" and picked[-1]["event"] == "qp_destroy", picked
    others = [e for e in every if e.get("qpn") == cq]
    assert others and all(e["pid"] != spid for e in others), \
        f"the unfiltered monitor did not see the client's QP {cq:#x}"

    def bare(es: list[dict[str, Any]]) -> list[dict[str, Any]]:   # each monitor stamps its own time
        return [{k: v for k, v in e.items() if k not in ("mono_ns", "time_ns")} for e in es]
    assert bare([e for e in every if e.get("qpn") == sq]) == bare(picked), \
        "the filter changed the server's events"
    note(f"--pid {spid}: {len(picked)} events, all of QP {sq:#x}; unfiltered: {len(every)} "
         f"events, {len(others)} of the client's QP {cq:#x}")

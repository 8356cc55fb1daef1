# SPDX-License-Identifier: BSD-2-Clause
"""The RoCE wire view (build/capture/rdmawire): tcpdump on node 2's eth0
captures an RC ib_write_bw run (our tools, node 1 serving, node 2 writing
with --trace), rdmawire decodes it and joins the trace.
- clean: PSNs continuous (no gap, no retransmission, nothing missing), one
  message per WR, 16 packets each (64 KiB at MTU 4096), every ACK paired;
  every WR of the trace has its packets and fits the wire; the first PSN is
  the one the client printed in its "local address" line, and giving it
  with --psn changes nothing; tshark counts the same RoCE frames and reads
  the same first and last PSN; --plot writes a PNG.
- loss (16 KiB WRs, 8 in flight): netem drops 2 % of node 2's RoCE frames (before the capture point:
  AF_PACKET sees a frame after the qdisc): rdmawire finds the retransmitted
  PSNs, the PSN sequence error NAKs of node 1 and the WRs they belong to,
  and every WR still has its packets.
Beside tcpdump, rdmacap packet --roce watches the same eth0 live: its PSN
accounting of the request flow (packets, gaps, PSNs jumped, late,
retransmitted, missing) equals what rdmawire finds in tcpdump's file
afterwards, in both runs."""

import json
import os
import re
import shutil
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest

from benchlib.labctl import TOP, Lab

BUILD = Path(os.environ.get("PT_BUILD") or TOP / "build")
RDMAWIRE = BUILD / "capture" / "rdmawire"
RDMACAP = BUILD / "capture" / "rdmacap"
SIZE = 65536
pytestmark = pytest.mark.nodes(2)


@pytest.fixture
def tools() -> None:
    assert RDMAWIRE.exists(), f"rdmawire is not built in {BUILD}"
    for t in ("tcpdump", "tshark"):
        if not shutil.which(t):
            pytest.skip(f"{t} not installed (ci/deps installs it)")


@contextmanager
def capture(lab: Lab, node: int, pcap: Path, live: dict[str, Any]) -> Iterator[Path]:
    """tcpdump on node's eth0 (RoCE v2 only, headers: 256 B a frame, ns
    stamps) for the duration of the block, and rdmacap packet --roce on the
    same eth0 (its summary JSON in live["rdmacap"]); both stopped with
    SIGINT so the files are complete."""
    pidfile, log = pcap.with_suffix(".pid"), pcap.with_suffix(".tcpdump")
    cdir = pcap.with_suffix(".rdmacap")
    cpid, clog, cjson = cdir.with_suffix(".cpid"), cdir.with_suffix(".clog"), cdir / "run.json"
    subprocess.run(["rm", "-rf", str(cdir)], check=True)
    cdir.mkdir(parents=True)
    for f in (pcap, pidfile, log, cpid, clog):
        f.unlink(missing_ok=True)
    d = lab.exec(node, ["sh", "-c", f"{RDMACAP} packet --roce -i eth0 -o {cdir} -q --snaplen 256 "
                        f"--json {cjson} >{clog} 2>&1 & echo $! >{cpid}"], timeout=30)
    assert d.rc == 0, f"rdmacap did not start on node {node}\n{d.evidence()}"
    for _ in range(100):          # capturing once its banner is out
        if clog.exists() and "rdmacap: packet:" in clog.read_text(errors="replace"):
            break
        time.sleep(0.1)
    assert "rdmacap: packet:" in clog.read_text(errors="replace"), clog.read_text(errors="replace")
    # --immediate-mode: frames go to the file as they come; without it a SIGINT
    # within tcpdump's 1 s buffer timeout drops the ring's last block unseen
    # (it is neither "captured" nor "dropped by kernel": 22 of 300 WRs once)
    start = (f"tcpdump -i eth0 -Z root -B 16384 -s 256 --immediate-mode "
             f"--time-stamp-precision=nano -w {pcap} "
             f"udp port 4791 2>{log} & echo $! >{pidfile}")
    d = lab.exec(node, ["sh", "-c", start], timeout=30)
    assert d.rc == 0, f"tcpdump did not start on node {node}\n{d.evidence()}"
    for _ in range(100):          # listening once it says so
        if log.exists() and "listening on" in log.read_text(errors="replace"):
            break
        time.sleep(0.1)
    try:
        yield pcap
    finally:
        lab.exec(node, ["sh", "-c", f"for p in {pidfile} {cpid}; do kill -INT $(cat $p); done; "
                        f"while kill -0 $(cat {pidfile}) 2>/dev/null || kill -0 $(cat {cpid}) 2>/dev/null; "
                        f"do sleep 0.1; done"], timeout=30)
    assert cjson.exists(), f"rdmacap wrote no summary:\n{clog.read_text(errors='replace')}"
    live["rdmacap"] = json.loads(cjson.read_text())
    live["rdmacap_log"] = clog.read_text(errors="replace")
    text = log.read_text(errors="replace")
    m = re.search(r"(\d+) packets dropped by kernel", text)
    assert m and m.group(1) == "0", f"tcpdump lost frames or did not end cleanly:\n{text}"
    got = re.search(r"(\d+) packets? captured", text)
    seen = re.search(r"(\d+) packets? received by filter", text)
    assert got and seen and got.group(1) == seen.group(1), \
        f"tcpdump did not write every frame its filter took:\n{text}"


def rdmawire(*args: str) -> Any:
    r = subprocess.run([str(RDMAWIRE), *args, "--json"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"rdmawire {' '.join(args)}: exit {r.returncode}\n{r.stderr}"
    return json.loads(r.stdout)


def tshark(pcap: Path, *fields: str) -> list[list[str]]:
    r = subprocess.run(["tshark", "-r", str(pcap), "-Y", "infiniband", "-T", "fields",
                        *[a for f in fields for a in ("-e", f)]],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"tshark failed: {r.stderr}"
    return [l.split("\t") for l in r.stdout.splitlines()]


def flows(rep: Any, kind: str) -> list[Any]:
    return [f for f in rep["flows"] if f["kind"] == kind]


def local_psn(text: str) -> tuple[int, int]:
    m = re.search(r"local address: .*QPN (0x[0-9a-f]+) PSN (0x[0-9a-f]+)", text)
    assert m, "no local address line"
    return int(m.group(1), 16), int(m.group(2), 16)


def run_write(lab: Lab, pair, ours, dev: str, gid: int, name: str, iters: int, size: int = SIZE,
              extra: tuple[str, ...] = ()) -> tuple[Any, Path, Path, Any]:
    share = lab.share()
    pcap, trace = share / f"{name}.pcap", share / f"{name}.cli.csv"
    trace.unlink(missing_ok=True)
    base = [ours("ib_write_bw"), "-d", dev, "-x", str(gid), "-s", str(size), "-n", str(iters), *extra]
    live: dict[str, Any] = {}
    with capture(lab, 2, pcap, live):
        p = pair(name, base, [*base, f"--trace={trace}"], timeout=80)
    assert p.ok, p.evidence()
    rep = rdmawire(str(pcap), "--trace", str(trace))
    rep["rdmacap"], rep["rdmacap_log"] = live["rdmacap"], live["rdmacap_log"]
    return p, pcap, trace, rep


PSN_FIGURES = ("packets", "gaps", "gap_psns", "late", "retransmits", "missing")


def live_agrees(rep: Any, q: Any) -> Any:
    """rdmacap's live figures of the request flow q are rdmawire's; returns
    rdmacap's flow."""
    cap = rep["rdmacap"]
    assert cap["drops"]["kernel"] == 0 and cap["drops"]["ring_freeze"] == 0, \
        f"rdmacap's ring dropped frames: {cap['drops']}\n{rep['rdmacap_log']}"
    psn = cap["psn"]
    mine = [f for f in psn["flows"] if f["src"] == q["src"] and f["dest_qp"] == q["dest_qp"]]
    assert len(mine) == 1, f"rdmacap's request flows {psn['flows']}, rdmawire's {q['src']} QP {q['dest_qp']}"
    f = mine[0]
    assert f["resyncs"] == 0 and f["beyond_window"] == 0 and psn["undecoded"] == 0, psn
    diff = {k: (f[k], q[k]) for k in PSN_FIGURES if f[k] != q[k]}
    assert not diff, f"rdmacap live vs rdmawire (field: (live, file)): {diff}\n{rep['rdmacap_log']}"
    return f


def test_clean(tools: None, lab: Lab, pair, ours, dev: str, gid: int, note, workdir: Path) -> None:
    iters = 300
    p, pcap, trace, rep = run_write(lab, pair, ours, dev, gid, "wire-clean", iters)
    per_wr = SIZE // rep["path_mtu"]
    req, resp = flows(rep, "requests"), flows(rep, "responses")
    assert len(req) == 1 and len(resp) == 1, f"want one request and one response flow: {rep['flows']}"
    q, r = req[0], resp[0]
    assert rep["truncated"] == 0 and rep["malformed"] == 0, rep
    assert q["retransmits"] == 0 and q["gaps"] == 0 and q["missing"] == 0 and q["late"] == 0 \
        and q["reframed"] == 0, \
        f"PSNs not continuous: {q}"
    assert q["messages"] == iters and q["packets"] == iters * per_wr, q
    assert (q["next_psn"] - q["start_psn"]) % (1 << 24) == iters * per_wr, q
    assert r["peer"] is not None and r["acks"] > 0 and sum(r["naks"].values()) == 0, r
    live_agrees(rep, q)
    t = rep["trace"]
    assert t["wrs"] == iters and t["found"] == iters and t["missing"] == 0 and t["unfit"] == 0, \
        {k: v for k, v in t.items() if k != "wr"}
    assert all(w["packets"] == per_wr and w["ack_frame"] for w in t["wr"]), "a WR lacks packets or its ACK"
    qpn, psn = local_psn(p.client.text)
    assert q["start_psn"] == psn, f"first PSN on the wire 0x{q['start_psn']:06x}, the client printed 0x{psn:06x}"
    hinted = rdmawire(str(pcap), "--trace", str(trace), "--psn", f"{qpn:#x}={psn:#x}")["trace"]
    assert hinted["found"] == iters and hinted["unfit"] == 0
    # tshark agrees: the same RoCE frames, the same first and last PSN
    ts = tshark(pcap, "ip.src", "infiniband.bth.destqp", "infiniband.bth.psn")
    assert len(ts) == rep["roce"], f"tshark decodes {len(ts)} RoCE frames, rdmawire {rep['roce']}"
    ts_req = [int(psn) for src, dqp, psn in ts if src == q["src"] and int(dqp, 0) == q["dest_qp"]]
    assert len(ts_req) == q["packets"] and ts_req[0] == q["first_psn"] and ts_req[-1] == q["last_psn"]
    png = workdir / "wire-clean.png"
    r2 = subprocess.run([str(RDMAWIRE), str(pcap), "--trace", str(trace), "--plot", str(png)],
                        capture_output=True, text=True, timeout=120)
    assert r2.returncode == 0 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", r2.stderr
    (workdir / "rdmawire.txt").write_text(r2.stdout)
    note(f"{rep['roce']} RoCE frames (tshark {len(ts)}), {q['packets']} requests PSN "
         f"0x{q['start_psn']:06x}..0x{(q['next_psn'] - 1) % (1 << 24):06x}, {r['acks']} ACKs, "
         f"{t['found']}/{t['wrs']} WRs joined")


LOSS = 2.0            # % of node 2's RoCE frames: ~8 of the 400 first transmissions
# 16 KiB WRs (4 packets), 8 in flight: each loss resends at most 32 packets (go-back-N),
# which keeps the run short on a loaded TCG link


def test_loss(tools: None, lab: Lab, pair, ours, dev: str, gid: int, note) -> None:
    iters = 100
    lab.roce_loss(2, LOSS)
    try:
        p, pcap, trace, rep = run_write(lab, pair, ours, dev, gid, "wire-loss", iters, 16384, ("-t", "8"))
        drops = lab.roce_dropped(2)
    finally:
        lab.roce_loss_off(2)
    assert drops > 0, "netem dropped nothing: the test proved nothing"
    q = flows(rep, "requests")[0]
    r = flows(rep, "responses")[0]
    # a frame netem dropped was never seen here: a gap, then it came late,
    # and the frames after it were sent again
    assert q["retransmits"] > 0 and q["retransmitted_psns"], f"no retransmission found: {q}"
    assert q["gaps"] > 0 and q["late"] > 0, q
    assert q["missing"] == 0, f"PSNs never seen although RC completed: {q}"
    live = live_agrees(rep, q)
    seq = r["naks"]["psn_sequence_error"]
    t = rep["trace"]
    assert t["found"] == iters and t["unfit"] == 0, {k: v for k, v in t.items() if k != "wr"}
    rexmt = [w for w in t["wr"] if w["retransmits"]]
    assert rexmt and t["with_retransmits"] == len(rexmt), "no WR joined with its retransmissions"
    # a gap here is a later PSN that reached node 1 before the dropped one: it NAKs the hole
    assert seq > 0, f"gaps on the wire but no PSN sequence error NAK decoded: {r}"
    naked = [w for w in t["wr"] if w["naks"]["psn_sequence_error"]]
    assert naked, "NAKs on the wire, none joined with a WR"
    assert sum(w["naks"]["psn_sequence_error"] for w in t["wr"]) == seq
    note(f"netem dropped {drops} of node 2's frames; rdmawire: {q['retransmits']} retransmitted "
         f"packets, {q['gaps']} gaps, {seq} PSN sequence error NAKs, {len(rexmt)} WRs with "
         f"retransmissions, {q['reframed']} PSNs resent as another packet; rdmacap live: "
         f"{live['gaps']} gaps, {live['late']} late, {live['retransmits']} retransmitted (the same)")

# SPDX-License-Identifier: BSD-2-Clause
"""rdmacap on rxe (capture/rdmacap.8): raw and sniffer are refused before
any capture, with the errno named and the backend to use instead, exit 3,
nothing written - as root (rxe has no RAW_PACKET QPs: EOPNOTSUPP) and
without CAP_NET_RAW (EPERM). packet --roce records an RC ib_write_bw run's
RoCE v2 frames on node 1: tshark reads the same number of frames, both
directions are there, and the data PSNs of the requester are continuous;
rdmacap is stopped by SIGINT and exits 0 with every file whole.
--payload-mem: gpu is refused before any capture (exit 3, the reason and
what the guest has, nothing written); huge stops with a clear error while
the guest has no huge pages, and once some are reserved the ud backend's
payload buffer is in them (its banner says so)."""

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from benchlib import labctl
from benchlib.labctl import Lab

TOP = Path(__file__).resolve().parents[2]


def losses(j: dict[str, Any]) -> int:
    """Packets dropped, by any cause. A write stall (a write over 50 ms, as on
    the lab's 9p share under load) is counted apart: a warning, not a loss."""
    return sum(v for k, v in j["drops"].items() if k not in ("write_stalls", "not_udp"))
CAPTURE = Path(os.environ.get("PT_BUILD") or TOP / "build") / "capture"


@pytest.mark.name("{id}")
@pytest.mark.parametrize("backend,cap,errno_name,advice", [
    ("raw", "root", "EOPNOTSUPP", "rdmacap ud -d"),
    ("sniffer", "root", "EOPNOTSUPP", "rdmacap packet --roce"),
    ("raw", "no-net-raw", "EPERM", "rdmacap ud -d"),
    ("sniffer", "no-net-raw", "EPERM", "rdmacap ud -d"),
], ids=["raw-root", "sniffer-root", "raw-no-cap", "sniffer-no-cap"])
def test_refused(lab: Lab, dev: str, backend: str, cap: str, errno_name: str, advice: str,
                 note) -> None:
    out = lab.share() / "node1" / f"cap-{backend}-{cap}"
    subprocess.run(["rm", "-rf", str(out)], check=True)
    out.mkdir(parents=True)
    argv = [str(CAPTURE / "rdmacap"), backend, "-d", dev, "-o", str(out)]
    if cap == "no-net-raw":
        argv = ["setpriv", "--bounding-set", "-net_raw", "--inh-caps", "-net_raw", *argv]
    d = lab.exec(1, argv, timeout=60)
    text = d.out + d.err
    assert d.rc == 3, f"exit {d.rc}, want 3\n{d.evidence()}"
    assert errno_name in text and advice in text, f"no {errno_name} or no '{advice}'\n{d.evidence()}"
    assert not list(out.iterdir()), f"files written: {list(out.iterdir())}"
    note(next(line for line in text.splitlines() if errno_name in line).strip())


@pytest.mark.name("payload-mem-gpu")
def test_payload_gpu_refused(lab: Lab, dev: str, note) -> None:
    out = lab.share() / "node1" / "cap-gpu"
    subprocess.run(["rm", "-rf", str(out)], check=True)
    out.mkdir(parents=True)
    d = lab.exec(1, [str(CAPTURE / "rdmacap"), "ud", "-d", dev, "-g", "239.77.9.1", "-o", str(out),
                     "--payload-mem", "gpu:0"], timeout=60)
    assert d.rc == 3, f"exit {d.rc}, want 3\n{d.evidence()}"
    assert "not supported by this build" in d.err and "no GPU device node on this host" in d.err \
        and "use --payload-mem host or huge" in d.err, d.evidence()
    assert not list(out.iterdir()), f"files written: {list(out.iterdir())}"
    note(d.err.strip())


@pytest.mark.name("payload-mem-huge")
def test_payload_huge(lab: Lab, dev: str, note) -> None:
    out = lab.share() / "node1" / "cap-huge"
    subprocess.run(["rm", "-rf", str(out)], check=True)
    out.mkdir(parents=True)
    nr = "/proc/sys/vm/nr_hugepages"
    argv = [str(CAPTURE / "rdmacap"), "ud", "-d", dev, "-g", "239.77.9.2", "-o", str(out),
            "--payload-mem", "huge", "-t", "1"]
    before = lab.exec(1, ["cat", nr], timeout=30).out.strip()
    try:
        assert lab.exec(1, ["sh", "-c", f"echo 0 > {nr}"], timeout=30).rc == 0
        d = lab.exec(1, argv, timeout=60)
        assert d.rc != 0 and "--payload-mem huge: no" in d.err and "nr_hugepages" in d.err, \
            f"no huge pages, yet: exit {d.rc}\n{d.evidence()}"
        assert not list(out.iterdir()), f"files written: {list(out.iterdir())}"
        refusal = d.err.strip()
        assert lab.exec(1, ["sh", "-c", f"echo 4 > {nr}"], timeout=30).rc == 0
        d = lab.exec(1, argv, timeout=60)
        assert d.rc == 0 and "(payload in hugepages)" in d.out, f"exit {d.rc}\n{d.evidence()}"
    finally:
        lab.exec(1, ["sh", "-c", f"echo {before or 0} > {nr}"], timeout=30)
    note(f"{refusal}; with 4 huge pages reserved: payload in hugepages")


@pytest.mark.name("packet-roce")
def test_packet_roce(lab: Lab, pair, ours, dev: str, gid: int, workdir: Path, note) -> None:
    out = lab.share() / "node1" / "cap-roce"
    subprocess.run(["rm", "-rf", str(out)], check=True)
    out.mkdir(parents=True)
    log = workdir / "rdmacap-roce.log"
    stop = out.parent / "cap-roce.stop"
    stop.unlink(missing_ok=True)
    # stopped by SIGINT once the run is over: every file must then be whole
    script = (f'{CAPTURE / "rdmacap"} packet --roce -i eth0 -o {out} --json {out / "run.json"} & p=$!; '
              f'while [ ! -e {stop} ] && kill -0 $p 2>/dev/null; do sleep 0.2; done; kill -INT $p; wait $p')
    with open(log, "wb") as f:
        cap = lab.start(1, ["sh", "-c", script], 300, f, subprocess.STDOUT)
    try:
        for _ in range(60):
            if "rdmacap: packet:" in log.read_text(errors="replace"):
                break
            subprocess.run(["sleep", "0.5"])
        args = [ours("ib_write_bw"), "-d", dev, "-x", str(gid), "-s", "4096", "-n", "200"]
        p = pair("roce", args, args, snode=2, cnode=1, timeout=200)
        stop.touch()
        try:
            rc = cap.wait(60)
        except subprocess.TimeoutExpired:
            rc = None
    finally:
        stop.touch()
        labctl.kill_group(cap)
        stop.unlink(missing_ok=True)
    text = log.read_text(errors="replace")
    ev = "--- rdmacap on node 1:\n" + labctl.tail(text, 20, "  | ") + "\n" + p.evidence()
    assert p.ok and rc == 0, f"pair ok {p.ok}, rdmacap exit {rc}\n{ev}"
    j = json.loads((out / "run.json").read_text())
    assert j["sources_count"] >= 2 and losses(j) == 0, f"{j}\n{ev}"
    a1, a2 = lab.addr(1), lab.addr(2)
    req = out / f"{a1}-{a2}-4791.pcap"
    assert req.exists() and (out / f"{a2}-{a1}-4791.pcap").exists(), \
        f"no pcap per direction: {sorted(x.name for x in out.iterdir())}\n{ev}"
    total = 0
    for s in j["sources"]:
        pc = out / s["files"][0]
        d = subprocess.run(["tshark", "-r", str(pc), "-T", "fields", "-e", "infiniband.bth.psn",
                            "-e", "infiniband.bth.opcode"], capture_output=True, text=True, timeout=120)
        rows = [r.split("\t") for r in d.stdout.splitlines()]
        assert d.returncode == 0 and len(rows) == s["packets"], \
            f"{pc.name}: tshark {len(rows)} frames, rdmacap {s['packets']}\n{d.stderr}"
        total += len(rows)
    # RDMA WRITE First/Middle/Last/Only (6..10) from node 1: PSNs step by one
    d = subprocess.run(["tshark", "-r", str(req), "-T", "fields", "-e", "infiniband.bth.psn",
                        "-e", "infiniband.bth.opcode"], capture_output=True, text=True, timeout=120)
    psns = [int(r.split("\t")[0]) for r in d.stdout.splitlines() if r.split("\t")[1] in
            {"6", "7", "8", "9", "10", "11"}]
    gaps = [(a, b) for a, b in zip(psns, psns[1:]) if b != (a + 1) % (1 << 24)]
    assert len(psns) >= 200 and not gaps, f"{len(psns)} write PSNs, gaps {gaps[:5]}\n{ev}"
    note(f"packet --roce: {total} frames in {j['sources_count']} pcaps (tshark agrees), "
         f"{len(psns)} RDMA WRITE PSNs continuous")

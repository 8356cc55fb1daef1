# SPDX-License-Identifier: BSD-2-Clause
"""The USDT probes of our tools (plugin/hooks/probes.h, docs/usdt.md) seen by
bpftrace in the lab. bpftrace on node 2 attaches by path to ib_send_bw and
ib_send_lat before either starts (the kernel raises the probes' semaphores
in every process that maps the binary), then `ib_send_bw -s 64 -q 2 -n N`
and `ib_send_lat -n M` run with their clients on node 2. Counted against
what is known from outside the probes: the command line (N per QP, M), the
CQ moderation and the QPNs the tools print, and the rule that a send is
signaled every cq_mod-th WR and at the last:
  - ib_send_bw: posted WRs (the post probe's count) == N per QP, for
    exactly the QPNs it printed; send CQEs == its signaled WRs; the last
    CQE of each QP retires sequence N-1, none failed; one run_end, status 0;
  - ib_send_lat: M posts, M send CQEs and M receive CQEs, at least M
    receives posted; one run_end, status 0.
Skips with bpftrace's own message when it is absent or cannot attach in the
guest (no uprobes, tracefs not mountable).

The pairs start only once every probe is attached. bpftrace prints
"attached_probes" before it attaches any, and fires BEGIN before them too;
it then attaches uprobe-type probes in the reverse of their order in the
script. Two CI runs that started at "attached_probes" lost ib_send_bw's
probes (declared first, attached last): posts short, no run_end. So the
script's first probe is a uprobe on libc's syncfs(), attached after all
others, and the test runs `sync -f /proc` on node 2 until it fires."""

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any, Optional

import pytest

from benchlib.labctl import TOP, Lab
from monitorlib import cq_mod, qpns, signaled

BUILD = Path(os.environ.get("PT_BUILD") or TOP / "build")
pytestmark = pytest.mark.nodes(2)
BW_N, BW_QPS, LAT_N = 1000, 2, 200
LIMIT, ATTACH_S = 300, 240      # bpftrace's own bound; its start-up under TCG
TOOLS = ("ib_send_bw", "ib_send_lat")

# Node 2 runs both clients; one map per tool and probe, keyed by QPN. Only
# the probes counted are attached: under TCG bpftrace's start-up (LLVM)
# grows with each one. @ends counts run_end: bpftrace leaves once both
# tools' runs ended (or after LIMIT s).
PROBES = {
    "run_end": "@end_status[{tag}, (int64)arg1] = count(); @ends++; if (@ends == 2) {{ exit(); }}",
    "post": "@post[{tag}, arg1] = sum(arg3);",
    "post_recv": "@post_recv[{tag}, arg1] = sum(arg3);",
    "complete": "@complete[{tag}, arg1] = count(); @last_seq[{tag}, arg1] = max(arg2); "
                "@bad_status[{tag}] = sum(arg4 != 0 ? 1 : 0);",
    "complete_recv": "@complete_recv[{tag}, arg1] = count();",
}
WANTED = {"ib_send_bw": ("run_end", "post", "complete"),
          "ib_send_lat": ("run_end", "post", "post_recv", "complete", "complete_recv")}


READY = "all probes attached"


def libc_of(binary: Path) -> str:
    """The libc.so.6 the tools load (ldd), for the readiness probe."""
    out = subprocess.run(["ldd", str(binary)], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.strip().startswith("libc.so.6 => "):
            return line.split("=>")[1].split("(")[0].strip()
    raise AssertionError(f"no libc.so.6 in ldd {binary}:\n{out}")


def script(tools: dict[str, str], limit: int, libc: str) -> str:
    # first in the script, so attached last (see the module's text)
    lines = [f'uprobe:{libc}:syncfs {{ printf("{READY}\\n"); }}']
    lines += [f"usdt:{path}:perftest:{probe} {{ " + PROBES[probe].format(tag=f'"{tag}"') + " }"
              for tag, path in tools.items() for probe in WANTED[tag]]
    return "\n".join(lines) + f"\ninterval:s:{limit} {{ exit(); }}\n"


def maps(text: str) -> dict[str, Any]:
    """bpftrace -f json's map lines: {"@name": {"key": value} or value}."""
    out: dict[str, Any] = {}
    for line in text.splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if rec.get("type") == "map":
            out.update(rec["data"])
    return out


def keyed(m: dict[str, Any], name: str, tag: str) -> dict[str, int]:
    """Map name's entries for tool tag, by their second key ("tag,KEY")."""
    got: dict[str, int] = {}
    for k, v in (m.get(name) or {}).items():
        parts = k.split(",")
        if parts[0] == tag:
            got[",".join(parts[1:])] = int(v)
    return got


class Tracer:
    """bpftrace on one node, its JSON into the lab's share."""

    def __init__(self, lab: Lab, node: int, workdir: Path, limit: int) -> None:
        share = lab.share()
        self.lab, self.node = lab, node
        self.out = share / f"usdt.node{node}.json"
        self.err = workdir / f"bpftrace.node{node}.log"
        self.out.unlink(missing_ok=True)
        bt = share / f"usdt.node{node}.bt"
        bt.write_text(script({t: str(BUILD / "perftest" / t) for t in TOOLS}, limit,
                             libc_of(BUILD / "perftest" / TOOLS[0])))
        self.log = open(self.err, "wb")
        self.proc = lab.start(node, ["bpftrace", "-f", "json", "-o", str(self.out), str(bt)],
                              limit + 30, self.log, subprocess.STDOUT)

    def text(self) -> str:
        return self.out.read_text(errors="replace") if self.out.exists() else ""

    def attached(self) -> bool:
        """The readiness probe fired: every probe is attached."""
        return READY in self.text()

    def failed(self) -> Optional[str]:
        if self.proc.poll() is None:
            return None
        msg = (self.err.read_text(errors="replace") + self.text()).strip()
        return msg or f"bpftrace exited {self.proc.returncode}"

    def wait(self, timeout: float) -> dict[str, Any]:
        self.timed_out = False
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.timed_out = True   # killed: bpftrace prints its maps only as it leaves
            self.proc.kill()
            self.proc.wait()
            self.lab.exec(self.node, ["pkill", "-9", "-x", "bpftrace"], timeout=30)
        self.log.close()
        return maps(self.text())


def prepare(lab: Lab, node: int) -> Optional[str]:
    """bpftrace present and tracefs mounted (mounted here when missing)."""
    r = lab.exec(node, ["sh", "-c", "command -v bpftrace >/dev/null || { echo 'bpftrace is not "
                        "installed (ci/deps installs it)'; exit 3; }; "
                        "grep -q ' /sys/kernel/tracing tracefs ' /proc/mounts || "
                        "mount -t tracefs nodev /sys/kernel/tracing"], timeout=30)
    return None if r.rc == 0 else (r.out.strip() or f"cannot mount tracefs (exit {r.rc})")


def attach(lab: Lab, workdir: Path, t0: float) -> "Tracer":
    tracer = Tracer(lab, 2, workdir, LIMIT)
    while not tracer.attached():
        why = tracer.failed()
        if why:
            pytest.skip(f"bpftrace cannot attach on node 2: {why[-400:]}")
        assert time.monotonic() - t0 < ATTACH_S, \
            f"bpftrace did not attach within {ATTACH_S} s: {tracer.text()[-400:]}"
        if '"attached_probes"' in tracer.text():   # attaching: poke the last probe
            lab.exec(2, ["sync", "-f", "/proc"], timeout=30)
        time.sleep(0.5)
    return tracer


def measure(lab: Lab, pair, dev: str, gid: int, workdir: Path):
    """bpftrace attached, both pairs run, what it counted; a list of what
    disagrees with the outside (empty: all exact), the evidence, notes."""
    t0 = time.monotonic()
    tracer = attach(lab, workdir, t0)
    attach_s = time.monotonic() - t0
    base = ["-d", dev, "-x", str(gid)]
    bw_argv = [str(BUILD / "perftest" / "ib_send_bw"), *base, "-s", "64", "-q", str(BW_QPS),
               "-n", str(BW_N)]
    lat_argv = [str(BUILD / "perftest" / "ib_send_lat"), *base, "-n", str(LAT_N)]
    bw = pair("send-bw", bw_argv, bw_argv, timeout=120)
    lat = pair("send-lat", lat_argv, lat_argv, timeout=120)
    # bpftrace leaves once both runs ended, or at its own bound (LIMIT s from
    # its start) with what it counted: wait for that, not kill it empty (a
    # CI run once saw {} after 60 s, on a busy host)
    cli = tracer.wait(max(60.0, LIMIT + 30 - (time.monotonic() - t0)))
    ev = (bw.evidence(20) + "\n" + lat.evidence(20) + "\nnode 2 probes: " +
          json.dumps(cli, sort_keys=True) +
          ("\nbpftrace did not leave by its own bound: killed" if tracer.timed_out else ""))
    assert bw.server.rc == 0 and bw.client.rc == 0, f"ib_send_bw exit {bw.server.rc}/{bw.client.rc}\n{ev}"
    assert lat.server.rc == 0 and lat.client.rc == 0, \
        f"ib_send_lat exit {lat.server.rc}/{lat.client.rc}\n{ev}"

    bad = []

    def check(got, want, what: str) -> None:
        if got != want:
            bad.append(f"{what}: {got} != {want}")

    # ib_send_bw client: every WR posted, for the QPNs it printed
    want = {str(q): BW_N for q in qpns(bw.client.text)}
    assert len(want) == BW_QPS, f"the client printed {len(want)} QPNs, not {BW_QPS}\n{ev}"
    check(keyed(cli, "@post", "ib_send_bw"), want, "ib_send_bw posted WRs per QPN")
    mod = cq_mod(bw.client.text)
    check(keyed(cli, "@complete", "ib_send_bw"), {q: signaled(BW_N, mod) for q in want},
          f"ib_send_bw send CQEs per QPN (cq_mod {mod})")
    check(keyed(cli, "@last_seq", "ib_send_bw"), {q: BW_N - 1 for q in want},
          "ib_send_bw last sequence")
    check(keyed(cli, "@bad_status", "ib_send_bw"), {"": 0}, "ib_send_bw failed CQEs")
    check(keyed(cli, "@end_status", "ib_send_bw"), {"0": 1}, "ib_send_bw run_end")
    # ib_send_lat client: M sends, M send CQEs, M receive CQEs, receives posted
    q = {str(x): LAT_N for x in qpns(lat.client.text)}
    assert len(q) == 1, f"ib_send_lat printed {len(q)} QPNs\n{ev}"
    for probe in ("@post", "@complete", "@complete_recv"):
        check(keyed(cli, probe, "ib_send_lat"), q, f"ib_send_lat {probe}")
    posted_recv = keyed(cli, "@post_recv", "ib_send_lat")
    if not (set(posted_recv) == set(q) and all(v >= LAT_N for v in posted_recv.values())):
        bad.append(f"ib_send_lat receives posted: {posted_recv}")
    check(keyed(cli, "@end_status", "ib_send_lat"), {"0": 1}, "ib_send_lat run_end")
    said = (f"bpftrace attached in {attach_s:.0f} s; ib_send_bw client: {BW_N * BW_QPS} posts, "
            f"{signaled(BW_N, mod) * BW_QPS} CQEs (cq_mod {mod}); ib_send_lat client: {LAT_N} "
            f"posts, send and receive CQEs")
    return bad, ev, said


@pytest.mark.name("count-wrs")
def test_usdt_counts(lab: Lab, pair, dev: str, gid: int, note, workdir: Path) -> None:
    for tool in TOOLS:
        assert os.access(BUILD / "perftest" / tool, os.X_OK), f"{tool} not built in {BUILD}"
    why = prepare(lab, 2)
    if why:
        pytest.skip(f"node 2: {why}")
    bad, ev, said = measure(lab, pair, dev, gid, workdir)
    assert not bad, "probes lost: " + "; ".join(bad) + "\n" + ev
    note(said)

# SPDX-License-Identifier: BSD-2-Clause
"""monitor/rdmamon in the lab, against ground truth from outside the tool.
rdmamon --json runs on node 1 (the servers' node) while ib_write_bw -q 8 and
ib_send_bw -c UD (ours, then Debian's each) and ibv_rc_pingpong run between
nodes 1 and 2: at an instant during the
run when `rdma -j resource` reads the same before and after a monitor
interval, that interval's per-device counts equal it (kernel objects
included), and after the run they are back to the idle baseline. A QP one
WR larger than the device allows is counted as a failed create_qp with its
errno, never as a QP. SIGINT prints the final summary. Skips when rdmamon is
not built (no clang/bpftool/libbpf) or the node has no BPF support."""

import json
import subprocess
import threading
from pathlib import Path
from typing import Any, Optional

import pytest

from benchlib import caps
from benchlib.labctl import Lab
from monitorlib import RDMAMON, Monitor
pytestmark = pytest.mark.nodes(2)
TYPES = ("pd", "cq", "qp", "mr", "cm_id", "ctx", "srq")

# A QP one send WR beyond the device's max_qp_wr: the create must fail.
BADQP_C = r"""
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <infiniband/verbs.h>
int main(int argc, char **argv) {
    struct ibv_device **l = ibv_get_device_list(NULL);
    struct ibv_context *c = NULL;
    for (int i = 0; l && l[i]; i++)
        if (!strcmp(ibv_get_device_name(l[i]), argv[1])) c = ibv_open_device(l[i]);
    if (!c) { fprintf(stderr, "no device %s\n", argv[1]); return 2; }
    struct ibv_device_attr a;
    if (ibv_query_device(c, &a)) return 2;
    struct ibv_pd *pd = ibv_alloc_pd(c);
    struct ibv_cq *cq = ibv_create_cq(c, 16, NULL, NULL, 0);
    if (!pd || !cq) return 2;
    struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
        .cap = { .max_send_wr = (unsigned)a.max_qp_wr + 1, .max_recv_wr = 1,
                 .max_send_sge = 1, .max_recv_sge = 1 } };
    errno = 0;
    struct ibv_qp *qp = ibv_create_qp(pd, &qa);
    if (qp) { printf("created\n"); ibv_destroy_qp(qp); return 1; }
    printf("failed errno %d\n", errno);
    ibv_destroy_cq(cq); ibv_dealloc_pd(pd); ibv_close_device(c);
    return 0;
}
"""


def dev_row(out: str, dev: str) -> dict[str, int]:
    rows = [r for r in json.loads(out) if r.get("ifname") == dev]
    assert rows, f"rdma resource lists no {dev}: {out}"
    return {t: int(rows[0].get(t, 0)) for t in TYPES}


def resource(lab: Lab, dev: str) -> dict[str, int]:
    d = lab.exec(1, ["rdma", "-j", "resource", "show"], timeout=60)
    assert d.rc == 0, f"rdma -j resource failed\n{d.evidence()}"
    return dev_row(d.out, dev)


def dev_counts(line: dict[str, Any], dev: str) -> Optional[dict[str, int]]:
    for d in line["devices"]:
        if d["name"] == dev:
            return {t: int(d["total"][t]) for t in TYPES}
    return None


# On node 1, in one exec: the monitor's line count N, rdma resource, wait
# until line N+1 is written (sampled after the first read: line N may have
# been sampled before it), rdma resource. The window is the monitor's
# interval plus two rdma calls in the guest, whatever the lab exec costs
# (2-4 s each under host load: three execs missed a UD run's 10 s).
STEADY_SH = """n=$(wc -l < "$1"); a=$(rdma -j resource show) || exit 3; i=0
while [ "$(wc -l < "$1")" -le $((n + 1)) ]; do
    i=$((i + 1)); [ $i -gt 300 ] && exit 4; sleep 0.05; done
b=$(rdma -j resource show) || exit 3
printf '%s\\n%s\\n%s\\n' "$((n + 1))" "$a" "$b"
"""


def steady_compare(lab: Lab, mon: Monitor, dev: str, want_qp: int, tries: int = 8,
                   running: Any = None) -> Optional[str]:
    """rdma resource, a monitor interval, rdma resource: when both readings
    agree (nothing changed meanwhile) the interval must equal them. None when
    the workload (running()) ended first."""
    for _ in range(tries):
        if running is not None and not running():
            return None
        d = lab.exec(1, ["sh", "-c", STEADY_SH, "_", str(mon.out)], timeout=60)
        assert d.rc == 0, f"steady read failed (3: rdma, 4: no monitor line in 15 s)\n{d.evidence()}"
        idx, ra, rb = d.out.split("\n", 2)
        a, b = dev_row(ra, dev), dev_row(rb.strip(), dev)
        if a == b and a["qp"] >= want_qp:
            line = mon.lines()[int(idx)]
            got = dev_counts(line, dev)
            assert got == a, f"rdmamon {got} != rdma resource {a}\n{json.dumps(line)[:2000]}"
            return f"{a}"
    raise AssertionError(f"never a steady instant with {want_qp} QPs on {dev}")


@pytest.fixture
def monitor_ready(lab: Lab, dev: str) -> None:
    need(None if RDMAMON.exists() else
         f"{RDMAMON} is not built (configure found no clang, bpftool or libbpf-dev)")
    need(caps.bpf(lab))


def need(reason: Optional[str]) -> None:
    if reason:
        pytest.skip(reason)


@pytest.mark.name("counts")
def test_counts(monitor_ready: None, lab: Lab, dev: str, gid: int, pair, ours, upstream_bin,
                workdir: Path, note) -> None:
    mon = Monitor(lab, workdir)
    try:
        first = mon.next_line(timeout=90)
        assert first["hooks_attached"] > 0 and first["kernel"]["qp"] >= 1, json.dumps(first)
        base = resource(lab, dev)
        idle = steady_compare(lab, mon, dev, 0)
        note(f"idle {idle}; hooks attached {first['hooks_attached']}, missing {first['hooks_missing']}")
        # iterations, not -D: 6.06 as a write_bw server fails its -D key exchange on rxe
        wq8 = ["-d", dev, "-x", str(gid), "-q", "8", "-s", "4096", "-n", "8000"]
        # long enough for a few steady reads (STEADY_SH: ~2-3 s each): UD by
        # duration, the pingpong by count (~1-2 ms a round trip under TCG)
        ud = ["-d", dev, "-x", str(gid), "-c", "UD", "-s", "1024", "-D", "10"]
        pingpong = ["ibv_rc_pingpong", "-d", dev, "-g", str(gid), "-n", "5000"]
        loads = [("ours ib_write_bw -q 8", [ours("ib_write_bw"), *wq8], 8),
                 ("6.06 ib_write_bw -q 8", [upstream_bin("ib_write_bw"), *wq8], 8),
                 ("ours ib_send_bw -c UD", [ours("ib_send_bw"), *ud], 1),
                 ("6.06 ib_send_bw -c UD", [upstream_bin("ib_send_bw"), *ud], 1),
                 ("ibv_rc_pingpong", pingpong, 1)]
        for name, argv, nqp in loads:
            for attempt in range(2):     # rxe RC status 9 under host load: lab noise, once
                res: dict[str, Any] = {}
                t = threading.Thread(target=lambda: res.update(p=pair(name.replace(" ", "-"),
                                                                       argv, argv)))
                t.start()
                try:
                    during = steady_compare(lab, mon, dev, base["qp"] + nqp, tries=30,
                                            running=t.is_alive)
                finally:
                    t.join()
                p = res["p"]
                if attempt == 1:
                    break
                if not p.ok and "status 9" in p.server.text + p.client.text:
                    note(f"{name}: status 9 (lab noise), run again")
                elif p.ok and during is None:
                    # the run ended before two rdma reads around a monitor
                    # interval agreed (each read is a guest exec, seconds under
                    # host load): no instant to compare, so once more
                    note(f"{name}: ended before a steady instant (host load), run again")
                else:
                    break
            assert p.ok, p.evidence()
            assert during is not None, f"{name}: never a steady instant with {nqp} QPs during the run"
            after = steady_compare(lab, mon, dev, 0)
            assert resource(lab, dev) == base, f"{name}: not back to the idle baseline"
            line = mon.next_line()
            assert dev_counts(line, dev) == base, f"{name}: rdmamon not back to idle: {json.dumps(line)[:1500]}"
            note(f"{name}: during {during}, after {after}")
        last = mon.lines()[-1]
        assert last["calls"]["create_qp"]["total"] >= 16 + 3, json.dumps(last["calls"])
        # 16 + 3 QPs on node 1: each to INIT and RTR at least
        assert last["calls"]["modify_qp"]["total"] >= 2 * (16 + 3), json.dumps(last["calls"])
        assert sum(last["lost"].values()) == 0, json.dumps(last["lost"])
    finally:
        rc = mon.stop()
    final = mon.lines()[-1]
    assert rc == 0 and final["final"] is True, f"exit {rc}, no final summary\n{mon.evidence()}"


@pytest.mark.name("failed-create")
def test_failed_create(monitor_ready: None, lab: Lab, dev: str, workdir: Path, note) -> None:
    src = workdir / "badqp.c"
    exe = lab.share() / "rdmamon-badqp"
    src.write_text(BADQP_C)
    cc = subprocess.run(["gcc", "-O1", "-o", str(exe), str(src), "-libverbs"],
                        capture_output=True, text=True, timeout=120)
    assert cc.returncode == 0, cc.stderr
    mon = Monitor(lab, workdir)
    try:
        mon.next_line(timeout=90)
        base = resource(lab, dev)
        d = lab.exec(1, [str(exe), dev], timeout=60)
        assert d.rc == 0 and "failed errno" in d.out, f"the oversized QP was not refused\n{d.evidence()}"
        err = int(d.out.split()[-1])
        line = mon.next_line()
        if line["calls"]["create_qp"]["failed_total"] < 1:   # the call may land in the next interval
            line = mon.next_line()
        failed = [f for f in line["failed"] if f["op"] == "create_qp"]
        assert failed and failed[0]["err"] == err, f"no failed create_qp errno {err}: {json.dumps(line['failed'])}"
        assert line["calls"]["create_qp"]["failed_total"] == 1, json.dumps(line["calls"]["create_qp"])
        # not a resource: the monitor's QPs are rdma resource's, the program's PD and CQ gone
        assert dev_counts(line, dev) == base == resource(lab, dev), f"{dev_counts(line, dev)} vs {base}"
        assert line["calls"]["alloc_pd"]["total"] + line["calls"]["create_cq"]["total"] >= 1 or \
            "ib_uverbs_alloc_pd" in line["hooks_missing"], json.dumps(line["calls"])
        note(f"create_qp refused with {failed[0]['errno']}: counted failed 1, live QPs {base['qp']}")
    finally:
        mon.stop()

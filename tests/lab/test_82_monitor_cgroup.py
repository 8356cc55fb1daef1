# SPDX-License-Identifier: BSD-2-Clause
"""rdmamon's per-cgroup counts against the kernel's own per-cgroup
accounting. Two workloads of ours (HOLD_C: a PD, a CQ, N RC QPs, M MRs each,
held until told to stop) run on node 1 in two cgroup2 cgroups made for the
test with the rdma controller enabled; at an instant when both cgroups'
`rdma.current` reads the same before and after a monitor interval, that
interval's --json names each cgroup by its path and its counts equal
`rdma.current` (hca_handle: device contexts; hca_object: the uverbs objects,
PD + CQ + QP + MR + SRQ + AH) and the holder's own counts, with the holder
as the top process. After the holders exit both cgroups read 0 in rdmamon
and in rdma.current. Skips when rdmamon is not built or the node has no BPF
support."""

import json
import time
from pathlib import Path

import pytest

from benchlib import caps
from benchlib.labctl import Lab
from monitorlib import (MONITOR_START, HOLD_C, RDMAMON, Holder, Monitor, compile_c, make_cgroups, rdma_current,
                        remove_cgroups)

pytestmark = pytest.mark.nodes(2)
CGS = {"/ptlab-tenant-a": (2, 1), "/ptlab-tenant-b": (5, 3)}   # path: (QPs, MRs)
OBJECT_TYPES = ("pd", "cq", "qp", "mr", "srq", "ah")


def need(reason):
    if reason:
        pytest.skip(reason)


def cg_entry(line, path):
    for c in line["cgroups"]:
        if c.get("path") == path:
            return c
    return None


def truth(lab: Lab, dev: str) -> dict[str, dict[str, int]]:
    return {cg: rdma_current(lab, cg, dev) for cg in CGS}


@pytest.mark.name("rdma-current")
def test_cgroup_counts(lab: Lab, dev: str, workdir: Path, note) -> None:
    need(caps.built(RDMAMON))
    need(caps.bpf(lab))
    exe = compile_c(lab, workdir, "rdmamon-hold", HOLD_C)
    t0 = time.monotonic()
    mon = Monitor(lab, workdir, tag="rdmamon-cg")
    holders = []
    try:
        mon.next_line(timeout=MONITOR_START)       # attached; cgroup2 mounted by rdmamon if it was not
        make_cgroups(lab, [c.lstrip("/") for c in CGS])
        for cg, (nqp, nmr) in CGS.items():
            holders.append(Holder(lab, exe, workdir, dev, cg, nqp, nmr))
        pids = {cg: h.ready() for cg, h in zip(CGS, holders)}
        for _ in range(6):
            a = truth(lab, dev)
            line = mon.next_line()
            b = truth(lab, dev)
            if a == b:
                break
        else:
            raise AssertionError("rdma.current never steady over an interval")
        for cg, (nqp, nmr) in CGS.items():
            c = cg_entry(line, cg)
            assert c is not None, f"no cgroup {cg} in rdmamon's interval: {json.dumps(line['cgroups'])}"
            live = c["live"]
            objects = sum(live[t] for t in OBJECT_TYPES)
            assert (live["ctx"], objects) == (a[cg]["hca_handle"], a[cg]["hca_object"]), \
                f"{cg}: rdmamon ctx {live['ctx']} objects {objects} ({live}) != rdma.current {a[cg]}"
            # the workload's own count: the kernel's accounting is not wrong either
            assert (live["pd"], live["cq"], live["qp"], live["mr"]) == (1, 1, nqp, nmr), f"{cg}: {live}"
            assert c["top"] and c["top"][0]["pid"] == pids[cg], f"{cg}: top {c['top']}, holder {pids[cg]}"
            note(f"{cg}: rdma.current {a[cg]['hca_handle']} handle, {a[cg]['hca_object']} objects "
                 f"= rdmamon ctx {live['ctx']}, pd+cq+qp+mr {objects} (qp {live['qp']}, mr {live['mr']})")
        for h in holders:
            h.stop()
        holders = []
        line = mon.next_line()
        for cg in CGS:
            c = cg_entry(line, cg)
            assert rdma_current(lab, cg, dev) == {"hca_handle": 0, "hca_object": 0}, cg
            assert c is None or sum(c["live"].values()) == 0, f"{cg} not back to 0: {c}"
        assert sum(line["lost"].values()) == 0, json.dumps(line["lost"])
        note(f"after exit: both cgroups 0 in rdmamon and rdma.current ({time.monotonic() - t0:.0f} s)")
    finally:
        for h in holders:
            h.stop()
        mon.stop()
        remove_cgroups(lab, [c.lstrip("/") for c in CGS])

# SPDX-License-Identifier: BSD-2-Clause
"""Capability probes: each returns None when the capability is there, else
the reason it is not (a sentence a skip can print)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Optional

from .labctl import Lab

UPSTREAM_PACKAGE = "Debian package perftest"


def upstream(bindir: str, tool: str = "ib_send_bw") -> Optional[str]:
    """Debian's perftest 6.06 (the reference build) has tool in bindir."""
    path = Path(bindir) / tool
    if os.access(path, os.X_OK):
        return None
    return f"{path} missing: Debian's 6.06 is not installed ({UPSTREAM_PACKAGE})"


def built(path: Path) -> Optional[str]:
    """A file of our build exists."""
    return None if path.exists() else f"{path} is not built (PT_BUILD={path.parents[1]})"


def multicast(lab: Lab) -> Optional[str]:
    """UD multicast needs three nodes on one L2 segment (two are joined
    point to point) and a multicast route on each node."""
    n = lab.nodes()
    if n < 3:
        return f"multicast needs a lab of 3 or more nodes on one segment (this one has {n})"
    d = lab.exec(1, ["ip", "route", "show", "224.0.0.0/4"], timeout=30)
    if d.rc != 0 or "224.0.0.0/4" not in d.out:
        return "node 1 has no multicast route (224.0.0.0/4)"
    return None


def rdma_cm(lab: Lab, node: int = 1) -> Optional[str]:
    """The rdma_cm user interface (/dev/infiniband/rdma_cm, rdma_ucm)."""
    d = lab.exec(node, ["test", "-c", "/dev/infiniband/rdma_cm"], timeout=30)
    return None if d.rc == 0 else f"node {node} has no /dev/infiniband/rdma_cm (rdma_ucm)"


def hw_timestamps(lab: Lab, device: str, node: int = 1) -> Optional[str]:
    """The device stamps completions with its clock (rxe has no clock:
    hca_core_clock 0)."""
    d = lab.exec(node, ["ibv_devinfo", "-v", "-d", device], timeout=60)
    m = re.search(r"hca_core_clock:\s*(\d+)", d.out)
    if d.rc != 0 or m is None:
        return f"ibv_devinfo -v -d {device} on node {node} names no hca_core_clock"
    if int(m.group(1)) == 0:
        return f"{device} has no hardware clock for CQE timestamps (hca_core_clock 0)"
    return None


def bpf(lab: Optional[Lab] = None, node: int = 1) -> Optional[str]:
    """BPF tooling: bpftool and a mounted bpffs (here, or on a lab node)."""
    script = "command -v bpftool >/dev/null && test -d /sys/fs/bpf"
    if lab is None:
        ok = shutil.which("bpftool") is not None and Path("/sys/fs/bpf").is_dir()
    else:
        ok = lab.exec(node, ["sh", "-c", script], timeout=30).rc == 0
    return None if ok else "no bpftool or no /sys/fs/bpf"

# SPDX-License-Identifier: BSD-2-Clause
"""CPU/memory placement: CPU lists, and placement specs resolved against a
host's topology (as printed by bench/nicinfo) into a numactl prefix."""

from __future__ import annotations

import re
from typing import Any, Iterable, Optional

Doc = dict[str, Any]        # a JSON object of nicinfo's (host, device)


class PlacementError(Exception):
    """A placement that cannot be honoured on this host; the text says why."""


def parse_cpulist(text: Optional[str]) -> list[int]:
    """'0-3,8,10-11' -> [0, 1, 2, 3, 8, 10, 11] (the kernel's list format).
    An empty text is an empty list (a memory-only NUMA node)."""
    if text is None:
        raise ValueError("no CPU list")
    text = text.strip()
    if not text:
        return []
    cpus: set[int] = set()
    for item in text.split(","):
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", item.strip())
        if not m:
            raise ValueError(f"bad CPU list '{text}': '{item}' is not N or N-M")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if hi < lo:
            raise ValueError(f"bad CPU list '{text}': range '{item}' runs backwards")
        if hi - lo > 65536:
            raise ValueError(f"bad CPU list '{text}': range '{item}' is too large")
        cpus.update(range(lo, hi + 1))
    return sorted(cpus)


def format_cpulist(cpu_set: Iterable[int]) -> str:
    """[0, 1, 2, 3, 8] -> '0-3,8'."""
    out = []
    cpus = sorted(set(cpu_set))
    i = 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else f"{cpus[i]}-{cpus[j]}")
        i = j + 1
    return ",".join(out)


MODES = ("none", "nic-local", "remote-node")


def check_spec(spec: str) -> str:
    """Validate a placement spec before any run: 'none', 'nic-local',
    'remote-node' or 'cpus:LIST'. Returns the spec; raises ValueError."""
    if spec in MODES:
        return spec
    if spec.startswith("cpus:"):
        if not parse_cpulist(spec[5:]):
            raise ValueError(f"placement '{spec}' names no CPU")
        return spec
    raise ValueError(f"unknown placement '{spec}' (want none, nic-local, remote-node or cpus:LIST)")


class Topology:
    """NUMA nodes and online CPUs of one host, from nicinfo's "host" object."""

    def __init__(self, host: Doc) -> None:
        self.name: str = host.get("hostname") or "?"
        self.nodes: dict[int, list[int]] = {}
        self.distance: dict[int, list[int]] = {}
        for n in host.get("numa_nodes") or []:
            self.nodes[n["node"]] = parse_cpulist(n.get("cpulist") or "")
            dist = (n.get("distance") or "").split()
            if dist:
                self.distance[n["node"]] = [int(d) for d in dist]
        online = host.get("online_cpus")
        self.online = parse_cpulist(online) if online else None

    def node_of(self, cpu: int) -> Optional[int]:
        for node, cpus in self.nodes.items():
            if cpu in cpus:
                return node
        return None

    def by_distance(self, home: int, candidates: list[int]) -> list[int]:
        """Candidates nearest to node home first (node id order when unknown)."""
        row = self.distance.get(home)
        ids = sorted(self.nodes)

        def key(n: int) -> tuple[int, int]:
            if row and n in ids and ids.index(n) < len(row):
                return (row[ids.index(n)], n)
            return (0, n)
        return sorted(candidates, key=key)


def _nic_node(topo: Topology, dev: Doc, mode: str) -> tuple[int, Optional[str]]:
    """The NIC's NUMA node, or node 0 when it reports none on a one-node host."""
    node: Optional[int] = dev.get("numa_node")
    if node is not None:
        if node not in topo.nodes:
            raise PlacementError(f"{mode}: {dev['device']} is on NUMA node {node}, which "
                                 f"host {topo.name} does not list")
        return node, None
    why = dev.get("numa_reason") or "no NUMA node reported"
    if len(topo.nodes) == 1:
        only = next(iter(topo.nodes))
        return only, f"{dev['device']}: {why}; single-node host, so node {only}"
    raise PlacementError(f"{mode}: {dev['device']}: {why}, and host {topo.name} has "
                         f"{len(topo.nodes)} NUMA nodes: give an explicit cpus:LIST")


def _online(topo: Topology, cpus: list[int]) -> list[int]:
    return [c for c in cpus if topo.online is None or c in topo.online]


def resolve(spec: str, host: Doc, dev: Optional[Doc]) -> Doc:
    """Resolve spec for one end. host: nicinfo's "host" object; dev: its
    device object (may be None for 'none' and 'cpus:'). Returns the record of
    the placement used: mode, cpus, mems, nic_numa_node, note, numactl (argv)."""
    check_spec(spec)
    rec: Doc = {"spec": spec, "mode": spec.split(":")[0], "cpus": None, "mems": None,
           "nic_numa_node": None, "note": None, "numactl": []}
    if spec == "none":
        return rec
    topo = Topology(host)
    if not topo.nodes:
        raise PlacementError(f"{spec}: host {topo.name} shows no NUMA nodes "
                             f"({host.get('numa_reason') or 'no node list'}); numactl cannot bind")
    if spec.startswith("cpus:"):
        cpus = parse_cpulist(spec[5:])
        missing = [c for c in cpus if c not in _online(topo, cpus) or topo.node_of(c) is None]
        if missing:
            raise PlacementError(f"{spec}: host {topo.name} has no online CPU "
                                 f"{format_cpulist(missing)} (online: {format_cpulist(topo.online or [])})")
        mems = sorted({n for n in (topo.node_of(c) for c in cpus) if n is not None})
    else:
        if dev is None:
            raise PlacementError(f"{spec}: no device information for host {topo.name}")
        nic, rec["note"] = _nic_node(topo, dev, spec)
        rec["nic_numa_node"] = nic
        if spec == "nic-local":
            local = dev.get("local_cpulist")
            cpus = _online(topo, parse_cpulist(local)) if local else []
            cpus = [c for c in cpus if c in topo.nodes[nic]] or _online(topo, topo.nodes[nic])
            mems = [nic]
        else:
            others = [n for n, c in topo.nodes.items() if n != nic and _online(topo, c)]
            if not others:
                raise PlacementError(f"remote-node: host {topo.name} has a single NUMA node "
                                     f"with CPUs (node {nic}); there is no remote node")
            far = topo.by_distance(nic, others)[0]
            cpus, mems = _online(topo, topo.nodes[far]), [far]
        if not cpus:
            raise PlacementError(f"{spec}: no online CPU on the chosen node of host {topo.name}")
    rec["cpus"] = format_cpulist(cpus)
    rec["mems"] = format_cpulist(mems)
    rec["numactl"] = ["numactl", f"--physcpubind={rec['cpus']}", f"--membind={rec['mems']}"]
    return rec


def summary(rec: Optional[Doc]) -> Optional[str]:
    """One line for the dataset: 'nic-local: cpus 0-1 mem 0'."""
    if rec is None:
        return None
    if rec["mode"] == "none":
        return "none"
    return f"{rec['mode']}: cpus {rec['cpus']} mem {rec['mems']}"

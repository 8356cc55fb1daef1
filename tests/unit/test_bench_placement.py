#!/usr/bin/python3 -B
# SPDX-License-Identifier: BSD-2-Clause
"""CPU lists and placement (nic-local, remote-node, cpus:LIST, none) resolved
on fake sysfs trees read by bench/nicinfo: the numactl prefix and the record."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchfake  # noqa: E402
from benchtap import BUILD, case, eq, raises, run  # noqa: E402
from benchlib import nic, placement  # noqa: E402
from benchlib.placement import PlacementError  # noqa: E402

NICINFO = os.path.join(BUILD, "bench", "nicinfo")


def host_doc(build):
    root = benchfake.tmpdir("placement-test.")
    build(root)
    p = subprocess.run([NICINFO, "--sysfs-root", root], capture_output=True, text=True,
                       timeout=20)
    eq(p.returncode, 0, p.stderr)
    return json.loads(p.stdout)


def place(spec, doc, device):
    return placement.resolve(spec, doc["host"], nic.device(doc, device))


@case
def cpulist_parsing():
    """'0-3,8,10-11' and other kernel CPU lists parse; the empty list is empty"""
    eq(placement.parse_cpulist("0-3,8,10-11"), [0, 1, 2, 3, 8, 10, 11])
    eq(placement.parse_cpulist("5"), [5])
    eq(placement.parse_cpulist(" 3,1,2-2 \n"), [1, 2, 3])
    eq(placement.parse_cpulist("0-1,1-2"), [0, 1, 2])
    eq(placement.parse_cpulist(""), [])


@case
def cpulist_errors():
    """bad CPU lists are refused with the offending item named"""
    for bad, why in (("3-1", "runs backwards"), ("a", "'a'"), ("1,,2", "''"), ("-1", "'-1'"),
                     ("1-", "'1-'"), ("0-7:2", "'0-7:2'"), ("1 2", "'1 2'"),
                     ("0-99999999", "too large")):
        raises(ValueError, placement.parse_cpulist, bad, match=why)
    raises(ValueError, placement.parse_cpulist, None)


@case
def cpulist_formatting():
    """CPU sets print as compact ranges and round-trip"""
    eq(placement.format_cpulist([0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11")
    eq(placement.format_cpulist([7, 5, 6, 5]), "5-7")
    eq(placement.format_cpulist([]), "")
    for text in ("0", "0-3,8,10-11", "1,3,5-6"):
        eq(placement.format_cpulist(placement.parse_cpulist(text)), text)


@case
def spec_check():
    """placement specs are checked before any run"""
    for ok in ("none", "nic-local", "remote-node", "cpus:0-3,8"):
        eq(placement.check_spec(ok), ok)
    for bad, why in (("numa", "unknown placement"), ("cpus:", "names no CPU"),
                     ("cpus:x", "bad CPU list"), ("Nic-Local", "unknown placement")):
        raises(ValueError, placement.check_spec, bad, match=why)


@case
def nic_local_on_two_nodes():
    """nic-local: the NIC's node 1, its local CPUs 2-3, memory on node 1"""
    rec = place("nic-local", host_doc(benchfake.two_node), "mlx5_0")
    eq(rec["numactl"], ["numactl", "--physcpubind=2-3", "--membind=1"])
    eq((rec["mode"], rec["cpus"], rec["mems"], rec["nic_numa_node"], rec["note"]),
       ("nic-local", "2-3", "1", 1, None))
    eq(placement.summary(rec), "nic-local: cpus 2-3 mem 1")


@case
def remote_node_on_two_nodes():
    """remote-node: the other node's CPUs and memory"""
    rec = place("remote-node", host_doc(benchfake.two_node), "mlx5_0")
    eq(rec["numactl"], ["numactl", "--physcpubind=0-1", "--membind=0"])
    eq(rec["nic_numa_node"], 1)


@case
def remote_node_nearest_by_distance():
    """remote-node picks the nearest other node by the distance table"""
    def build(root):
        benchfake.host(root, {0: "0", 1: "1", 2: "2"})
        # NIC on node 0; node 2 is nearer than node 1
        for n, dist in ((0, "10 30 20"), (1, "30 10 20"), (2, "20 20 10")):
            with open(os.path.join(root, f"devices/system/node/node{n}/distance"), "w") as f:
                f.write(dist + "\n")
        benchfake.pci_nic(root, numa=0, cpus="0")
    rec = place("remote-node", host_doc(build), "mlx5_0")
    eq((rec["cpus"], rec["mems"]), ("2", "2"))


@case
def explicit_cpus():
    """cpus:LIST binds those CPUs and the memory of the nodes that hold them"""
    doc = host_doc(benchfake.two_node)
    rec = place("cpus:0,3", doc, "mlx5_0")
    eq(rec["numactl"], ["numactl", "--physcpubind=0,3", "--membind=0-1"])
    rec = place("cpus:1", doc, None)  # needs no device
    eq(rec["numactl"], ["numactl", "--physcpubind=1", "--membind=0"])
    raises(PlacementError, place, "cpus:2-9", doc, "mlx5_0", match="no online CPU 4-9")


@case
def none_is_no_prefix():
    """none: no numactl at all, recorded as such"""
    rec = placement.resolve("none", {}, None)
    eq((rec["numactl"], rec["cpus"], rec["mems"]), ([], None, None))
    eq(placement.summary(rec), "none")


@case
def single_node_refuses_remote():
    """one NUMA node (the lab): remote-node is refused with a clear message"""
    e = raises(PlacementError, place, "remote-node", host_doc(benchfake.one_node), "rxe0")
    assert "single NUMA node" in str(e) and "no remote node" in str(e), e


@case
def rxe_nic_local_single_node():
    """rxe with no NUMA node on a one-node host: node 0, the reason noted"""
    rec = place("nic-local", host_doc(benchfake.one_node), "rxe0")
    eq(rec["numactl"], ["numactl", "--physcpubind=0-1", "--membind=0"])
    assert "single-node host, so node 0" in rec["note"], rec["note"]


@case
def rxe_nic_local_two_nodes_refused():
    """a NIC without a NUMA node on a two-node host: nic-local is refused, not guessed"""
    e = raises(PlacementError, place, "nic-local", host_doc(benchfake.two_node), "rxe0")
    assert "2 NUMA nodes" in str(e) and "cpus:LIST" in str(e), e


@case
def no_numa_information():
    """a host without NUMA information cannot be bound"""
    doc = {"host": {"hostname": "h", "numa_nodes": [], "numa_reason": "no NUMA information"},
           "devices": []}
    raises(PlacementError, placement.resolve, "nic-local", doc["host"], None,
           match="shows no NUMA nodes")


@case
def offline_local_cpus_skipped():
    """local CPUs that are offline are left out of the binding"""
    def build(root):
        benchfake.host(root, {0: "0-3"})
        with open(os.path.join(root, "devices/system/cpu/online"), "w") as f:
            f.write("0-1,3\n")
        benchfake.pci_nic(root, numa=0, cpus="0-3")
    rec = place("nic-local", host_doc(build), "mlx5_0")
    eq(rec["cpus"], "0-1,3")


if __name__ == "__main__":
    if not os.access(NICINFO, os.X_OK):
        print(f"1..0 # SKIP {NICINFO} is not built")
        sys.exit(0)
    sys.exit(run())

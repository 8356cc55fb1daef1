#!/usr/bin/python3 -B
# SPDX-License-Identifier: BSD-2-Clause
"""bench/nicinfo on fake sysfs trees: a PCIe NIC read through libpci and
through the sysfs files, a Soft-RoCE device (virtual), host NUMA topology,
physical limits, and bad input."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchfake  # noqa: E402
from benchtap import BUILD, case, eq, run  # noqa: E402
from benchlib import nic  # noqa: E402

NICINFO = os.path.join(BUILD, "bench", "nicinfo")


def nicinfo(root, *args, rc=0):
    p = subprocess.run([NICINFO, "--sysfs-root", root, *args], capture_output=True, text=True,
                       timeout=20)
    assert "Sanitizer" not in p.stderr and "runtime error" not in p.stderr, p.stderr
    eq(p.returncode, rc, f"exit code (stderr: {p.stderr.strip()})")
    return json.loads(p.stdout), p.stderr


def tree(build):
    d = benchfake.tmpdir("nicinfo-test.")
    build(d)
    return d


def dev(doc, name):
    return next(d for d in doc["devices"] if d["device"] == name)


@case
def pci_nic_through_libpci():
    """PCIe NIC: address, driver, NUMA, link from libpci config space, port, fw"""
    doc, _ = nicinfo(tree(benchfake.two_node), "mlx5_0")
    d = dev(doc, "mlx5_0")
    eq(d["virtual"], False)
    eq(d["fw_ver"], "16.35.2000")
    eq(d["node_guid"], "b859:9f03:00d4:e5a0")
    eq(d["pci"]["address"], "0000:3b:00.0")
    eq(d["pci"]["driver"], "mlx5_core")
    link = d["pci"]["link"]
    eq(link["source"], "libpci")
    # config space: status 8 GT/s x16, capability 16 GT/s x16
    eq(link["current"], {"speed_gts": 8.0, "width": 16, "gbps": 126.03})
    eq(link["max"], {"speed_gts": 16.0, "width": 16, "gbps": 252.06})
    eq((d["numa_node"], d["local_cpulist"]), (1, "2-3"))
    p = d["ports"][0]
    eq((p["port"], p["state"], p["phys_state"]), (1, "ACTIVE", "LinkUp"))
    eq((p["rate_gbps"], p["width"], p["netdev"], p["netdev_speed_mbps"]),
       (100.0, "4X", "ens1f0", 100000))
    eq(p["limit_gbps"], 100.0)
    assert "min(port rate 100 Gb/s, PCIe 126.03 Gb/s)" == p["limit_reason"], p["limit_reason"]


@case
def pci_nic_sysfs_fallback():
    """without a readable PCIe capability the link comes from sysfs, and libpci's reason is kept"""
    def build(root):
        benchfake.host(root, {0: "0-3"})
        benchfake.pci_nic(root, numa=0, cpus="0-3", config=False,
                          sysfs_link=("5.0 GT/s PCIe", "8", "8.0 GT/s PCIe", "16"))
    d = dev(nicinfo(tree(build))[0], "mlx5_0")
    link = d["pci"]["link"]
    eq(link["source"], "sysfs")
    assert link["libpci_reason"].startswith("libpci:"), link
    eq(link["current"], {"speed_gts": 5.0, "width": 8, "gbps": 32.0})
    eq(link["max"]["gbps"], 126.03)
    # the PCIe link (32 Gb/s) is narrower than the port (100 Gb/s)
    eq(d["ports"][0]["limit_gbps"], 32.0)


@case
def narrow_libpci_link_limits():
    """a link trained at 8 GT/s x4 limits a 100 Gb/s port to 31.51 Gb/s"""
    def build(root):
        benchfake.host(root, {0: "0-1"})
        benchfake.pci_nic(root, numa=0, cpus="0-1",
                          config=benchfake.pcie_config(3, 16, 3, 4), sysfs_link=None)
    d = dev(nicinfo(tree(build))[0], "mlx5_0")
    eq(d["pci"]["link"]["current"], {"speed_gts": 8.0, "width": 4, "gbps": 31.51})
    eq(d["ports"][0]["limit_gbps"], 31.51)


@case
def pci_nic_without_link_info():
    """no config space and no link files: link null with the reason, limit unknown"""
    def build(root):
        benchfake.host(root, {0: "0-1"})
        benchfake.pci_nic(root, numa=0, cpus="0-1", config=False, sysfs_link=None)
    d = dev(nicinfo(tree(build))[0], "mlx5_0")
    eq(d["pci"]["link"], None)
    assert "no current_link_speed" in d["pci"]["link_reason"], d["pci"]
    eq(d["ports"][0]["limit_gbps"], None)
    eq(d["ports"][0]["limit_reason"], "unknown: no PCIe link speed")


@case
def sub_function_uses_its_pci_device():
    """a device whose parent is a sub-function takes the link and NUMA node of the PCI device above it"""
    def build(root):
        benchfake.host(root, {0: "0-1", 1: "2-3"})
        benchfake.pci_nic(root)
        sf = "devices/pci0000:00/0000:3b:00.0/mlx5_core.sf.2"
        os.makedirs(os.path.join(root, sf, "infiniband/mlx5_2/ports"))
        os.symlink("../../../mlx5_core.sf.2", os.path.join(root, sf, "infiniband/mlx5_2/device"))
        os.symlink(f"../../{sf}/infiniband/mlx5_2", os.path.join(root, "class/infiniband/mlx5_2"))
        benchfake.port(root, f"{sf}/infiniband/mlx5_2", netdev="ens1f0")
    d = dev(nicinfo(tree(build), "mlx5_2")[0], "mlx5_2")
    eq((d["virtual"], d["pci"]["address"], d["pci"]["via"]), (False, "0000:3b:00.0", "mlx5_core.sf.2"))
    eq(d["pci"]["link"]["current"]["gbps"], 126.03)
    eq((d["numa_node"], d["local_cpulist"]), (1, "2-3"))
    eq(d["ports"][0]["limit_gbps"], 100.0)


@case
def relative_root():
    """a relative --sysfs-root works like the absolute one"""
    root = tree(benchfake.two_node)
    p = subprocess.run([NICINFO, "--sysfs-root", os.path.basename(root), "mlx5_0"],
                       cwd=os.path.dirname(root), capture_output=True, text=True, timeout=20)
    eq(p.returncode, 0, p.stderr)
    eq(json.loads(p.stdout)["devices"], nicinfo(root, "mlx5_0")[0]["devices"])


@case
def rxe_is_virtual():
    """rxe: virtual, no PCI, NUMA from its netdev's virtio parent, limit unknown and said so"""
    doc, _ = nicinfo(tree(benchfake.two_node), "rxe0")
    d = dev(doc, "rxe0")
    eq(d["virtual"], True)
    eq(d["pci"], None)
    assert d["pci_reason"].startswith("virtual:"), d["pci_reason"]
    eq(d["numa_source"], "netdev eth0 (virtio0)")
    eq(d["numa_node"], None)
    assert "numa_node -1" in d["numa_reason"], d["numa_reason"]
    eq(d["local_cpulist"], "0-1")
    p = d["ports"][0]
    eq(p["rate_gbps"], 2.5)      # what the kernel reports; not used as a limit
    eq(p["netdev_speed_mbps"], None)
    eq(p["limit_gbps"], None)
    eq(p["limit_reason"], "unknown: rxe0 is virtual (no PCIe link) and netdev eth0 reports no speed")


@case
def rxe_limit_from_netdev_speed():
    """rxe over a netdev that reports 10000 Mb/s: limit 10 Gb/s from the netdev"""
    def build(root):
        benchfake.host(root, {0: "0-1"})
        benchfake.rxe(root, numa="0", speed="10000")
    d = dev(nicinfo(tree(build))[0], "rxe0")
    eq(d["numa_node"], 0)
    eq(d["ports"][0]["limit_gbps"], 10.0)
    eq(d["ports"][0]["limit_reason"], "rxe0 is virtual: netdev eth0 speed")


@case
def all_devices_and_host():
    """no name: every device (sorted) and the host's NUMA nodes with CPU lists and distances"""
    doc, _ = nicinfo(tree(benchfake.two_node))
    eq([d["device"] for d in doc["devices"]], ["mlx5_0", "rxe0"])
    h = doc["host"]
    eq(h["online_cpus"], "0-1,2-3")  # as the file says
    eq(h["numa_nodes"], [{"node": 0, "cpulist": "0-1", "distance": "10 21"},
                         {"node": 1, "cpulist": "2-3", "distance": "21 10"}])
    assert h["hostname"] and h["kernel"], h


@case
def unknown_device_fails():
    """an unknown device: exit 1 and its name on stderr; the JSON still describes the host"""
    doc, err = nicinfo(tree(benchfake.one_node), "mlx5_9", rc=1)
    assert "no RDMA device 'mlx5_9'" in err, err
    eq(doc["devices"], [])
    eq(len(doc["host"]["numa_nodes"]), 1)


@case
def path_like_names_refused():
    """a device name with a slash is refused, not followed"""
    _, err = nicinfo(tree(benchfake.one_node), "../../devices", rc=1)
    assert "no RDMA device" in err, err


@case
def missing_root_is_empty():
    """a root without class/infiniband: no devices, exit 0, and the NUMA reason"""
    doc, err = nicinfo("/nonexistent-sysfs-root")
    eq(doc["devices"], [])
    eq(doc["host"]["numa_nodes"], [])
    assert "no NUMA information" in doc["host"]["numa_reason"], doc["host"]
    assert "no RDMA devices" in err, err


@case
def pair_limit():
    """a pair's limit is the smaller end's; an unknown end makes it null with the reason"""
    doc, _ = nicinfo(tree(benchfake.two_node))

    def narrow(root):
        benchfake.host(root, {0: "0-1"})
        benchfake.pci_nic(root, numa=0, cpus="0-1",
                          config=benchfake.pcie_config(3, 16, 3, 4), sysfs_link=None)
    mlx = nic.describe(doc, "mlx5_0", 1)
    slow = nic.describe(nicinfo(tree(narrow))[0], "mlx5_0", 1)
    eq((mlx["limit_gbps"], mlx["pcie_link"], mlx["pcie_max_link"], mlx["port_width"]),
       (100.0, "8 GT/s x16", "16 GT/s x16", "4X"))
    eq(nic.pair_limit(mlx, slow), (31.51, "server min(port rate 100 Gb/s, PCIe 31.51 Gb/s)"))
    rxe = nic.describe(doc, "rxe0", 1)
    lim, why = nic.pair_limit(mlx, rxe)
    eq(lim, None)
    eq(why, "server rxe0: unknown: rxe0 is virtual (no PCIe link) and netdev eth0 reports no speed")
    gone = nic.describe(doc, "mlx5_7", 1)
    eq(gone["nic_error"], "nicinfo does not list device mlx5_7")
    eq(nic.pair_limit(gone, gone)[1], "client and server mlx5_7: nicinfo does not list device mlx5_7")
    eq(nic.describe(doc, "mlx5_0", 2)["nic_error"], "mlx5_0 has no port 2")


@case
def bad_option_is_usage():
    """an unknown option prints the usage and exits 2"""
    p = subprocess.run([NICINFO, "--bogus"], capture_output=True, text=True, timeout=20)
    assert "Sanitizer" not in p.stderr, p.stderr
    eq(p.returncode, 2)
    assert "Usage: nicinfo" in p.stderr, p.stderr


if __name__ == "__main__":
    if not os.access(NICINFO, os.X_OK):
        print(f"1..0 # SKIP {NICINFO} is not built")
        sys.exit(0)
    sys.exit(run())

# SPDX-License-Identifier: BSD-2-Clause
"""Fake sysfs trees for nicinfo and placement tests: a two-node host with a
PCIe NIC (mlx5_0, 100 Gb/s port, PCIe 8 GT/s x16 on node 1) and a Soft-RoCE
rxe0 on a virtio netdev; or a one-node host with rxe0 only (like the lab)."""

import atexit
import os
import shutil
import socket
import tempfile


def tmpdir(prefix):
    """A temporary directory removed when the test program ends."""
    d = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, d, True)
    return d


class PortBlocks:
    """Blocks of consecutive TCP ports for the servers of one test program,
    inside [lo, hi). Each test program gets its own range, all below Linux's
    ephemeral range (32768 up): the ports loopback clients and port-0
    listeners of tests running in parallel take come from there, and a fake
    server sharing a port with one of them fails or meets the wrong peer.
    A block is handed out only when every port in it can be bound now."""

    def __init__(self, lo, hi, span):
        self.lo, self.hi, self.span = lo, hi, span
        self.next = lo + (os.getpid() * span) % (hi - lo - span)

    def _free(self, base):
        for p in range(base, base + self.span):
            s = socket.socket()
            try:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind(("", p))
            except OSError:
                return False
            finally:
                s.close()
        return True

    def take(self):
        for _ in range((self.hi - self.lo) // self.span):
            base = self.next
            self.next += self.span
            if self.next + self.span > self.hi:
                self.next = self.lo
            if self._free(base):
                return base
        raise RuntimeError(f"no {self.span} free TCP ports in {self.lo}..{self.hi}")


def _w(root, rel, text):
    p = os.path.join(root, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w") as f:
        f.write(text + "\n")


def _ln(root, rel, target):
    p = os.path.join(root, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    os.symlink(target, p)


def pcie_config(cap_gts_code=4, cap_width=16, sta_gts_code=3, sta_width=16):
    """256 bytes of config space with a PCI Express capability at 0x60."""
    c = bytearray(256)
    c[0:4] = bytes([0xb3, 0x15, 0x17, 0x10])
    c[0x06] = 0x10
    c[0x34] = 0x60
    c[0x60], c[0x62] = 0x10, 0x02
    c[0x6c:0x70] = (cap_gts_code | cap_width << 4).to_bytes(4, "little")
    c[0x72:0x74] = (sta_gts_code | sta_width << 4).to_bytes(2, "little")
    return bytes(c)


def host(root, nodes):
    """nodes: {node: "cpulist"}; distances 10 local, 21 remote."""
    ids = sorted(nodes)
    for n, cpus in nodes.items():
        _w(root, f"devices/system/node/node{n}/cpulist", cpus)
        _w(root, f"devices/system/node/node{n}/distance",
           " ".join("10" if m == n else "21" for m in ids))
    allc = ",".join(c for c in nodes.values() if c)
    _w(root, "devices/system/cpu/online", allc)


def port(root, ibdir, num=1, rate="100 Gb/sec (4X EDR)", netdev=None, layer="Ethernet"):
    d = f"{ibdir}/ports/{num}"
    _w(root, f"{d}/state", "4: ACTIVE")
    _w(root, f"{d}/phys_state", "5: LinkUp")
    _w(root, f"{d}/rate", rate)
    _w(root, f"{d}/link_layer", layer)
    if netdev:
        _w(root, f"{d}/gid_attrs/ndevs/0", netdev)


def pci_nic(root, addr="0000:3b:00.0", name="mlx5_0", numa=1, cpus="2-3", config=True,
            sysfs_link=("8.0 GT/s PCIe", "16", "16.0 GT/s PCIe", "16"), speed="100000"):
    dev = f"devices/pci0000:00/{addr}"
    _w(root, f"{dev}/numa_node", str(numa))
    _w(root, f"{dev}/local_cpulist", cpus)
    if sysfs_link:
        for f, v in zip(("current_link_speed", "current_link_width", "max_link_speed",
                         "max_link_width"), sysfs_link):
            _w(root, f"{dev}/{f}", v)
    if config:
        with open(os.path.join(root, dev, "config"), "wb") as f:
            f.write(config if isinstance(config, bytes) else pcie_config())
    os.makedirs(os.path.join(root, "bus/pci/drivers/mlx5_core"), exist_ok=True)
    _ln(root, f"{dev}/driver", "../../../bus/pci/drivers/mlx5_core")
    _ln(root, f"bus/pci/devices/{addr}", f"../../../{dev}")
    ib = f"{dev}/infiniband/{name}"
    _w(root, f"{ib}/fw_ver", "16.35.2000")
    _w(root, f"{ib}/node_guid", "b859:9f03:00d4:e5a0")
    _w(root, f"{ib}/node_type", "1: CA")
    _ln(root, f"{ib}/device", "../../../" + addr)
    _ln(root, f"class/infiniband/{name}", f"../../{ib}")
    port(root, ib, netdev="ens1f0")
    _w(root, f"{dev}/net/ens1f0/speed", speed)
    _ln(root, f"{dev}/net/ens1f0/device", "../../../" + addr)
    _ln(root, "class/net/ens1f0", f"../../{dev}/net/ens1f0")


def rxe(root, name="rxe0", netdev="eth0", pci="0000:00:02.0", numa="-1", cpus="0-1",
        speed="-1"):
    """Soft-RoCE: no parent device; its netdev sits on a virtio PCI function."""
    ib = f"devices/virtual/infiniband/{name}"
    _w(root, f"{ib}/node_guid", "5054:00ff:fe12:3401")
    _w(root, f"{ib}/node_type", "1: CA")
    _ln(root, f"class/infiniband/{name}", f"../../{ib}")
    port(root, ib, rate="2.5 Gb/sec (1X SDR)", netdev=netdev)
    dev = f"devices/pci0000:00/{pci}"
    _w(root, f"{dev}/numa_node", numa)
    _w(root, f"{dev}/local_cpulist", cpus)
    nd = f"{dev}/virtio0/net/{netdev}"
    _w(root, f"{nd}/speed", speed)
    _ln(root, f"{nd}/device", "../../../virtio0")
    _ln(root, f"class/net/{netdev}", f"../../{nd}")


def two_node(root):
    host(root, {0: "0-1", 1: "2-3"})
    pci_nic(root)
    rxe(root)


def one_node(root):
    host(root, {0: "0-1"})
    rxe(root)

# SPDX-License-Identifier: BSD-2-Clause
"""Two nodes come up with their RDMA device (found, rxe on eth0) ACTIVE and
the IPv4-mapped RoCE v2 GID at the GID index the tests use."""

import pytest

from benchlib.labctl import Lab


def mapped_gid(ip: str) -> str:
    a, b, c, d = (int(x) for x in ip.split("."))
    return f"0000:0000:0000:0000:0000:ffff:{a:02x}{b:02x}:{c:02x}{d:02x}"


@pytest.mark.nodes(2)
@pytest.mark.parametrize("node", [1, 2], ids=["node1", "node2"])
def test_node_ready(lab: Lab, gid: int, node: int, note) -> None:
    dev = lab.device(node)
    port = f"/sys/class/infiniband/{dev}/ports/1"
    d = lab.exec(node, ["cat", f"{port}/state", f"{port}/gids/{gid}",
                        f"{port}/gid_attrs/types/{gid}"], timeout=60)
    assert d.rc == 0, f"node {node}: cannot read {dev} sysfs\n{d.evidence()}"
    lines = d.out.splitlines()
    note(f"node {node}: {dev}: {' '.join(lines)}")
    assert len(lines) == 3, f"node {node}: {d.evidence()}"
    state, g, kind = lines
    assert "4: ACTIVE" in state, f"node {node}: {dev} port not ACTIVE: {state}"
    want = mapped_gid(lab.addr(node))
    assert g == want, f"node {node}: GID {gid} is {g}, not {want}"
    assert kind == "RoCE v2", f"node {node}: GID {gid} is {kind}, not RoCE v2"

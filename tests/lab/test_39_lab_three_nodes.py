# SPDX-License-Identifier: BSD-2-Clause
"""Three nodes on one L2 segment: the RDMA device ACTIVE everywhere, everyone
reaches everyone. Runs just before the multicast tests (40, 41), which need
the same three nodes: one lab boot for all."""

import pytest

from benchlib.labctl import Lab

NODES = (1, 2, 3)


@pytest.mark.nodes(3)
@pytest.mark.parametrize("node", NODES, ids=[f"node{n}" for n in NODES])
def test_node(lab: Lab, node: int, note) -> None:
    dev = lab.device(node)   # fails unless a device's port 1 is ACTIVE
    d = lab.exec(node, ["grep", "-q", "ACTIVE", f"/sys/class/infiniband/{dev}/ports/1/state"])
    assert d.rc == 0, f"node {node}: {dev} not ACTIVE\n{d.evidence()}"
    for other in NODES:
        if other == node:
            continue
        d = lab.exec(node, ["ping", "-c", "1", "-W", "10", lab.addr(other)], timeout=60)
        assert d.rc == 0, f"node {node} cannot reach node {other}\n{d.evidence()}"
    note(f"node {node}: {dev} ACTIVE, reaches the other two")

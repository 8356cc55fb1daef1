# SPDX-License-Identifier: BSD-2-Clause
"""Debian's upstream ib_send_bw (6.06) RC and UD between node 1 and node 2:
both sides exit 0 and report the requested iteration count (at the default
size: 64 KiB for RC, the RoCE MTU for UD)."""

import pytest

from benchlib import results
from benchlib.labctl import Lab


@pytest.mark.nodes(2)
@pytest.mark.parametrize("conn", ["RC", "UD"])
def test_upstream(lab: Lab, pair, upstream_bin, dev: str, gid: int, conn: str, note) -> None:
    bw = upstream_bin("ib_send_bw")
    args = [bw, "-d", dev, "-x", str(gid), "-F", "-n", "300"] + (["-c", "UD"] if conn == "UD" else [])
    size = 65536 if conn == "RC" else lab.ud_mtu()
    p = pair(conn.lower(), args, args)
    assert p.ok, f"{conn}: server {p.server.rc} client {p.client.rc}\n{p.evidence()}"
    for role, side in (("client", p.client), ("server", p.server)):
        why, n = results.expect_row(side.text, size, 300)
        assert why is None, f"{conn} {role}: {why}\n{p.evidence()}"
        if n:
            note(f"{conn} {role}: {n}")
    note(f"{conn}: {'; '.join(str(r) for r in results.rows(p.client.text))}")

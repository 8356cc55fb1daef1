# SPDX-License-Identifier: BSD-2-Clause
"""--use-srq (send_bw, send_lat): the receives of every QP go to one shared
receive queue of -r entries. Against Debian's 6.06 (it has the option) in
both roles for RC, and UD with our server, the side upstream's UD + SRQ bug
hits (users-asks: receive completion errors); ours against ours for -q 2
and UD. Checks: both exits 0, rows on both sides, and "Using SRQ : ON" in
each side's header."""


import pytest

from benchlib import results
from benchlib.labctl import Lab

pytestmark = pytest.mark.nodes(2)

SRQ_ON = "Using SRQ      : ON"

# name, tool, server build, client build, arguments
CELLS = [
    ("send_bw/rc/ours-up", "send_bw", "ours", "up", "-n 200"),
    ("send_bw/rc/up-ours", "send_bw", "up", "ours", "-n 200"),
    ("send_bw/rc-q2/ours-ours", "send_bw", "ours", "ours", "-n 200 -q 2 -r 64"),
    ("send_bw/ud/ours-ours", "send_bw", "ours", "ours", "-c UD -s 1024 -n 200"),
    ("send_bw/ud/ours-up", "send_bw", "ours", "up", "-c UD -s 1024 -n 200"),
    ("send_bw/bidir/ours-ours", "send_bw", "ours", "ours", "-b -s 4096 -n 200"),
    ("send_lat/rc/ours-up", "send_lat", "ours", "up", "-n 100"),
    ("send_lat/rc/up-ours", "send_lat", "up", "ours", "-n 100"),
    ("send_lat/ud/ours-ours", "send_lat", "ours", "ours", "-c UD -n 100"),
]


@pytest.mark.name("{id}")
@pytest.mark.parametrize("cell", CELLS, ids=[c[0] for c in CELLS])
def test_srq(lab: Lab, pair, binary, dev: str, gid: int, note, cell: tuple) -> None:
    name, tool, srv, cli, args = cell
    a = ["-d", dev, "-x", str(gid), "-F", "--use-srq", *args.split()]
    p = pair(name.replace("/", "-"), [binary(srv, tool), *a], [binary(cli, tool), *a])
    ev = p.evidence(25)
    assert p.server.rc == 0 and p.client.rc == 0, f"exit {p.server.rc}/{p.client.rc}\n{ev}"
    for role, text in (("server", p.server.text), ("client", p.client.text)):
        assert SRQ_ON in text, f"{role}: no '{SRQ_ON}'\n{ev}"
        assert results.row_ok(text, tool.endswith("lat")), f"{role}: no result row with values > 0\n{ev}"
    note(f"{name}: {results.rows(p.client.text)[-1]}")

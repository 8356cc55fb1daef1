# SPDX-License-Identifier: BSD-2-Clause
"""--send_with_imm (send_bw, send_lat) and --write_with_imm (write_bw,
write_lat): ours against ours, as Debian's 6.06 lacks both options (6.29's).
Each cell checks the header's test name (Send_imm / RDMA_Write_imm), both
exits and rows on both sides: with --write_with_imm the write_bw server is a
receiver and prints its own row (docs/wire-protocol.md §6.4). The mismatch
cells give the option to the server only: its receive completions then lack
immediate data, and it must fail saying so. The warm-up cells give
--perform_warm_up to both sides (nothing on the wire says it)."""

from typing import Callable

import pytest

from benchlib import results
from benchlib.labctl import Lab

pytestmark = pytest.mark.nodes(2)


def bw_pos(text: str) -> bool:
    return any(results.positive(r.bw_avg) for r in results.rows(text))


def lat_pos(text: str) -> bool:
    return any(r.t_min > 0 and r.t_min <= r.t_typical <= r.t_max for r in results.rows(text))


# name, tool, args, test name, row check
CELLS: list[tuple[str, str, str, str, Callable[[str], bool]]] = [
    ("send_bw/rc", "send_bw", "--send_with_imm -n 200", "Send_imm BW Test", bw_pos),
    ("send_bw/ud", "send_bw", "--send_with_imm -c UD -n 200 -s 1024", "Send_imm BW Test", bw_pos),
    ("send_bw/bidir", "send_bw", "--send_with_imm -b -n 200 -s 4096", "Send_imm Bidirectional BW Test",
     bw_pos),
    ("send_bw/old-post", "send_bw", "--send_with_imm --use_old_post_send -n 200", "Send_imm BW Test",
     bw_pos),
    ("send_lat/rc", "send_lat", "--send_with_imm -n 100", "Send_imm Latency Test", lat_pos),
    ("send_lat/ud", "send_lat", "--send_with_imm -c UD -n 100", "Send_imm Latency Test", lat_pos),
    ("write_bw/rc", "write_bw", "--write_with_imm -n 200", "RDMA_Write_imm BW Test", bw_pos),
    ("write_bw/uc", "write_bw", "--write_with_imm -c UC -n 200 -s 4096", "RDMA_Write_imm BW Test",
     bw_pos),
    ("write_bw/bidir", "write_bw", "--write_with_imm -b -n 200 -s 4096",
     "RDMA_Write_imm Bidirectional BW Test", bw_pos),
    ("write_bw/old-post", "write_bw", "--write_with_imm --use_old_post_send -n 200 -q 2",
     "RDMA_Write_imm BW Test", bw_pos),
    # the server consumes the client's warm-up writes apart: counted in its
    # run they would end it early and leave the client's last writes without
    # receives (RNR until the run fails)
    ("write_bw/warm-up", "write_bw", "--write_with_imm --perform_warm_up -n 200 -q 2 -s 4096",
     "RDMA_Write_imm BW Test", bw_pos),
    ("write_bw/warm-up-bidir", "write_bw", "--write_with_imm --perform_warm_up -b -n 200 -s 4096",
     "RDMA_Write_imm Bidirectional BW Test", bw_pos),
    ("write_lat/rc", "write_lat", "--write_with_imm -n 100", "RDMA_Write_imm Latency Test", lat_pos),
    ("write_lat/uc", "write_lat", "--write_with_imm -c UC -n 100", "RDMA_Write_imm Latency Test",
     lat_pos),
]


@pytest.mark.name("{id}")
@pytest.mark.parametrize("cell", CELLS, ids=[c[0] for c in CELLS])
def test_imm(lab: Lab, pair, ours, dev: str, gid: int, note, cell: tuple) -> None:
    name, tool, args, title, rows_ok = cell
    a = ["-d", dev, "-x", str(gid), *args.split()]
    b = ours(f"ib_{tool}")
    p = pair(name.replace("/", "-"), [b, *a], [b, *a])
    ev = p.evidence(25)
    assert p.server.rc == 0 and p.client.rc == 0, f"exit {p.server.rc}/{p.client.rc}\n{ev}"
    for role, text in (("server", p.server.text), ("client", p.client.text)):
        assert title in text, f"{role}: no '{title}'\n{ev}"
        assert rows_ok(text), f"{role}: no result row with values > 0\n{ev}"
    note(f"{name}: {results.rows(p.client.text)[-1]}")


# The server expects immediate data, the client sends none.
MISMATCH = [("send_bw", "--send_with_imm", "-n 200"), ("send_lat", "--send_with_imm", "-n 50"),
            ("write_lat", "--write_with_imm", "-n 50")]


@pytest.mark.name("mismatch-{id}")
@pytest.mark.parametrize("tool,opt,args", MISMATCH, ids=[m[0] for m in MISMATCH])
def test_mismatch(lab: Lab, pair, ours, dev: str, gid: int, tool: str, opt: str, args: str) -> None:
    a = ["-d", dev, "-x", str(gid), *args.split()]
    b = ours(f"ib_{tool}")
    # write_lat without the option polls memory: the server's receive never
    # comes, so bound the wait (--oob_timeout ends a stalled run)
    p = pair(f"mismatch-{tool}", [b, *a, opt, "--oob_timeout", "15"], [b, *a, "--oob_timeout", "15"])
    ev = p.evidence(25)
    assert p.server.rc != 0, f"server exit 0 without immediate data\n{ev}"
    if tool != "write_lat":
        assert "without immediate data" in p.server.text, f"server did not name the cause\n{ev}"

# SPDX-License-Identifier: BSD-2-Clause
"""The other seven tools: ours <-> ours and ours <-> Debian's 6.06 in both
roles, RC (UC/UD where the tool allows them), default size and -a.
The -a cells (23 sizes up to 8 MiB, most of this test's time) run only
across binaries and in one role each: where the server only waits (the
write/read tools) ours is the client; send_lat, where both sides post,
has ours serving; write_lat ours as client. Every other cell runs in all
three pairings (and send_bw -a in lab 30), so each role of ours meets
6.06 in every tool at the default size.
A cell passes when both sides exit 0 and the client's rows have exactly the
expected sizes and iteration counts, with BW or message rate > 0 (BW tools)
or 0 < t_min <= t_typical <= t_max (latency tools). Servers that print rows
must agree with the client: send_lat and write_lat print their own (checked
like the client's), write/read/atomic_bw the client's final row; read_lat
and atomic_lat servers print none."""

from typing import Optional

import pytest

from benchlib import results

ALL = [1 << i for i in range(1, 24)]
# tool, mode, arguments, sizes expected, iterations
CELLS = [
    ("send_lat", "rc", "-n 30", [2], 30),
    ("send_lat", "ud", "-c UD -n 30", [2], 30),
    ("send_lat", "uc", "-c UC -n 30", [2], 30),
    ("send_lat", "rc-all", "-a -n 5", ALL, 5),
    ("write_lat", "rc", "-n 30", [2], 30),
    ("write_lat", "uc", "-c UC -n 30", [2], 30),
    ("write_lat", "rc-all", "-a -n 5", ALL, 5),
    ("read_lat", "rc", "-n 30", [2], 30),
    ("read_lat", "rc-all", "-a -n 5", ALL, 5),
    ("atomic_lat", "rc", "-n 30", [8], 30),
    ("write_bw", "rc", "-n 100", [65536], 100),
    ("write_bw", "uc", "-c UC -n 100", [65536], 100),
    ("write_bw", "rc-all", "-a -n 5", ALL, 5),
    ("read_bw", "rc", "-n 100", [65536], 100),
    ("read_bw", "rc-all", "-a -n 5", ALL, 5),
    ("atomic_bw", "rc", "-n 100", [8], 100),
]
PAIRS = [("ours", "ours"), ("ours", "up"), ("up", "ours")]   # server, client
# the one pairing of each -a cell (see above)
ALL_PAIR = {"send_lat": ("ours", "up")}
PARAMS = [pytest.param(i, s, c, id=f"{t}/{m}/{s}-{c}")
          for i, (t, m, _, _, _) in enumerate(CELLS) for s, c in PAIRS
          if not m.endswith("-all") or (s, c) == ALL_PAIR.get(t, ("up", "ours"))]


def lat_ok(rs: list[results.Row]) -> bool:
    """Every row has 0 < t_min <= t_typical <= t_max (0.005 usec slack)."""
    return bool(rs) and all(r.t_min > 0 and r.t_min <= r.t_typical + 0.005
                            and r.t_typical <= r.t_max + 0.005 for r in rs)


def rows_problem(text: str, sizes: list[int], iters: int, kind: str) -> Optional[str]:
    rs = results.rows(text)
    got = [(r.size, r.iters) for r in rs]
    if got != [(s, iters) for s in sizes]:
        return f"rows {got}, expected sizes {sizes} with {iters} iterations"
    if kind == "lat":
        return None if lat_ok(rs) else "a row without 0 < t_min <= t_typical <= t_max"
    bad = [str(r) for r in rs if not (results.positive(r.bw_avg) or results.positive(r.msg_rate))]
    return f"rows with BW and message rate 0: {bad}" if bad else None


@pytest.mark.nodes(2)
@pytest.mark.parametrize("cell,srv,cli", PARAMS)
def test_cell(pair, ours, upstream_bin, dev: str, gid: int, note,
              cell: int, srv: str, cli: str) -> None:
    tool, mode, margs, sizes, iters = CELLS[cell]
    kind = "lat" if tool.endswith("_lat") else "bw"

    def binary(build: str) -> str:
        return ours(f"ib_{tool}") if build == "ours" else upstream_bin(f"ib_{tool}")
    args = ["-d", dev, "-x", str(gid), "-F", *margs.split()]
    p = pair(f"{tool}-{mode}-{srv}-{cli}", [binary(srv), *args], [binary(cli), *args])
    ev = p.evidence(15)
    assert p.server.rc == 0 and p.client.rc == 0, \
        f"exit server {p.server.rc}, client {p.client.rc}\n{ev}"
    why = rows_problem(p.client.text, sizes, iters, kind)
    assert why is None, f"client rows: {why}\n{ev}"
    if tool in ("send_lat", "write_lat"):
        why = rows_problem(p.server.text, sizes, iters, "lat")
        assert why is None, f"server rows: {why}\n{ev}"
    elif kind == "bw":   # the server prints the client's final row
        last = results.shape(p.client.text)[-1:]
        assert results.shape(p.server.text) == last, \
            f"server row {results.shape(p.server.text)}, not the client's last {last}\n{ev}"
    else:
        assert not results.rows(p.server.text), f"the server printed rows\n{ev}"
    note(f"{tool}/{mode}/{srv}-{cli}: {results.rows(p.client.text)[-1]}")

# SPDX-License-Identifier: BSD-2-Clause
"""rdma_cm modes: -z (the out-of-band messages over an RC QP that rdma_cm
connects, keys as raw structs) and -R (the data QPs created and connected by
rdma_cm; UD takes the peer's QPN, Q_Key and path from rdma_cm and, for -b
and latency tests, a SEND_WITH_IMM back to the server). Ours <-> Debian's
6.06 in both roles (the RDMA-verb tools alternate roles so that both our
server and our client meet 6.06 over -R). Then the raw key layouts, ours on
both sides: 56 bytes up to 6.28, 64 from 6.29 (played by ours announcing
6.29): chosen by the peer's version, and a mismatch is refused with both
layouts named.

Per cell: both sides exit 0; the client's row has the size and count with
figures > 0 (BW average or message rate; t_min) unless the client is 6.06
(its CPU-MHz clock prints 0.00 in a loaded VM); our send_* server's row
too; and each of our ends' header says "Data ex. method : rdma_cm" (and
"rdma_cm QPs : ON" for -R).

R-*-srq: --use-srq with -R (rdma_create_qp on the SRQ; UD's address
message received through it) against 6.06, RC in both roles.
bind-source: --bind_source_ip with -R (its -z channel and its QPs) between ours (the client's cm
ids resolve from node 2's own address); an address node 2 does not have
(192.0.2.9) is refused at rdma_resolve_addr, before any connection.
hw-rate-limit-refused: -R with the HW rate limiter is refused as upstream
refuses it."""

import re
from typing import Optional

import pytest

from benchlib import caps, results
from benchlib.labctl import Lab

UPP = [("ours", "up"), ("up", "ours")]
# tool, mode, arguments, size ("ud": the RoCE MTU), iterations, pairs
CELLS = [
    ("send_bw", "z-rc", "-z -n 100", 65536, 100, UPP),
    ("send_bw", "z-ud", "-z -c UD -n 100", "ud", 100, UPP),
    ("send_bw", "R-rc", "-R -n 100", 65536, 100, UPP),
    ("send_bw", "R-ud", "-R -c UD -n 100", "ud", 100, UPP),
    ("send_bw", "R-rc-q2", "-R -q 2 -n 50", 65536, 100, [("ours", "up")]),
    ("send_bw", "R-ud-bidir", "-R -c UD -b -n 50", "ud", 50, UPP),
    ("send_bw", "R-rc-srq", "-R --use-srq -n 100", 65536, 100, UPP),
    ("send_bw", "R-ud-bidir-srq", "-R -c UD -b --use-srq -n 50", "ud", 50, [("ours", "up")]),
    ("send_lat", "R-ud", "-R -c UD -n 50", 2, 50, UPP),
    ("write_bw", "R-rc", "-R -n 100", 65536, 100, [("up", "ours")]),
    ("read_bw", "R-rc", "-R -n 100", 65536, 100, [("ours", "up")]),
    ("atomic_bw", "R-rc", "-R -n 100", 8, 100, [("up", "ours")]),
    ("write_lat", "R-rc", "-R -n 50", 2, 50, [("ours", "up")]),
    ("write_lat", "z-rc", "-z -n 50", 2, 50, [("up", "ours")]),
    ("read_lat", "R-rc", "-R -n 50", 2, 50, [("ours", "up")]),
    ("atomic_lat", "R-rc", "-R -n 50", 8, 50, [("up", "ours")]),
]
PARAMS = [pytest.param(i, s, c, id=f"{t}/{m}/{s}-{c}")
          for i, (t, m, _, _, _, pairs) in enumerate(CELLS) for s, c in pairs]

pytestmark = pytest.mark.nodes(2)


def rows_ok(text: str, size: int, iters: int, kind: str, any_figures: bool = False) -> bool:
    """A row of that size and count with figures > 0 (any: figures may be 0)."""
    for r in results.rows(text):
        if r.size == size and r.iters == iters:
            if any_figures or (kind == "bw" and (results.positive(r.bw_avg)
                                                 or results.positive(r.msg_rate))) \
                    or (kind == "lat" and results.positive(r.t_min)):
                return True
    return False


@pytest.fixture
def cm(lab: Lab) -> None:
    caps_reason: Optional[str] = caps.rdma_cm(lab, 1) or caps.rdma_cm(lab, 2)
    if caps_reason:
        pytest.skip(caps_reason)


@pytest.mark.name("{id}")
@pytest.mark.parametrize("cell,srv,cli", PARAMS)
def test_cell(cm: None, lab: Lab, pair, ours, upstream_bin, dev: str, gid: int, note,
              cell: int, srv: str, cli: str) -> None:
    tool, mode, margs, size_spec, iters, _ = CELLS[cell]
    size = lab.ud_mtu() if size_spec == "ud" else int(size_spec)
    kind = "lat" if tool.endswith("_lat") else "bw"

    def binary(build: str) -> str:
        return ours(f"ib_{tool}") if build == "ours" else upstream_bin(f"ib_{tool}")
    args = ["-d", dev, "-x", str(gid), "-F", *margs.split()]
    p = pair(f"{tool}-{mode}-{srv}-{cli}", [binary(srv), *args], [binary(cli), *args])
    ev = p.evidence(15)
    assert p.server.rc == 0 and p.client.rc == 0, \
        f"exit server {p.server.rc}, client {p.client.rc}\n{ev}"
    assert rows_ok(p.client.text, size, iters, kind, any_figures=cli == "up"), \
        f"client rows: none of {size} B x {iters} with figures > 0\n{ev}"
    if srv == "ours" and tool.startswith("send_"):   # our server measures too
        assert rows_ok(p.server.text, size, iters, kind), f"server rows\n{ev}"
    for role, build, side in (("server", srv, p.server), ("client", cli, p.client)):
        if build != "ours":
            continue
        assert "Data ex. method : rdma_cm" in side.text, \
            f"our {role}'s header lacks 'Data ex. method : rdma_cm'\n{ev}"
        if mode.startswith("R-"):
            assert "rdma_cm QPs\t : ON" in side.text, \
                f"our {role}'s header lacks 'rdma_cm QPs : ON'\n{ev}"
    note(f"{tool}/{mode}/{srv}-{cli}: {results.rows(p.client.text)[-1]}")


@pytest.mark.name("raw-key-64/{id}")
@pytest.mark.parametrize("mode", ["-z", "-R"], ids=["-z", "-R"])
def test_raw_key_64(cm: None, pair, ours, dev: str, gid: int, note, mode: str) -> None:
    """"6.29" announces itself, so the other side sends it 64-byte keys."""
    o = [ours("ib_send_bw"), "-d", dev, "-x", str(gid), "-F", mode, "-n", "50"]
    p = pair(f"layout{mode}", o, [*o, "--announce_version", "6.29"])
    ev = p.evidence()
    assert p.server.rc == 0 and p.client.rc == 0, f"exit {p.server.rc}/{p.client.rc}\n{ev}"
    assert rows_ok(p.client.text, 65536, 50, "bw"), f"client rows\n{ev}"
    note(f"ours server <-> '6.29' client ({mode}): 64-byte keys, run completed")


@pytest.mark.name("raw-key-mismatch")
def test_raw_key_mismatch(cm: None, pair, ours, dev: str, gid: int, note) -> None:
    """Without a version exchange the server expects 56 bytes, the "6.29"
    client sends 64, and the server says so (no hang, no garbage keys)."""
    o = [ours("ib_send_bw"), "-d", dev, "-x", str(gid), "-F", "-z", "-n", "50",
         "--dont_xchg_versions"]
    p = pair("layout-mismatch", o, [*o, "--announce_version", "6.29"])
    ev = p.evidence()
    assert p.server.rc == 1 and p.client.rc == 1, f"exit {p.server.rc}/{p.client.rc}\n{ev}"
    m = re.search(r"peer sent a 64-byte message where 56 bytes were expected.*"
                  r"56 bytes up to perftest 6\.28 and 64 from 6\.29", p.server.text)
    assert m, f"the server does not name both layouts\n{ev}"
    note(f"mismatch: {m.group(0)[:120]}")


# -R only: its out-of-band channel is -z's (the same connect) and its data
# QPs resolve from the source too, so it covers both paths in one cell
@pytest.mark.name("bind-source/{id}")
@pytest.mark.parametrize("mode", ["-R"], ids=["-R"])
def test_bind_source(cm: None, lab: Lab, pair, ours, dev: str, gid: int, note,
                     mode: str) -> None:
    """The client's cm ids resolve from its own address (node 2's)."""
    o = [ours("ib_send_bw"), "-d", dev, "-x", str(gid), "-F", mode, "-n", "50"]
    p = pair(f"bind{mode}", o, [*o, "--bind_source_ip", lab.addr(2)])
    ev = p.evidence()
    assert p.server.rc == 0 and p.client.rc == 0, f"exit {p.server.rc}/{p.client.rc}\n{ev}"
    assert rows_ok(p.client.text, 65536, 50, "bw"), f"client rows\n{ev}"
    note(f"{mode} --bind_source_ip {lab.addr(2)}: {results.rows(p.client.text)[-1]}")


@pytest.mark.name("bind-source-refused/{id}")
@pytest.mark.parametrize("mode", ["-R"], ids=["-R"])
def test_bind_source_refused(cm: None, lab: Lab, ours, dev: str, gid: int, note,
                             mode: str) -> None:
    """192.0.2.9 (TEST-NET-1) is no address of node 2: refused at
    rdma_resolve_addr, before any connection (no server needed)."""
    d = lab.exec(2, [ours("ib_send_bw"), "-d", dev, "-x", str(gid), "-F", mode, "-n", "50",
                     "-p", "18777", "--bind_source_ip", "192.0.2.9", lab.addr(1)], timeout=60)
    out = d.out + d.err
    assert d.rc == 1, f"exit {d.rc}, want 1\n{out}"
    want = "--bind_source_ip 192.0.2.9: Cannot assign requested address (not an address of this host)"
    assert want in out, f"no '{want}'\n{out}"
    assert "#bytes" not in out, f"traffic ran\n{out}"
    note(f"{mode}: refused before connecting: {want}")


@pytest.mark.name("hw-rate-limit-refused")
def test_hw_rate_limit_refused(cm: None, lab: Lab, ours, dev: str, gid: int, note) -> None:
    """--rate_limit with -R: the HW limiter (the default type) is refused as
    upstream refuses it, before the device is opened (no server needed)."""
    d = lab.exec(2, [ours("ib_write_bw"), "-d", dev, "-x", str(gid), "-R", "--rate_limit", "1",
                     "-p", "18778", lab.addr(1)], timeout=60)
    out = d.out + d.err
    want = "The HW rate limiter (--rate_limit_type HW, the default type) is not allowed with rdma_cm QPs (-R)"
    assert d.rc != 0 and want in out, f"exit {d.rc}, want non-zero and '{want}'\n{out}"
    assert "#bytes" not in out and "Waiting" not in out, f"it went on\n{out}"
    note(f"refused: {want}")

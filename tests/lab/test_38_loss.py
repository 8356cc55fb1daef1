# SPDX-License-Identifier: BSD-2-Clause
"""A lossy link (tc netem on the guests' eth0, RoCE v2 frames only: the
out-of-band TCP and the lab's checks are not touched). RC must finish by
retransmission: both sides exit 0 with every iteration, netem did drop
frames, and the sender's rxe counters show the retransmissions. UD must
count the loss exactly: our receiver's "N of M messages lost" equals the
frames netem dropped on the sender (one frame per message at the RoCE MTU),
for our sender and for Debian's 6.06, and with --reversed (the server sends)."""

import re
from typing import Iterator

import pytest

from benchlib import results
from benchlib.labctl import Lab

LOSS = 1.0            # percent, each direction
RC_ITERS = 120        # 64 KiB: 16 frames each at MTU 4096, ~20-35 drops expected
UD_ITERS = 2000       # ~20 drops expected
RETRIES = ("completer_retry_err", "rcvd_seq_err")


@pytest.fixture
def lossy(lab: Lab) -> Iterator[Lab]:
    for node in (1, 2):
        lab.roce_loss(node, LOSS)
    try:
        yield lab
    finally:
        for node in (1, 2):
            lab.roce_loss_off(node)


def dropped(lab: Lab) -> dict[int, int]:
    return {n: lab.roce_dropped(n) for n in (1, 2)}


RC_CELLS = [pytest.param("ib_send_bw", "ours", "ours", id="send/ours-ours"),
            pytest.param("ib_send_bw", "up", "ours", id="send/up-ours"),
            pytest.param("ib_send_bw", "ours", "up", id="send/ours-up"),
            pytest.param("ib_write_bw", "ours", "ours", id="write/ours-ours"),
            pytest.param("ib_read_bw", "ours", "ours", id="read/ours-ours")]


@pytest.mark.nodes(2)
@pytest.mark.parametrize("tool,srv,cli", RC_CELLS)
def test_rc_survives_loss(lossy: Lab, pair, ours, upstream_bin, dev: str, gid: int, note,
                          tool: str, srv: str, cli: str) -> None:
    lab = lossy
    argv = {role: [ours(tool) if build == "ours" else upstream_bin(tool),
                   "-d", dev, "-x", str(gid), "-F", "-n", str(RC_ITERS)]
            for role, build in (("server", srv), ("client", cli))}
    before_drop, before = dropped(lab), lab.rxe_counters(2, dev)
    p = pair(f"rc-loss-{tool}-{srv}-{cli}", argv["server"], argv["client"])
    after_drop, after = dropped(lab), lab.rxe_counters(2, dev)
    drops = {n: after_drop[n] - before_drop[n] for n in (1, 2)}
    retries = {k: after.get(k, 0) - before.get(k, 0) for k in RETRIES}
    assert p.ok, f"RC under {LOSS} % loss did not finish (drops {drops})\n{p.evidence()}"
    for role, side in (("client", p.client), ("server", p.server)):
        if tool != "ib_send_bw" and role == "server":
            continue            # write/read servers print no row (upstream's layout)
        why, n = results.expect_row(side.text, 65536, RC_ITERS)
        assert why is None, f"{role}: {why}\n{p.evidence()}"
        if n:
            note(f"{role}: {n}")
    assert sum(drops.values()) > 0, f"netem dropped nothing: the test proved nothing ({drops})"
    assert sum(retries.values()) > 0, (f"netem dropped {drops} frames but node 2's rxe "
                                       f"counts no retransmission: {retries}")
    note(f"netem dropped {drops[2]} frames of node 2 and {drops[1]} of node 1; node 2's rxe: "
         + ", ".join(f"{k} {v}" for k, v in retries.items()))


LOST = re.compile(r"UD: (\d+) of (\d+) messages lost \(received (\d+)\)")


def check_ud_loss(p, text: str, drops: int, size: int, who: str) -> str:
    """The UD receiver's loss line (its text) against the frames netem dropped
    on the sender: exact, the row shows what arrived; returns the line."""
    m = LOST.search(text)
    assert m, f"the receiving {who} did not report its loss\n{p.evidence()}"
    lost, sent, received = (int(g) for g in m.groups())
    assert sent == UD_ITERS and lost + received == sent, m.group(0)
    assert drops > 0, "netem dropped nothing: the test proved nothing"
    assert lost == drops, f"{who} counted {lost} lost, netem dropped {drops}\n{p.evidence()}"
    rows = results.rows(text)
    assert rows and rows[-1].iters == received and rows[-1].size == size, \
        f"the {who}'s row does not show the {received} received\n{p.evidence()}"
    return m.group(0)


@pytest.mark.nodes(2)
@pytest.mark.parametrize("cli", ["ours", "up"])
def test_ud_counts_loss_exactly(lossy: Lab, pair, ours, upstream_bin, dev: str, gid: int,
                                note, cli: str) -> None:
    lab = lossy
    common = ["-d", dev, "-x", str(gid), "-F", "-c", "UD", "-n", str(UD_ITERS)]
    client = [ours("ib_send_bw") if cli == "ours" else upstream_bin("ib_send_bw"), *common]
    before = dropped(lab)
    p = pair(f"ud-loss-ours-{cli}", [ours("ib_send_bw"), *common], client)
    drops = dropped(lab)[2] - before[2]
    assert p.ok, f"UD under {LOSS} % loss failed\n{p.evidence()}"
    line = check_ud_loss(p, p.server.text, drops, lab.ud_mtu(), "server")
    note(f"{cli} sender: netem dropped {drops}, our receiver: {line}")


@pytest.mark.nodes(2)
def test_ud_reversed_counts_loss(lossy: Lab, pair, ours, dev: str, gid: int, note) -> None:
    """--reversed: the server (node 1) sends, the client (node 2) receives.
    The receiver tells loss from lateness by the sender's next out-of-band
    message, which the sending server writes first after its run (a server
    otherwise reads first): the client reports the loss exactly and both
    exit 0, where it used to wait out the 60 s stall and exit 17."""
    lab = lossy
    args = [ours("ib_send_bw"), "-d", dev, "-x", str(gid), "-F", "-c", "UD", "-n", str(UD_ITERS),
            "--reversed", "--oob_timeout", "60"]
    before = dropped(lab)
    p = pair("ud-loss-reversed", args, args, timeout=120)
    drops = dropped(lab)[1] - before[1]
    assert p.ok, f"--reversed UD under {LOSS} % loss failed\n{p.evidence()}"
    line = check_ud_loss(p, p.client.text, drops, lab.ud_mtu(), "client")
    note(f"--reversed: netem dropped {drops} on the sending server, the client: {line}")

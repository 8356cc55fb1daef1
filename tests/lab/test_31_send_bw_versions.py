# SPDX-License-Identifier: BSD-2-Clause
"""Version exchange end to end: peers older than 5.70 are refused with a
message naming both versions (exit 1, no crash), on our side and by
upstream 6.06; odd strings never crash anything; 6.28 (which always
negotiates) gets its parameter negotiation, and a mismatch is named; 6.29
skips negotiation with a 6.06 peer. Our client plays the other version
(--announce_version)."""

import pytest

from benchlib import results
from benchlib.labctl import Pair

pytestmark = pytest.mark.nodes(2)


def crashed(rc: object) -> bool:
    return not isinstance(rc, int) or rc >= 128


@pytest.fixture
def fake(pair, ours, upstream_bin, dev: str, gid: int):
    """fake(VERSION, SERVER): our client announces VERSION to SERVER
    ("ours" or "up"), both sending 50 messages."""
    base = ["-d", dev, "-x", str(gid), "-F", "-n", "50"]

    def run(version: str, server: str, extra: tuple[str, ...] = ()) -> Pair:
        if server == "up":
            sargv = [upstream_bin("ib_send_bw"), *base]
        else:
            sargv = [ours("ib_send_bw"), *base, "--oob_timeout", "20"]
        cargv = [ours("ib_send_bw"), *base, "--oob_timeout", "20", *extra,
                 f"--announce_version={version}"]
        return pair(f"v{version}-{server}", sargv, cargv)
    return run


@pytest.mark.name("ours-refuses-{id}")
@pytest.mark.parametrize("version", ["5.60", "5.5", "5.31", "abc"])
def test_ours_refuses(fake, version: str, note) -> None:
    p = fake(version, "ours")
    s = p.server.text
    ev = p.evidence()
    assert p.server.rc == 1, f"server exit {p.server.rc}, not 1\n{ev}"
    assert f"'{version}'" in s, f"the server does not name '{version}'\n{ev}"
    assert "5.70" in s, f"the server does not name 5.70\n{ev}"
    assert "6.06" in s, f"the server does not name its own 6.06\n{ev}"
    assert p.client.rc != 0, f"the client exit 0\n{ev}"
    assert not crashed(p.client.rc), f"the client crashed ({p.client.rc})\n{ev}"
    note(f"ours refuses {version}: {next(l for l in s.splitlines() if repr(version) in l or version in l)}")


@pytest.mark.name("upstream-refuses-5.60")
def test_upstream_refuses_5_60(fake, note) -> None:
    p = fake("5.60", "up")
    ev = p.evidence()
    assert p.server.rc == 1, f"server exit {p.server.rc}, not 1\n{ev}"
    assert "not compatible with versions older than 5.70" in p.server.text, ev
    assert p.client.rc != 0, f"the client exit 0\n{ev}"
    assert not crashed(p.client.rc), f"the client crashed ({p.client.rc})\n{ev}"
    note(f"upstream refuses 5.60; ours: {p.client.text.strip().splitlines()[-1]}")


@pytest.mark.name("6.28-negotiates")
def test_628_negotiates(fake, note) -> None:
    """Same options: 6.28's parameter negotiation passes, the run completes."""
    p = fake("6.28", "ours")
    ev = p.evidence()
    assert p.server.rc == 0, f"server exit {p.server.rc}\n{ev}"
    assert p.client.rc == 0, f"client exit {p.client.rc}\n{ev}"
    assert results.shape(p.server.text) == results.shape(p.client.text), f"rows differ\n{ev}"
    note(f"6.28 client, ours server: negotiated, {'; '.join(map(str, results.rows(p.client.text)))}")


@pytest.mark.name("6.28-mismatch-named")
def test_628_mismatch_named(fake, note) -> None:
    """A different -s: both sides name the field with both values and stop
    before any traffic."""
    p = fake("6.28", "ours", ("-s", "4096"))
    s, c, ev = p.server.text, p.client.text, p.evidence()
    assert p.server.rc == 1, f"server exit {p.server.rc}, not 1\n{ev}"
    assert p.client.rc == 1, f"client exit {p.client.rc}, not 1\n{ev}"
    assert "size mismatch: local=65536, remote=4096" in s, ev
    assert "Failed to negotiate parameters" in s, ev
    assert "size mismatch: local=4096, remote=65536" in c, ev
    assert not results.rows(s), f"the server printed rows\n{ev}"
    note(f"6.28 mismatch: {next(l for l in s.splitlines() if 'mismatch' in l).strip()}")


@pytest.mark.name("6.29-vs-{id}")
@pytest.mark.parametrize("server", ["ours", "up"], ids=["ours", "upstream"])
def test_629_vs(fake, server: str) -> None:
    p = fake("6.29", server)
    ev = p.evidence()
    assert p.server.rc == 0, f"server exit {p.server.rc}\n{ev}"
    assert p.client.rc == 0, f"client exit {p.client.rc}\n{ev}"
    assert results.shape(p.server.text) == results.shape(p.client.text), f"rows differ\n{ev}"

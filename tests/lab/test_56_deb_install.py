# SPDX-License-Identifier: BSD-2-Clause
"""The Debian package as installed: ci/deb's perftest-wr .deb is unpacked
with dpkg -x into a scratch root (it conflicts with Debian's perftest, which
stays installed as the peer), and that root's ib_send_bw runs RC against
Debian's 6.06 in both roles. "unpacked": the tools, wrtrace and
libwrtrace.so are there, the unpacked ib_send_bw is ours (only ours lists
--trace) and the package conflicts with perftest. Each cell: both sides exit
0 and print the row of 65536 bytes x 100 iterations with a BW > 0 (6.06's
0.00 of a failed MHz calibration is accepted with a note).
The .deb: PT_DEB_DIR (default build-deb/ at the top, where ci/test's package
stage puts it); when there is none, ci/deb builds it there first."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterator, Optional

import pytest

from benchlib import results
from benchlib.labctl import TOP, Pair, tail

DEB_DIR = Path(os.environ.get("PT_DEB_DIR") or TOP / "build-deb")
SIZE, ITERS = 65536, 100


def newest_deb() -> Optional[Path]:
    debs = sorted(DEB_DIR.glob("perftest-wr_*.deb"), key=lambda p: p.stat().st_mtime)
    return debs[-1] if debs else None


def unpack(root: Path) -> Path:
    """The .deb (built with ci/deb when none is there), unpacked into root."""
    deb = newest_deb()
    if deb is None:
        p = subprocess.run([str(TOP / "ci" / "deb"), str(DEB_DIR)], capture_output=True,
                           text=True, errors="replace", stdin=subprocess.DEVNULL)
        if p.returncode != 0:
            pytest.fail(f"ci/deb failed (exit {p.returncode})\n"
                        + tail(p.stdout + p.stderr, 30, "  | "), pytrace=False)
        deb = newest_deb()
        if deb is None:
            pytest.fail(f"ci/deb made no perftest-wr .deb in {DEB_DIR}", pytrace=False)
    x = subprocess.run(["dpkg", "-x", str(deb), str(root)], capture_output=True, text=True)
    if x.returncode != 0:
        pytest.fail(f"dpkg -x {deb} failed: {x.stderr.strip()}", pytrace=False)
    return deb


@pytest.fixture(scope="module")
def package() -> Iterator[tuple[Path, Path]]:
    """(the .deb, the scratch root it is unpacked into). The root is under
    /tmp, which the guests see over 9p like all of /."""
    root = Path(tempfile.mkdtemp(prefix="labtest-deb."))
    try:
        yield unpack(root / "root"), root / "root"
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.name("unpacked")
def test_unpacked(package: tuple[Path, Path], note: Callable[[str], None]) -> None:
    deb, root = package
    note(f"package: {deb} ({time.strftime('%F %T', time.localtime(deb.stat().st_mtime))})")
    why = []
    for f in ("usr/bin/ib_send_bw", "usr/bin/ib_atomic_lat", "usr/bin/wrtrace"):
        if not os.access(root / f, os.X_OK):
            why.append(f"no {f}")
    if not list(root.glob("usr/lib/*/perftest-wr/libwrtrace.so")):
        why.append("no libwrtrace.so")
    if (root / "usr/bin/ib_send_bw").exists():
        h = subprocess.run([str(root / "usr/bin/ib_send_bw"), "-h"], capture_output=True,
                           text=True, errors="replace")
        if "--trace=" not in h.stdout + h.stderr:   # ours, not Debian's: only ours has --trace
            why.append("the unpacked ib_send_bw -h lists no --trace")
    c = subprocess.run(["dpkg-deb", "-f", str(deb), "Conflicts"], capture_output=True, text=True)
    if "perftest" not in c.stdout:
        why.append(f"no Conflicts: perftest (dpkg-deb -f: {c.stdout.strip() or c.stderr.strip()})")
    assert not why, "; ".join(why)


@pytest.mark.nodes(2)
@pytest.mark.name("rc/{id}")
@pytest.mark.parametrize("cell", ["deb-up", "up-deb"])
def test_rc(cell: str, package: tuple[Path, Path], pair: Callable[..., Pair],
            upstream_bin: Callable[[str], str], dev: str, gid: int,
            note: Callable[[str], None]) -> None:
    """deb-up: the package's ib_send_bw serves, Debian's 6.06 is the client;
    up-deb: the other way round."""
    _, root = package
    ours, up = str(root / "usr/bin/ib_send_bw"), upstream_bin("ib_send_bw")
    common = ["-d", dev, "-x", str(gid), "-F", "-n", str(ITERS)]
    server, client = (ours, up) if cell == "deb-up" else (up, ours)
    p = pair(f"rc-{cell}", [server, *common], [client, *common])
    assert p.error is None, p.evidence()     # the server listened, nothing timed out
    assert p.server.rc == 0 and p.client.rc == 0, \
        f"exit codes server {p.server.rc} client {p.client.rc}\n{p.evidence()}"
    for role, side in (("srv", p.server), ("cli", p.client)):
        why, calib = results.expect_row(side.text, SIZE, ITERS)
        assert why is None, f"{role}: {why}\n{p.evidence()}"
        if calib:
            note(f"rc/{cell} ({role}): {calib}")
    rows = results.rows(p.client.text)
    note(f"rc/{cell}: {rows[-1] if rows else 'no row'}")

# SPDX-License-Identifier: BSD-2-Clause
"""Run only by test_12_lab_health.py, in a pytest session of its own: its
first attempt takes node 2's eth0 down (a dead link, as when the host side
of the link stops) and fails; the harness must name the dead link, boot a
new lab and run it once more, and the second attempt passes."""

import os
from pathlib import Path

import pytest

from benchlib.labctl import Lab

pytestmark = pytest.mark.nodes(2)
MARK = Path(os.environ["LABSELFTEST_MARK"])


def test_link_dies_once(lab: Lab) -> None:
    if not MARK.exists():
        MARK.write_text("first attempt\n")
        lab.exec(2, ["ip", "link", "set", "eth0", "down"], timeout=30)
        d = lab.exec(1, ["ping", "-n", "-q", "-c", "1", "-W", "1", lab.addr(2)], timeout=30)
        assert d.rc == 0, "the link is down (on purpose: the first attempt)"
    MARK.write_text("second attempt\n")
    c = lab.check()
    assert c.rc == 0, f"the second attempt did not get a live lab\n{c.evidence()}"

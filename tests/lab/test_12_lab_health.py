# SPDX-License-Identifier: BSD-2-Clause
"""The lab's own health checks (ci/lab check, the harness's rerun): a link
made dead on purpose is named within seconds, so is a frozen node, and the
lab recovers; a test that met a dead link runs once more on a new lab with
the first attempt's evidence in the log."""

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from benchlib.labctl import Lab

pytestmark = pytest.mark.nodes(2)
HERE = Path(__file__).resolve().parent
NAMED_WITHIN = 15.0     # s: a dead link ("within seconds"; ci/lab check takes ~5 s)
FROZEN_WITHIN = 30.0    # s: a frozen node gets a second, longer try (a busy host is slow)


def timed_check(lab: Lab) -> tuple[int, str, float]:
    t0 = time.monotonic()
    c = lab.check()
    return c.rc, (c.out + c.err).strip(), time.monotonic() - t0


def test_quiet_lab_is_ok(lab: Lab) -> None:
    rc, out, took = timed_check(lab)
    assert rc == 0, f"a live lab failed its check:\n{out}"
    assert re.search(r"lab link ok: node 1 <-> node 2", out), out
    assert took < NAMED_WITHIN, f"the check of a live lab took {took:.1f} s"


def test_dead_link_named_and_recovered(lab: Lab) -> None:
    lab.exec(2, ["ip", "link", "set", "eth0", "down"], timeout=30)
    rc, out, took = timed_check(lab)
    assert rc == 1, f"a dead link passed the check:\n{out}"
    assert "lab link down: node 1 <-> node 2: no echo reply" in out, out
    assert took < NAMED_WITHIN, f"the dead link took {took:.1f} s to be named"
    assert lab.suspect, "a dead lab was not marked for a new boot"
    boots = lab.boots
    lab.up(2)
    assert lab.boots == boots + 1, "the dead lab was not replaced"
    rc, out, _ = timed_check(lab)
    assert rc == 0, f"the new lab is not ok:\n{out}"


def test_frozen_node_named_and_recovered(lab: Lab) -> None:
    pid = int((lab.dir / "node2.pid").read_text())
    os.kill(pid, signal.SIGSTOP)
    try:
        rc, out, took = timed_check(lab)
    finally:
        os.kill(pid, signal.SIGCONT)
    assert rc == 1, f"a frozen node passed the check:\n{out}"
    assert "node 2: its agent does not answer" in out, out
    assert took < FROZEN_WITHIN, f"the frozen node took {took:.1f} s to be named"
    lab.up(2)
    rc, out, _ = timed_check(lab)
    assert rc == 0, f"the new lab is not ok:\n{out}"


def test_rerun_after_dead_link(lab: Lab, workdir: Path) -> None:
    """A pytest session of its own over selftest/dead_link_once.py."""
    mark = workdir / "attempt"
    mark.unlink(missing_ok=True)
    with tempfile.TemporaryFile("w+") as report:
        env = dict(lab.env, LABSELFTEST_MARK=str(mark), LABTEST_REPORT_FD=str(report.fileno()),
                   LABTEST_COUNTS=str(workdir / "counts"), PYTHONDONTWRITEBYTECODE="1",
                   LABTEST_PATTERN="")
        p = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                            "-c", str(HERE / "pytest.ini"), "--rootdir", str(HERE), "-q",
                            str(HERE / "selftest" / "dead_link_once.py")],
                           env=env, pass_fds=(report.fileno(),), capture_output=True, text=True,
                           timeout=600)
        report.seek(0)
        text = report.read()
    (workdir / "inner-report.txt").write_text(text + "\n--- pytest ---\n" + p.stdout + p.stderr)
    assert mark.read_text() == "second attempt\n", f"no second attempt:\n{text}\n{p.stdout[-2000:]}"
    assert "met a dead lab; it runs once more" in text, text
    assert "lab link down after lab/dead_link_once: node 1 <-> node 2: no echo reply" in text, text
    assert re.search(r"^PASS: lab/dead_link_once ", text, re.M), f"second attempt did not pass:\n{text}"
    assert "second attempt, on a new lab" in text, text
    assert p.returncode == 0, f"inner session failed ({p.returncode}):\n{p.stdout[-3000:]}"
    assert (workdir / "counts").read_text().split() == ["1", "0", "0"], text

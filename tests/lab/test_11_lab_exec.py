# SPDX-License-Identifier: BSD-2-Clause
"""ci/lab exec: exit status, separate stdout/stderr, cwd, concurrency,
timeout, bad node, missing binary."""

import subprocess
import time

import pytest

from benchlib.labctl import TOP, Lab

pytestmark = pytest.mark.nodes(2)


def test_exit_status(lab: Lab) -> None:
    d = lab.exec(1, ["sh", "-c", "exit 7"])
    assert d.rc == 7, f"exit 7 came back as {d.rc}"
    d = lab.exec(2, ["false"])
    assert d.rc == 1, f"false came back as {d.rc}"


def test_stdout_stderr(lab: Lab) -> None:
    d = lab.exec(1, ["sh", "-c", "echo out; echo err >&2"])
    assert d.rc == 0, f"echo failed\n{d.evidence()}"
    assert (d.out, d.err) == ("out\n", "err\n"), f"stdout/stderr mixed up: {d.out!r} / {d.err!r}"


def test_cwd_kept(lab: Lab) -> None:
    d = lab.exec(2, ["pwd"], cwd=str(TOP))
    assert d.out.strip() == str(TOP), f"cwd not kept: {d.out.strip()!r}, expected {TOP}"


def test_concurrent(lab: Lab) -> None:
    """A reader on node 1 blocks until node 2 writes to the share."""
    flag = lab.share() / f"flag.{time.monotonic_ns()}"
    flag.unlink(missing_ok=True)
    waiter = subprocess.Popen(
        lab.exec_argv(1, ["sh", "-c", f"while [ ! -e {flag} ]; do sleep 0.1; done; echo seen"], 60),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=lab.env)
    try:
        time.sleep(1)
        d = lab.exec(2, ["touch", str(flag)])
        assert d.rc == 0, f"touch on node 2 failed\n{d.evidence()}"
        out, err = waiter.communicate(timeout=90)
        assert waiter.returncode == 0, f"waiter on node 1 failed ({waiter.returncode}): {err}"
        assert out.strip() == "seen", f"concurrent commands did not meet: {out!r}"
    finally:
        if waiter.poll() is None:
            waiter.kill()
            waiter.wait()
        flag.unlink(missing_ok=True)


def test_timeout(lab: Lab) -> None:
    t0 = time.monotonic()
    d = lab.exec(1, ["sleep", "60"], timeout=2)
    took = time.monotonic() - t0
    assert d.rc == 124, f"timeout gave {d.rc}, not 124"
    assert took < 20, f"timeout took {took:.0f} s"


def test_bad_node_and_binary(lab: Lab) -> None:
    d = lab.exec(9, ["true"], timeout=30)
    assert d.rc != 0, "exec on a missing node succeeded"
    d = lab.exec(1, ["/nonexistent/binary"], timeout=30)
    assert d.rc != 0, "a missing binary succeeded"

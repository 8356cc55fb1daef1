# SPDX-License-Identifier: BSD-2-Clause
"""The lab tests' pytest harness (run them with tests/lab/run).

Fixtures:
  lab        the lab (bench/benchlib/labctl.Lab), up with the number of
             nodes the test declares (@pytest.mark.nodes(N), default 2);
             one lab for the session, rebooted only when the count changes
  dev        the RDMA device of node 1, found (not assumed to be rxe0)
  gid        the GID index (LABTEST_GID_INDEX, default 1)
  pair       pair(name, server_argv, client_argv[, port=, snode=, cnode=]):
             a server/client run across two nodes (labctl.run_pair)
  note       note(text): a line printed under the test's PASS line
  ours / upstream_bin   tool paths: upstream_bin(tool) skips with the
             reason when Debian's 6.06 is absent
  binary     binary("ours"|"up", "send_bw"): either of the two
Helpers: need(reason) skips when a capability probe (benchlib.caps) gave a
reason.

Reporting for tests/lab/run: with LABTEST_REPORT_FD set, one line per
result "PASS|FAIL|SKIP: lab/NN-name[/cell]" goes to that descriptor (the
evidence of a failure follows, indented), and the counts to
LABTEST_COUNTS."""

from __future__ import annotations

import fnmatch
import os
import re
import signal
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

import pytest

HERE = Path(__file__).resolve().parent
TOP = HERE.parents[1]
sys.path.insert(0, str(TOP / "bench"))

from benchlib import caps, labctl  # noqa: E402

BUILD = Path(os.environ.get("PT_BUILD") or TOP / "build")
OURS = Path(os.environ.get("LABTEST_OURS") or BUILD / "perftest")
UPSTREAM = os.environ.get("LABTEST_UPSTREAM") or "/usr/bin"
GIDX = int(os.environ.get("LABTEST_GID_INDEX") or 1)
PER_TEST = int(os.environ.get("LABTEST_TIMEOUT") or 900)
LOGS = Path(os.environ.get("LABTEST_LOGS") or "/tmp/lablogs-pytest")


def need(reason: Optional[str]) -> None:
    """Skip the test with reason when a capability probe gave one."""
    if reason:
        pytest.skip(reason)


# --- names -------------------------------------------------------------------------------

def test_name(path: Path) -> str:
    """The lab test's name from its file: 30-send-bw-interop."""
    stem = path.stem
    if stem.startswith("test_"):
        stem = stem[5:]
        m = re.match(r"(\d+)_(.*)", stem)
        if m:
            return f"{m.group(1)}-{m.group(2).replace('_', '-')}"
    return stem


def order_key(path: Path) -> int:
    m = re.match(r"(\d+)", test_name(path))
    return int(m.group(1)) if m else 1000


def lab_id(item: pytest.Item) -> str:
    return str(getattr(item, "lab_id", item.nodeid))


# --- collection: order, pattern ------------------------------------------------------

def _terminated(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def pytest_configure(config: pytest.Config) -> None:
    # SIGTERM (tests/lab/run's session bound) ends the session like ^C: the
    # finally blocks stop the pairs and shell tests still running.
    signal.signal(signal.SIGTERM, _terminated)
    config.addinivalue_line("markers", "nodes(n): the test needs a lab of exactly n nodes")
    config.addinivalue_line("markers", "numa: the test needs NUMA guests (ci/lab up --numa)")
    config.addinivalue_line("markers", "timeout(s): per-test time limit (pytest-timeout)")
    config.addinivalue_line("markers", "name(fmt): the result's name after lab/NN-name/ "
                            "({id}: the parameters' id)")


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    funcs: dict[Path, set[str]] = {}
    for it in items:
        if isinstance(it, pytest.Function):
            funcs.setdefault(it.path, set()).add(it.originalname)
    for it in items:
        name = f"lab/{test_name(it.path)}"
        if isinstance(it, pytest.Function):
            cs = getattr(it, "callspec", None)
            named = it.get_closest_marker("name")
            if named is not None:      # @pytest.mark.name("cell-{id}"): the result's name
                name += "/" + str(named.args[0]).format(id=cs.id if cs else "")
            else:
                if len(funcs[it.path]) > 1:
                    name += "/" + it.originalname.removeprefix("test_").replace("_", "-")
                if cs is not None:
                    name += "/" + cs.id
        setattr(it, "lab_id", name)
    items.sort(key=lambda it: order_key(it.path))
    pattern = os.environ.get("LABTEST_PATTERN") or ""
    if pattern:
        # globs, as the shell runner matched names: *PATTERN*; a comma
        # separates alternatives
        def hit(it: pytest.Item) -> bool:
            return any(fnmatch.fnmatchcase(lab_id(it)[4:], f"*{p}*") for p in pattern.split(","))
        keep = [it for it in items if hit(it)]
        drop = [it for it in items if not hit(it)]
        if drop:
            config.hook.pytest_deselected(items=drop)
        items[:] = keep


# --- time limit when pytest-timeout is absent --------------------------------------------

class LabTimeout(Exception):
    pass


@pytest.fixture(autouse=True)
def _alarm(request: pytest.FixtureRequest) -> Iterator[None]:
    """Per-test time limit (LABTEST_TIMEOUT s) through SIGALRM, only when
    pytest-timeout (python3-pytest-timeout) is not there to do it."""
    if request.config.pluginmanager.hasplugin("timeout"):
        yield
        return

    def expired(signum: int, frame: Any) -> None:
        raise LabTimeout(f"the test ran longer than {PER_TEST} s")

    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(PER_TEST)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


# --- fixtures -----------------------------------------------------------------------------

@pytest.fixture(scope="session")
def lab_session() -> labctl.Lab:
    return labctl.Lab(TOP)


@pytest.fixture
def lab(request: pytest.FixtureRequest, lab_session: labctl.Lab) -> labctl.Lab:
    m = request.node.get_closest_marker("nodes")
    n = int(m.args[0]) if m else 2
    numa = request.node.get_closest_marker("numa") is not None
    try:
        lab_session.up(n, numa=numa)
        # before each test file: is the lab alive (QEMU, agents, the link
        # both ways)? A dead one is named and replaced before the test.
        if _checked[0] != (request.node.path, lab_session.boots):
            c = lab_session.check()
            if c.rc != 0:
                dead = (c.out + c.err).strip()
                request.node.lab_notes = getattr(request.node, "lab_notes", []) + [
                    f"lab found dead before {lab_id(request.node)} (a new one was booted): "
                    + " / ".join(l for l in dead.splitlines() if "down" in l or "not" in l)]
                lab_session.up(n, numa=numa)
            _checked[0] = (request.node.path, lab_session.boots)
    except labctl.LabError as e:
        pytest.fail(str(e), pytrace=False)
    return lab_session


_checked: list[object] = [None]


_devices: dict[tuple[int, int], str] = {}


@pytest.fixture
def dev(lab: labctl.Lab) -> str:
    """Node 1's RDMA device, found once per lab boot."""
    key = (lab.boots, lab.nodes())
    if key not in _devices:
        _devices[key] = lab.device(1)
    return _devices[key]


@pytest.fixture
def gid() -> int:
    return GIDX


@pytest.fixture
def ours() -> Callable[[str], str]:
    """ours(tool): our build's tool (fails when it is not built)."""
    def path(tool: str) -> str:
        p = OURS / tool
        assert os.access(p, os.X_OK), f"{p} not built (PT_BUILD={BUILD})"
        return str(p)
    return path


@pytest.fixture
def build_dirs() -> dict[str, Path]:
    """Where the builds are: build (PT_BUILD), ours (its tools), upstream."""
    return {"build": BUILD, "ours": OURS, "upstream": Path(UPSTREAM)}


@pytest.fixture
def upstream_bin() -> Callable[[str], str]:
    """upstream_bin(tool): Debian's 6.06 tool; skips the test when absent."""
    def path(tool: str) -> str:
        need(caps.upstream(UPSTREAM, tool))
        return str(Path(UPSTREAM) / tool)
    return path


@pytest.fixture
def binary(ours: Callable[[str], str],
           upstream_bin: Callable[[str], str]) -> Callable[[str, str], str]:
    """binary(build, tool): "ours" -> our ib_TOOL, else Debian's 6.06
    (skipping when it is absent); tool without "ib_" (send_bw)."""
    def b(build: str, tool: str) -> str:
        return ours(f"ib_{tool}") if build == "ours" else upstream_bin(f"ib_{tool}")
    return b


@pytest.fixture
def workdir(request: pytest.FixtureRequest) -> Path:
    d = LOGS / re.sub(r"[^A-Za-z0-9_.-]+", "_", lab_id(request.node))
    d.mkdir(parents=True, exist_ok=True)
    return d


_port = [19000]


def next_port() -> int:
    """A fresh port per pair (a server's port lingers in TIME_WAIT)."""
    _port[0] = 19000 + (_port[0] - 19000 + 1) % 4000
    return _port[0]


PairRunner = Callable[..., labctl.Pair]


@pytest.fixture
def pair(lab: labctl.Lab, workdir: Path, request: pytest.FixtureRequest) -> PairRunner:
    def run(name: str, server: list[str], client: list[str], port: Optional[int] = None,
            snode: int = 1, cnode: int = 2, timeout: float = 300) -> labctl.Pair:
        p = labctl.run_pair(lab, name, server, client, port or next_port(), workdir,
                            snode=snode, cnode=cnode, timeout=timeout)
        request.node.lab_pairs = getattr(request.node, "lab_pairs", []) + [p]
        return p
    return run


@pytest.fixture
def note(request: pytest.FixtureRequest) -> Callable[[str], None]:
    def add(text: str) -> None:
        request.node.lab_notes = getattr(request.node, "lab_notes", []) + [text]
    return add


# --- reporting ----------------------------------------------------------------------------

class Report:
    def __init__(self) -> None:
        fd = os.environ.get("LABTEST_REPORT_FD")
        self.out = os.fdopen(int(fd), "w", buffering=1, closefd=False) if fd else None
        self.counts = {"pass": 0, "fail": 0, "skip": 0}
        self.failed_setup: set[str] = set()
        self.reruns = 0

    def line(self, verdict: str, name: str, extra: str = "") -> None:
        self.counts[verdict] += 1
        if self.out:
            self.out.write(f"{verdict.upper()}: {name}{extra}\n")

    def text(self, text: str) -> None:
        if self.out and text:
            self.out.write(text if text.endswith("\n") else text + "\n")


REPORT = Report()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any) -> Iterator[None]:
    outcome = yield
    rep = outcome.get_result()
    rep.lab_id = lab_id(item)
    rep.lab_notes = list(getattr(item, "lab_notes", []))
    # After a failed test on the lab: is the lab itself alive? A dead link
    # is named in the evidence, and the next test gets a new lab.
    if rep.failed and rep.when in ("setup", "call") and "lab_session" in getattr(item, "fixturenames", ()):
        lab = item.funcargs.get("lab_session") if hasattr(item, "funcargs") else None
        if isinstance(lab, labctl.Lab) and lab.nodes():
            c = lab.check()
            rep.lab_check = (c.out + c.err).strip()
            if c.rc != 0:
                rep.lab_dead = True
                rep.lab_check = re.sub(r"^lab link down:", f"lab link down after {lab_id(item)}:",
                                       rep.lab_check, flags=re.M)
                rep.lab_check += "\n(a new lab is booted for what follows)"


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: Optional[pytest.Item]) -> Optional[bool]:
    """A test that failed on a lab found dead afterwards (ci/lab check) runs
    once more on a new lab; the first attempt's evidence stays in the log.
    A failure on a live lab is the test's own: no rerun. After a test
    file's last item: "  (lab/NN-name took Ns)", the line ci/test reads each
    lab test's time from."""
    from _pytest.runner import runtestprotocol
    _file_start.setdefault(item.path, time.monotonic())
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    if "lab_session" not in getattr(item, "fixturenames", ()):
        reports = runtestprotocol(item, nextitem=nextitem, log=False)
        _log(item, reports)
        _file_took(item, nextitem)
        return True
    reports = runtestprotocol(item, nextitem=nextitem, log=False)
    dead = [r for r in reports if r.failed and getattr(r, "lab_dead", False)]
    if dead:
        REPORT.text(f"  first attempt of {lab_id(item)} met a dead lab; it runs once more "
                    f"on a new one. The first attempt's evidence:")
        REPORT.text(_evidence(dead[0]))
        REPORT.reruns += 1
        # down now: the session's fixtures (and the Lab that knew it was
        # dead) may have been torn down with the first attempt
        labctl.Lab(TOP).down()
        item._initrequest()  # type: ignore[attr-defined]   # fresh fixtures
        item.lab_notes = [f"second attempt, on a new lab (the first met a dead lab: "
                          f"{_check_line(dead[0])})"]
        reports = runtestprotocol(item, nextitem=nextitem, log=False)
    _log(item, reports)
    _file_took(item, nextitem)
    return True


def _log(item: pytest.Item, reports: list[pytest.TestReport]) -> None:
    for r in reports:
        item.ihook.pytest_runtest_logreport(report=r)
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)


def _file_took(item: pytest.Item, nextitem: Optional[pytest.Item]) -> None:
    if nextitem is None or nextitem.path != item.path:
        took = time.monotonic() - _file_start.pop(item.path)
        REPORT.text(f"  (lab/{test_name(item.path)} took {took:.0f}s)")


def _check_line(rep: pytest.TestReport) -> str:
    check: str = str(getattr(rep, "lab_check", ""))
    for line in check.splitlines():
        if "down" in line or "does not answer" in line or "not running" in line:
            return line.strip()
    return "ci/lab check failed"


_file_start: dict[Path, float] = {}


def _evidence(rep: pytest.TestReport) -> str:
    text = labctl.tail(rep.longreprtext, 80, "  | ")
    check = getattr(rep, "lab_check", "")
    if check:
        text += "".join(f"  lab check: {l}\n" for l in check.splitlines())
    return text


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    name = str(getattr(report, "lab_id", report.nodeid))
    took = f" ({report.duration:.0f} s)"
    if report.when == "setup":
        if report.skipped:
            REPORT.line("skip", name, f": {_skip_reason(report)}")
        elif report.failed:
            REPORT.line("fail", name, " (setup)")
            REPORT.text(_evidence(report))
        return
    if report.when == "call":
        if report.passed:
            REPORT.line("pass", name, took)
            REPORT.text("\n".join(f"  {n}" for n in getattr(report, "lab_notes", [])))
        elif report.skipped:
            REPORT.line("skip", name, f": {_skip_reason(report)}")
        else:
            REPORT.line("fail", name, took)
            REPORT.text(_evidence(report))
        return
    if report.when == "teardown" and report.failed:
        REPORT.line("fail", f"{name} (teardown)")
        REPORT.text(_evidence(report))


def _skip_reason(report: pytest.TestReport) -> str:
    lr = report.longrepr
    if isinstance(lr, tuple) and len(lr) == 3:
        return str(lr[2]).removeprefix("Skipped: ")
    return str(lr)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        REPORT.line("fail", f"lab/{report.nodeid} (collection)")
        REPORT.text(labctl.tail(report.longreprtext, 40, "  | "))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    path = os.environ.get("LABTEST_COUNTS")
    if path:
        c = REPORT.counts
        Path(path).write_text(f"{c['pass']} {c['fail']} {c['skip']}\n")

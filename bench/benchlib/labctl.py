# SPDX-License-Identifier: BSD-2-Clause
"""The lab of QEMU guests (ci/lab) seen from Python: bring it up with a
number of nodes, run commands on a node, find its RDMA device, and run a
server/client pair of any build across two nodes.

The lab's own variables (PTLAB_DIR, PTLAB_NETNS, ...) are honoured as ci/lab
honours them: every ci/lab call gets this process's environment, and the
state files are read from the same PTLAB_DIR. Used by the lab tests
(tests/lab/conftest.py) and the benchmarks (bench/benchlib/launchers.py):
run_command is the one way to run a short command, run_ends the one way
to run a server/client pair, on lab nodes or any other End."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Callable, Mapping, Optional, Protocol, Sequence, Union

TOP = Path(__file__).resolve().parents[2]   # the source tree
TIMEOUT_RC = 124                            # ci/lab exec's code for "we stopped it"


class LabError(Exception):
    """The lab cannot do what was asked (not up, does not boot)."""


@dataclass
class Done:
    """What one finished command left: its argv, exit code, stdout, stderr."""
    argv: list[str]
    rc: int
    out: str = ""
    err: str = ""

    @property
    def text(self) -> str:
        return self.out + self.err

    def evidence(self, lines: int = 40) -> str:
        """The command line, its exit code and the tail of its output."""
        return (f"$ {shlex.join(self.argv)}\n  exit {self.rc}\n"
                + tail(self.text, lines, "  | "))


def tail(text: str, lines: int = 40, prefix: str = "") -> str:
    """The last lines of text, each with prefix (and a newline at the end)."""
    keep = text.splitlines()[-lines:]
    return "".join(f"{prefix}{line}\n" for line in keep) if keep else f"{prefix}(no output)\n"


def kill_group(proc: "subprocess.Popen[bytes]") -> None:
    """Stop a process started in its own session, and its group."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(5)
            return
        except subprocess.TimeoutExpired:
            continue


# The RC ACK timeout of perftest runs in the lab (the tools' -u; docs/lab.md).
# perftest's default, 14 (4.096 us * 2^14 = 67 ms), is shorter than the lab
# link's queueing delay under load: rxe then retransmits packets that were
# only late, and rxe 6.1 answers some duplicates of multi-packet sends with
# NAKs (status 9 / 11 on the sender, 2 on the receiver). 20 is 4.3 s.
QP_TIMEOUT = "20"
PERFTEST_TOOL = re.compile(r"(^|/)ib_(send|write|read|atomic)_(bw|lat)$")


def with_qp_timeout(argv: Sequence[str], timeout: str) -> list[str]:
    """argv with "-u TIMEOUT" after the first perftest tool in it, unless the
    run sets -u/--qp-timeout itself or timeout is "" or "default"."""
    out = list(argv)
    if timeout in ("", "default"):
        return out
    for i, word in enumerate(out):
        if PERFTEST_TOOL.search(word):
            if i and out[i - 1] == "-c":     # a shell's script: left alone
                return out
            rest = out[i + 1:]
            if any(w == "-u" or w.startswith("--qp-timeout") or
                   (w.startswith("-u") and w[2:].isdigit()) for w in rest):
                return out
            return out[:i + 1] + ["-u", timeout] + rest
    return out


class Lab:
    """One lab: ci/lab of the source tree top, run with env (default: ours)."""

    def __init__(self, top: Path = TOP, env: Optional[Mapping[str, str]] = None,
                 cmd: Optional[str] = None) -> None:
        self.top = top
        self.cmd = cmd or str(top / "ci" / "lab")    # another ci/lab: bench/sweep --lab-cmd
        self.env = dict(os.environ if env is None else env)
        self.dir = Path(self.env.get("PTLAB_DIR") or "/var/tmp/ptlab")
        self.netns = self.env.get("PTLAB_NETNS") or "ptlab"
        self.boots = 0          # how many times up() booted the lab
        self.suspect = False    # a check found it dead: the next up() reboots it

    # --- ci/lab --------------------------------------------------------------------
    def lab(self, *args: str, timeout: float = 120) -> Done:
        """ci/lab ARGS..., waited for (at most timeout s: then code 124)."""
        return run_command([self.cmd, *args], timeout, env=self.env)

    def nodes(self) -> int:
        """How many nodes the running lab was booted with (0: none)."""
        try:
            return int((self.dir / "nodes").read_text().strip() or 0)
        except (OSError, ValueError):
            return 0

    def icount(self) -> bool:
        """Was the running lab booted with `ci/lab up --icount` (a guest ns
        is a guest instruction)?"""
        try:
            return (self.dir / "icount").read_text().strip() == "1"
        except OSError:
            return False

    def running(self) -> bool:
        st = self.lab("status", timeout=30)
        return st.rc == 0 and "running" in st.out and "stopped" not in st.out

    def numa(self) -> bool:
        """Was the running lab booted with two NUMA nodes per guest (up --numa)?"""
        try:
            return (self.dir / "numa").read_text().strip() == "1"
        except OSError:
            return False

    def up(self, n: int, boot_timeout: float = 900, numa: bool = False) -> None:
        """Make sure exactly n nodes are up, with NUMA guests or not: reboots a
        lab of another size or kind."""
        if self.nodes() == n and self.numa() == numa and self.running() and not self.suspect:
            return
        self.suspect = False
        self.down()
        self.boots += 1
        d = self.lab("up", "--nodes", str(n), *(["--numa"] if numa else []), timeout=boot_timeout)
        if d.rc != 0:
            raise LabError(f"the lab did not come up with {n} nodes{' (NUMA)' if numa else ''}"
                           f"\n{d.evidence(30)}")

    def check(self) -> Done:
        """ci/lab check: each node's QEMU and agent, and an echo over each
        link; exit 1 with "lab link down: ..." naming what is dead. A dead
        lab is marked suspect, so the next up() boots a new one."""
        d = self.lab("check", timeout=90)
        if d.rc != 0:
            self.suspect = True
        return d

    def down(self) -> Done:
        return self.lab("down", timeout=120)

    def share(self) -> Path:
        """The writable directory every guest sees at the same path."""
        return Path(self.lab("share", timeout=30).out.strip())

    def addr(self, node: int) -> str:
        d = self.lab("addr", str(node), timeout=30)
        if d.rc != 0 or not d.out.strip():
            raise LabError(f"no address for node {node}: {d.err.strip()}")
        return d.out.strip()

    def mtu(self) -> int:
        """eth0's MTU in the running lab."""
        try:
            return int((self.dir / "mtu").read_text().strip())
        except (OSError, ValueError):
            return 1500

    def ud_mtu(self) -> int:
        """The RoCE MTU of the running lab: the default and largest UD message."""
        ib = 256
        for v in (512, 1024, 2048, 4096):
            if self.mtu() >= v + 100:
                ib = v
        return ib

    # --- commands on nodes ---------------------------------------------------------
    def exec_argv(self, node: int, argv: Sequence[str], timeout: float = 300) -> list[str]:
        argv = with_qp_timeout(argv, self.env.get("PTLAB_QP_TIMEOUT", QP_TIMEOUT))
        return [self.cmd, "exec", str(node), "--timeout", str(int(timeout)), "--", *argv]

    def exec(self, node: int, argv: Sequence[str], timeout: float = 300,
             cwd: Optional[str] = None) -> Done:
        """Run argv on node (ci/lab exec); our own bound is timeout + 30 s."""
        d = run_command(self.exec_argv(node, argv, timeout), timeout + 30, env=self.env, cwd=cwd)
        d.argv = list(argv)
        return d

    def start(self, node: int, argv: Sequence[str], timeout: float, out: IO[bytes],
              err: IO[bytes] | int) -> "subprocess.Popen[bytes]":
        """Start argv on node in the background (its own process group)."""
        return subprocess.Popen(self.exec_argv(node, argv, timeout), stdout=out, stderr=err,
                                stdin=subprocess.DEVNULL, env=self.env, start_new_session=True)

    def wait_listen(self, node: int, port: int) -> bool:
        """True once something listens on port on node (TCP or rdma_cm; ~30 s)."""
        return self.exec(node, [str(self.top / "ci" / "lab-wait-listen"), str(port)],
                         timeout=40).rc == 0

    def device(self, node: int = 1) -> str:
        """The node's RDMA device whose port 1 is ACTIVE (first by name)."""
        script = ('for d in /sys/class/infiniband/*; do '
                  'grep -qs ACTIVE "$d/ports/1/state" && echo "${d##*/}"; done')
        d = self.exec(node, ["sh", "-c", script], timeout=60)
        names = sorted(d.out.split())
        if not names:
            raise LabError(f"node {node} has no RDMA device with an ACTIVE port\n{d.evidence()}")
        return names[0]

    # --- link faults and counters -------------------------------------------------
    def roce_loss(self, node: int, percent: float) -> None:
        """Drop percent % of the RoCE v2 frames (UDP 4791) node sends, and
        nothing else (the out-of-band TCP and the lab's own checks pass):
        a prio qdisc whose third band, where a u32 filter puts RoCE, is netem."""
        script = ("tc qdisc del dev eth0 root 2>/dev/null; "
                  "tc qdisc add dev eth0 root handle 1: prio bands 3 "
                  "priomap 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 && "
                  f"tc qdisc add dev eth0 parent 1:3 handle 30: netem loss {percent}% && "
                  "tc filter add dev eth0 parent 1: protocol ip prio 1 u32 "
                  "match ip protocol 17 0xff match ip dport 4791 0xffff flowid 1:3")
        d = self.exec(node, ["sh", "-c", script], timeout=60)
        if d.rc != 0:
            raise LabError(f"netem on node {node} failed\n{d.evidence()}")

    def roce_loss_off(self, node: int) -> None:
        self.exec(node, ["sh", "-c", "tc qdisc del dev eth0 root 2>/dev/null; true"], timeout=60)

    def roce_dropped(self, node: int) -> int:
        """Frames the netem of roce_loss dropped on node so far."""
        d = self.exec(node, ["tc", "-s", "qdisc", "show", "dev", "eth0"], timeout=60)
        m = re.search(r"qdisc netem 30:.*?\n\s*Sent .*?\(dropped (\d+)", d.out, re.S)
        if not m:
            raise LabError(f"no netem qdisc on node {node}\n{d.evidence()}")
        return int(m.group(1))

    def rxe_counters(self, node: int, dev: str) -> dict[str, int]:
        """The device's port 1 counters (rdma statistic): sent_pkts,
        completer_retry_err, rcvd_seq_err, out_of_seq_request, ..."""
        d = self.exec(node, ["rdma", "statistic", "show", "link", f"{dev}/1"], timeout=60)
        words = d.out.split()
        return {k: int(v) for k, v in zip(words, words[1:]) if v.isdigit()}


def _text(b: object) -> str:
    if isinstance(b, bytes):
        return b.decode(errors="replace")
    return b if isinstance(b, str) else ""


def run_command(argv: Sequence[str], timeout: float, env: Optional[Mapping[str, str]] = None,
                cwd: Optional[str] = None) -> Done:
    """Run argv here and wait for it (at most timeout s: then code 124, and
    127 when it cannot start): the one way bench/ and the lab tests run a
    short command, on this host, a lab node (ci/lab exec) or over ssh."""
    try:
        p = subprocess.run(list(argv), capture_output=True, text=True, errors="replace",
                           timeout=timeout, env=None if env is None else dict(env), cwd=cwd,
                           stdin=subprocess.DEVNULL)
        return Done(list(argv), p.returncode, p.stdout, p.stderr)
    except subprocess.TimeoutExpired as e:
        return Done(list(argv), TIMEOUT_RC, _text(e.stdout),
                    _text(e.stderr) + f"\n(timed out after {timeout:g} s)")
    except OSError as e:
        return Done(list(argv), 127, "", str(e))


# --- a server/client pair, on any two ends ---------------------------------------------

@dataclass
class Serving:
    """A started server: its process, a cheap check that it listens, and
    what to clean up once the pair is over."""
    proc: "subprocess.Popen[bytes]"
    listening: Callable[[], bool]
    done: Callable[[], None] = lambda: None


class End(Protocol):
    """Where one end of a pair runs: a lab node (LabNode), this host or an
    ssh host (bench/benchlib/launchers.py). Commands run in the background
    in their own session, bounded by timeout on the far side too."""
    where: str

    def start(self, argv: Sequence[str], timeout: float, out: IO[bytes],
              err: Union[IO[bytes], int]) -> "subprocess.Popen[bytes]": ...

    def serve(self, argv: Sequence[str], port: int, timeout: float, out: IO[bytes],
              err: Union[IO[bytes], int]) -> Serving: ...


class LabNode:
    """A lab node as an End: the server runs under ci/lab-serve, which marks
    in the share when something listens on the port (TCP or rdma_cm), so
    the host sees it without an exec of its own (~1 s under TCG)."""

    def __init__(self, lab: Lab, node: int) -> None:
        self.lab, self.node = lab, node
        self.where = f"node {node}"

    def start(self, argv: Sequence[str], timeout: float, out: IO[bytes],
              err: Union[IO[bytes], int]) -> "subprocess.Popen[bytes]":
        return self.lab.start(self.node, argv, timeout, out, err)

    def serve(self, argv: Sequence[str], port: int, timeout: float, out: IO[bytes],
              err: Union[IO[bytes], int]) -> Serving:
        marker = self.lab.share() / f"listening.{port}.{os.getpid()}.{time.monotonic_ns()}"
        marker.unlink(missing_ok=True)
        serve = [str(self.lab.top / "ci" / "lab-serve"), str(marker), str(port), *argv]
        proc = self.start(serve, timeout, out, err)
        return Serving(proc, marker.exists, lambda: marker.unlink(missing_ok=True))


@dataclass
class Side:
    """One end of a pair: where it ran, its command, exit code, whether we
    had to stop it, and its output (stdout and stderr, as a person sees them)."""
    node: int
    argv: list[str]
    rc: Optional[int] = None
    text: str = ""
    late: bool = False


@dataclass
class Pair:
    name: str
    server: Side
    client: Side
    error: Optional[str] = None          # why the pair did not run to its end
    files: dict[str, Path] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None and self.server.rc == 0 and self.client.rc == 0

    def evidence(self, lines: int = 30) -> str:
        """Both command lines, exit codes and output tails: for a failure."""
        s = f"pair {self.name}" + (f": {self.error}" if self.error else "") + "\n"
        for role, side in (("server", self.server), ("client", self.client)):
            s += (f"--- {role} on node {side.node}: exit {side.rc}\n"
                  f"$ {shlex.join(side.argv)}\n" + tail(side.text, lines, "  | "))
        return s


@dataclass
class Timing:
    """The bounds of a pair, in seconds."""
    timeout: float = 300          # each end's own bound (the far side enforces it too)
    listen_wait: float = 60       # how long the server may take to listen
    server_grace: float = 30      # how long the server may outlive a client that exited 0
    failed_grace: float = 30      # ... a client that failed (it may wait for it forever)
    slack: float = 30             # our wait beyond timeout, so the far side's bound acts first


def _wait(proc: "subprocess.Popen[bytes]", seconds: float) -> tuple[int, bool]:
    """(exit code, late): late when proc had to be stopped (code 124)."""
    try:
        return proc.wait(max(0.0, seconds)), False
    except subprocess.TimeoutExpired:
        kill_group(proc)
        return TIMEOUT_RC, True


def _open_logs(out: Path, err: Optional[Path]) -> tuple[IO[bytes], Union[IO[bytes], int]]:
    o = open(out, "wb")
    return o, (open(err, "wb") if err else subprocess.STDOUT)


def _read_logs(out: Path, err: Optional[Path]) -> str:
    text = out.read_text(errors="replace") if out.exists() else ""
    if err and err.exists():
        text += "\n" + err.read_text(errors="replace")
    return text


def run_ends(pair: Pair, server: End, client: End, port: int,
             logs: Mapping[str, tuple[Path, Optional[Path]]], timing: Timing) -> Pair:
    """Run pair.server.argv on server, wait until it listens on port, then
    pair.client.argv on client; wait for both (the client timeout + slack,
    the server then its grace), stop what is left. logs["server"|"client"]
    = (stdout file, stderr file or None for both in one). Fills the sides'
    exit codes, late flags and output, and pair.error."""
    files = {side: _open_logs(*logs[side]) for side in ("server", "client")}
    procs: list["subprocess.Popen[bytes]"] = []
    srv: Optional[Serving] = None
    try:
        t0 = time.monotonic()
        srv = server.serve(pair.server.argv, port, timing.timeout, *files["server"])
        procs.append(srv.proc)
        deadline = t0 + min(timing.listen_wait, timing.timeout)
        while not srv.listening() and srv.proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if not srv.listening():
            exited = srv.proc.poll()
            pair.error = (f"server exited ({exited}) before listening on port {port} on "
                          f"{server.where}" if exited is not None else
                          f"nothing listens on port {port} on {server.where} "
                          f"after {time.monotonic() - t0:.0f} s")
            pair.server.late = exited is None
            kill_group(srv.proc)
            pair.server.rc = srv.proc.wait()
            if exited is not None and exited != 0:
                pair.error = None   # its exit code and its last line say more
        else:
            cp = client.start(pair.client.argv, timing.timeout, *files["client"])
            procs.append(cp)
            pair.client.rc, pair.client.late = _wait(cp, timing.timeout + timing.slack)
            if pair.client.late:
                pair.error = f"client timed out after {timing.timeout:g} s"
            grace = timing.server_grace if pair.client.rc == 0 else timing.failed_grace
            pair.server.rc, pair.server.late = _wait(srv.proc, grace)
            if pair.server.late and not pair.error and pair.client.rc == 0:
                pair.error = f"server still running {grace:g} s after the client ended"
    except OSError as e:
        pair.error = f"cannot start: {e}"
    finally:
        for p in procs:
            kill_group(p)
        for out, err in files.values():
            out.close()
            if not isinstance(err, int):
                err.close()
        if srv is not None:
            srv.done()
    pair.server.text = _read_logs(*logs["server"])
    pair.client.text = _read_logs(*logs["client"])
    return pair


def run_pair(lab: Lab, name: str, server: Sequence[str], client: Sequence[str], port: int,
             workdir: Path, snode: int = 1, cnode: int = 2, timeout: float = 300,
             listen_wait: float = 60, server_grace: float = 30) -> Pair:
    """Run server on snode (with -p port), then client on cnode with -p port
    and the server's address appended (run_ends); outputs in workdir,
    NAME.srv and NAME.cli, stdout and stderr together."""
    pair = Pair(name, Side(snode, [*server, "-p", str(port)]),
                Side(cnode, [*client, "-p", str(port), lab.addr(snode)]))
    qt = lab.env.get("PTLAB_QP_TIMEOUT", QP_TIMEOUT)
    shown = [with_qp_timeout(s.argv, qt) for s in (pair.server, pair.client)]
    safe = name.replace("/", "-")
    workdir.mkdir(parents=True, exist_ok=True)
    pair.files = {"server": workdir / f"{safe}.srv", "client": workdir / f"{safe}.cli"}
    logs = {side: (path, None) for side, path in pair.files.items()}
    timing = Timing(timeout, listen_wait, server_grace, server_grace, 30)
    done = run_ends(pair, LabNode(lab, snode), LabNode(lab, cnode), port, logs, timing)
    # the evidence shows the command lines as they ran (with the lab's -u)
    done.server.argv, done.client.argv = shown
    return done

# SPDX-License-Identifier: BSD-2-Clause
"""Where the two ends of a run execute: this host (local), lab nodes
(ci/lab exec, through labctl), or remote hosts over plain OpenSSH in
BatchMode (ssh).

Every launcher gives an End per side (labctl.End) and runs its commands as
a local process (the tool itself, `ci/lab exec ...` or `ssh ...`); the pair
itself is labctl.run_ends, the short commands labctl.run_command, as in
the lab tests. The far-side timeouts (`ci/lab exec --timeout`, `timeout`
over ssh) stop what a stopped local process leaves behind."""

from __future__ import annotations

import os
import shlex
import subprocess
import time
from pathlib import Path
from typing import IO, Any, Mapping, Optional, Sequence, Union

from . import labctl
from .labctl import Done, End, Pair, Serving, Side, Timing

SIDES = ("server", "client")
LISTEN_WAIT_MAX = 60      # s: how long a server may take to listen
SERVER_GRACE = 15         # s: how long the server may outlive its client
FAILED_GRACE = 3          # s: the same when the client failed
CM_LISTEN_WAIT = 2        # s: rdma_cm servers listen on no TCP port: a fixed wait
Settings = Mapping[str, Any]


class LauncherError(Exception):
    """A launcher that cannot work at all (no lab, no hosts)."""


class Launcher:
    name = "?"
    # The far side's own bound ends a late command first: our waits add this.
    slack: float = SERVER_GRACE

    def __init__(self, out_dir: str) -> None:
        self.out_dir = out_dir

    # --- what subclasses provide ------------------------------------------
    def end(self, side: str, rdma_cm: bool = False) -> End:
        """Where side runs; rdma_cm: its server listens on no TCP port."""
        raise NotImplementedError

    def run(self, side: str, argv: Sequence[str], timeout: float = 30) -> Done:
        """A short command on side, waited for."""
        raise NotImplementedError

    def json_path(self, side: str, run_id: str) -> str:
        """Where side's tool writes its JSON (a path on side's host)."""
        raise NotImplementedError

    def fetch(self, side: str, path: str) -> Optional[str]:
        """Contents of path on side's host, or None."""
        raise NotImplementedError

    def server_addr(self) -> str:
        raise NotImplementedError

    def prepare(self) -> None:
        """Set-up before the first run (directories on the far side)."""

    def clear(self, side: str, path: str) -> None:
        """Remove a JSON file a run is about to write, so a stale one is never read."""
        Path(path).unlink(missing_ok=True)

    def describe(self) -> dict[str, Any]:
        return {"launcher": self.name}


class Wrapped:
    """An End whose commands run through an argv wrapper (none here, ssh
    there); its server listens once launcher.listening says so, or, for
    rdma_cm, after CM_LISTEN_WAIT."""

    def __init__(self, launcher: "Local", side: str, rdma_cm: bool) -> None:
        self.launcher, self.side, self.rdma_cm = launcher, side, rdma_cm
        self.where = f"the {side} host"

    def start(self, argv: Sequence[str], timeout: float, out: IO[bytes],
              err: Union[IO[bytes], int]) -> "subprocess.Popen[bytes]":
        return subprocess.Popen(self.launcher.wrap(self.side, argv, timeout), stdout=out,
                                stderr=err, stdin=subprocess.DEVNULL, start_new_session=True)

    def serve(self, argv: Sequence[str], port: int, timeout: float, out: IO[bytes],
              err: Union[IO[bytes], int]) -> Serving:
        proc = self.start(argv, timeout, out, err)
        if self.rdma_cm:
            ready = time.monotonic() + CM_LISTEN_WAIT
            return Serving(proc, lambda: time.monotonic() >= ready)
        return Serving(proc, lambda: self.launcher.listening(self.side, port))


def run_pair(launcher: Launcher, argv: Mapping[str, Sequence[str]], logs: Mapping[str, str],
             port: int, timeout: float, rdma_cm: bool = False) -> Pair:
    """labctl.run_ends with the sweep's bounds: argv["server"], then
    argv["client"] once it listens on port; timeout s for the client, the
    server then gets SERVER_GRACE (FAILED_GRACE when the client failed).
    Each side's output goes to logs[side] + ".out" / ".err"; a side that
    never started has no exit code (rc None)."""
    pair = Pair(f"port {port}", Side(1, list(argv["server"])), Side(2, list(argv["client"])))
    files = {s: (Path(logs[s] + ".out"), Path(logs[s] + ".err")) for s in SIDES}
    timing = Timing(timeout, min(LISTEN_WAIT_MAX, timeout), SERVER_GRACE + launcher.slack,
                    FAILED_GRACE, launcher.slack)
    return labctl.run_ends(pair, launcher.end("server", rdma_cm), launcher.end("client", rdma_cm),
                           port, files, timing)


def _listening_here(port: int) -> bool:
    """Read /proc/net/tcp{,6}: a socket in state 0A (LISTEN) on port."""
    for f in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(f) as fh:
                next(fh)
                for line in fh:
                    cols = line.split()
                    if cols[3] == "0A" and int(cols[1].rsplit(":", 1)[1], 16) == port:
                        return True
        except (OSError, StopIteration, IndexError, ValueError):
            continue
    return False


def _read(path: str) -> Optional[str]:
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return None


class Local(Launcher):
    """Both ends on this host; JSON straight into the output directory."""
    name = "local"
    slack = 0

    def __init__(self, out_dir: str, settings: Settings) -> None:
        super().__init__(out_dir)
        self.addr: str = settings["server_addr"] or "127.0.0.1"

    def wrap(self, side: str, argv: Sequence[str], timeout: float) -> list[str]:
        """The local argv that runs argv on side."""
        return list(argv)

    def end(self, side: str, rdma_cm: bool = False) -> End:
        return Wrapped(self, side, rdma_cm)

    def run(self, side: str, argv: Sequence[str], timeout: float = 30) -> Done:
        return labctl.run_command(self.wrap(side, argv, timeout), timeout + 15)

    def listening(self, side: str, port: int) -> bool:
        """True when something listens on TCP port on side's host."""
        return _listening_here(port)

    def json_path(self, side: str, run_id: str) -> str:
        return os.path.join(self.out_dir, "runs", f"{run_id}-{side}.json")

    def fetch(self, side: str, path: str) -> Optional[str]:
        return _read(path)

    def server_addr(self) -> str:
        return self.addr


class Lab(Launcher):
    """Server on lab node 1, client on node 2 (labctl.Lab over ci/lab, or
    lab_cmd in its place); the JSON goes to the lab's share directory,
    which the host reads directly."""
    name = "lab"
    NODES = {"server": 1, "client": 2}

    def __init__(self, out_dir: str, settings: Settings, lab_cmd: str) -> None:
        super().__init__(out_dir)
        self.lab = labctl.Lab(cmd=lab_cmd)
        share = self.lab.lab("share", timeout=60)
        if share.rc != 0 or not share.out.strip():
            raise LauncherError(f"'{lab_cmd} share' failed: {share.err.strip() or share.out.strip()}")
        addr = self.lab.lab("addr", "1", timeout=60)
        if addr.rc != 0 or not addr.out.strip():
            raise LauncherError(f"the lab is not up ('{lab_cmd} addr 1': "
                                f"{addr.err.strip() or addr.out.strip()}); run 'ci/lab up' first")
        node2 = self.lab.lab("addr", "2", timeout=60)
        if node2.rc != 0:
            raise LauncherError(f"the lab has no node 2 for the client: {node2.err.strip()}")
        self.addr: str = settings["server_addr"] or addr.out.strip()
        stamp = time.strftime("%Y%m%d-%H%M%S")
        self.share = os.path.join(share.out.strip(), f"bench-{stamp}-{os.getpid()}")

    def prepare(self) -> None:
        os.makedirs(self.share, exist_ok=True)

    def end(self, side: str, rdma_cm: bool = False) -> End:
        # ci/lab-serve sees rdma_cm listeners too: no fixed wait.
        return labctl.LabNode(self.lab, self.NODES[side])

    def run(self, side: str, argv: Sequence[str], timeout: float = 30) -> Done:
        return self.lab.exec(self.NODES[side], argv, timeout)

    def json_path(self, side: str, run_id: str) -> str:
        return os.path.join(self.share, f"{run_id}-{side}.json")

    def fetch(self, side: str, path: str) -> Optional[str]:
        return _read(path)

    def server_addr(self) -> str:
        return self.addr

    def describe(self) -> dict[str, Any]:
        return {"launcher": self.name, "lab": self.lab.cmd, "share": self.share,
                "nodes": dict(self.NODES)}


class Ssh(Local):
    """hosts = SERVER, CLIENT over OpenSSH (BatchMode: keys only, no prompts);
    the tools and nicinfo must exist at the same paths there. JSON is written
    to remote_dir and read back with 'cat'."""
    name = "ssh"
    slack = SERVER_GRACE
    # One far-side command checks for up to this long (every 0.1 s), so a
    # server that takes a while to listen costs one round trip, not many.
    LISTEN_CHECK_S = 2

    def __init__(self, out_dir: str, settings: Settings, ssh_cmd: str) -> None:
        Launcher.__init__(self, out_dir)
        from .matrix import split_items
        hosts = split_items(settings["hosts"]) if settings["hosts"] else []
        if len(hosts) != 2:
            raise LauncherError("the ssh launcher needs hosts = SERVER, CLIENT "
                                f"(got {settings['hosts']!r})")
        self.hosts = dict(zip(SIDES, hosts))
        self.ssh = shlex.split(ssh_cmd)
        self.addr = settings["server_addr"] or hosts[0].split("@")[-1]
        self.stamp = f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
        self.dir: str = settings["remote_dir"] or f"/tmp/bench-sweep-{self.stamp}"

    def wrap(self, side: str, argv: Sequence[str], timeout: float) -> list[str]:
        # The far side gets one shell command: quote every word; 'timeout'
        # ends it even if our ssh is killed and the connection lingers.
        remote = " ".join(shlex.quote(a) for a in
                          ["timeout", "-k", "5", str(int(timeout)), *argv])
        return [*self.ssh, "-o", "BatchMode=yes", "-o", "ConnectTimeout=10",
                self.hosts[side], remote]

    def listening(self, side: str, port: int) -> bool:
        """Checked on side's host for up to LISTEN_CHECK_S (ss)."""
        loop = ('n=0; while :; do ss -Hltn "sport = :$1" | grep -q LISTEN && exit 0; '
                'n=$((n + 1)); [ "$n" -ge "$2" ] && exit 1; sleep 0.1; done')
        return self.run(side, ["sh", "-c", loop, "sh", str(port),
                               str(int(self.LISTEN_CHECK_S * 10))], timeout=20).rc == 0

    def prepare(self) -> None:
        for side in SIDES:
            d = self.run(side, ["mkdir", "-p", self.dir])
            if d.rc != 0:
                raise LauncherError(f"ssh {self.hosts[side]}: cannot create {self.dir}: "
                                    f"{d.err.strip()}")

    def json_path(self, side: str, run_id: str) -> str:
        # The stamp keeps a file of an earlier sweep in remote_dir from passing for ours.
        return f"{self.dir}/{self.stamp}-{run_id}-{side}.json"

    def clear(self, side: str, path: str) -> None:
        pass   # the name is unique to this sweep

    def fetch(self, side: str, path: str) -> Optional[str]:
        d = self.run(side, ["cat", path])
        return d.out if d.rc == 0 else None

    def describe(self) -> dict[str, Any]:
        return {"launcher": self.name, "hosts": dict(self.hosts), "remote_dir": self.dir}


def make(name: str, out_dir: str, settings: Settings, lab_cmd: str, ssh_cmd: str) -> Launcher:
    if name == "local":
        return Local(out_dir, settings)
    if name == "lab":
        return Lab(out_dir, settings, lab_cmd)
    if name == "ssh":
        return Ssh(out_dir, settings, ssh_cmd)
    raise LauncherError(f"unknown launcher '{name}' (local, lab or ssh)")

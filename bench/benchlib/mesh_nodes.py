# SPDX-License-Identifier: BSD-2-Clause
"""Where bench/mesh's processes run: N named nodes, each an End (labctl's
protocol) for the pair runner, through the lab (ci/lab exec), OpenSSH or
Slurm (one srun step per server and per client, inside an allocation: the
caller's, or one salloc makes for the mesh and releases at the end)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import time
from pathlib import Path
from typing import IO, Any, Optional, Sequence, Union

from . import labctl
from .labctl import Done, End, Serving
from .launchers import LauncherError

LISTEN_CHECK_S = 2       # one far-side check waits this long for a listener


def _listen_loop(port: int) -> list[str]:
    """A shell command that exits 0 once something listens on TCP port."""
    loop = ('n=0; while :; do ss -Hltn "sport = :$1" | grep -q LISTEN && exit 0; '
            'n=$((n + 1)); [ "$n" -ge "$2" ] && exit 1; sleep 0.1; done')
    return ["sh", "-c", loop, "sh", str(port), str(LISTEN_CHECK_S * 10)]


class Nodes:
    """The mesh's nodes through one launcher."""
    name = "?"
    slack: float = 15

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)

    def end(self, node: str) -> End:
        raise NotImplementedError

    def run(self, node: str, argv: Sequence[str], timeout: float = 30) -> Done:
        raise NotImplementedError

    def addr(self, node: str) -> str:
        """The address a client gives to reach node's server (out of band)."""
        return node

    def out_dir(self) -> str:
        """A directory every node writes to and this host reads."""
        raise NotImplementedError

    def fetch(self, node: str, path: str) -> Optional[str]:
        try:
            return Path(path).read_text(errors="replace")
        except OSError:
            return None

    def close(self) -> None:
        """Release what the launcher holds (an allocation it made)."""

    def describe(self) -> dict[str, Any]:
        return {"launcher": self.name, "nodes": self.names}


class WrappedEnd:
    """An End whose commands run through nodes.wrap(node, argv, timeout)."""

    def __init__(self, nodes: "Wrapping", node: str) -> None:
        self.nodes, self.node = nodes, node
        self.where = node

    def start(self, argv: Sequence[str], timeout: float, out: IO[bytes],
              err: Union[IO[bytes], int]) -> "subprocess.Popen[bytes]":
        return subprocess.Popen(self.nodes.wrap(self.node, argv, timeout), stdout=out,
                                stderr=err, stdin=subprocess.DEVNULL, start_new_session=True)

    def serve(self, argv: Sequence[str], port: int, timeout: float, out: IO[bytes],
              err: Union[IO[bytes], int]) -> Serving:
        proc = self.start(argv, timeout, out, err)
        return Serving(proc, lambda: self.nodes.run(self.node, _listen_loop(port),
                                                     timeout=20).rc == 0)


class Wrapping(Nodes):
    def wrap(self, node: str, argv: Sequence[str], timeout: float) -> list[str]:
        raise NotImplementedError

    def end(self, node: str) -> End:
        return WrappedEnd(self, node)

    def run(self, node: str, argv: Sequence[str], timeout: float = 30) -> Done:
        return labctl.run_command(self.wrap(node, argv, timeout), timeout + 15)


class LabNodes(Nodes):
    """Lab nodes node1..nodeN (ci/lab up --nodes N)."""
    name = "lab"

    def __init__(self, count: int, lab_cmd: Optional[str] = None) -> None:
        self.lab = labctl.Lab(cmd=lab_cmd)
        have = self.lab.nodes()
        if have < 2 or not self.lab.running():
            raise LauncherError("the lab is not up: run 'ci/lab up --nodes N' first")
        if count > have:
            raise LauncherError(f"the lab has {have} nodes, {count} asked for")
        super().__init__([f"node{i}" for i in range(1, (count or have) + 1)])
        self.addrs = {n: self.lab.addr(i + 1) for i, n in enumerate(self.names)}
        self._share = str(self.lab.share())

    def num(self, node: str) -> int:
        return self.names.index(node) + 1

    def end(self, node: str) -> End:
        return labctl.LabNode(self.lab, self.num(node))

    def run(self, node: str, argv: Sequence[str], timeout: float = 30) -> Done:
        return self.lab.exec(self.num(node), argv, timeout)

    def addr(self, node: str) -> str:
        return self.addrs[node]

    def out_dir(self) -> str:
        return self._share


class SshNodes(Wrapping):
    """Hosts over OpenSSH in BatchMode; the tools exist at the same paths on
    every host; JSON files are read back with cat. --addr NODE=ADDRESS gives
    the address both ssh and the clients use (rows keep the node names)."""
    name = "ssh"

    def __init__(self, hosts: Sequence[str], ssh_cmd: str = "ssh",
                 addrs: Optional[dict[str, str]] = None, remote_dir: Optional[str] = None) -> None:
        super().__init__(hosts)
        self.ssh = shlex.split(ssh_cmd)
        self.addrs = addrs or {}
        stamp = f"bench-mesh-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
        self.dir = os.path.join(remote_dir or "/tmp", stamp)
        for h in self.names:
            d = self.run(h, ["mkdir", "-p", self.dir])
            if d.rc != 0:
                raise LauncherError(f"ssh {h}: {d.err.strip() or d.out.strip() or 'failed'}")

    def wrap(self, node: str, argv: Sequence[str], timeout: float) -> list[str]:
        remote = shlex.join(["timeout", "-k", "5", str(int(timeout)), *argv])
        return [*self.ssh, "-o", "BatchMode=yes", "-o", "ConnectTimeout=10",
                self.addrs.get(node, node), remote]

    def addr(self, node: str) -> str:
        return self.addrs.get(node, node.split("@")[-1])

    def out_dir(self) -> str:
        return self.dir

    def fetch(self, node: str, path: str) -> Optional[str]:
        d = self.run(node, ["cat", path])
        return d.out if d.rc == 0 else None


class MarkedEnd(WrappedEnd):
    """A server started under ci/lab-serve, which creates a marker file once
    its port listens: the marker is in the shared output directory, so the
    wait costs no step or connection of its own (an srun step is seconds)."""

    def serve(self, argv: Sequence[str], port: int, timeout: float, out: IO[bytes],
              err: Union[IO[bytes], int]) -> Serving:
        marker = Path(self.nodes.out_dir(), f".listening.{self.node}.{port}.{time.monotonic_ns()}")
        proc = self.start([str(labctl.TOP / "ci" / "lab-serve"), str(marker), str(port), *argv],
                          timeout, out, err)
        return Serving(proc, marker.exists, lambda: marker.unlink(missing_ok=True))


class SlurmNodes(Wrapping):
    """Slurm: every server and client is a step of one allocation, placed with
    -w NODE; --cpu-bind (or the tool's own numactl prefix) keeps it on the
    NIC's CPUs; servers run under ci/lab-serve (the source tree and the output
    directory on a file system every node shares). Without SLURM_JOB_ID an allocation of the nodes is made with
    salloc --no-shell and cancelled at close()."""
    name = "slurm"

    def __init__(self, nodes: Sequence[str], out_dir: str, cpu_bind: Optional[str] = None,
                 partition: Optional[str] = None, addrs: Optional[dict[str, str]] = None,
                 alloc_timeout: float = 120) -> None:
        self.made_job = False
        self.job = os.environ.get("SLURM_JOB_ID")
        self.cpu_bind = cpu_bind
        self.addrs = addrs or {}
        self._out = out_dir
        if self.job:
            have = self._hostnames(os.environ.get("SLURM_JOB_NODELIST", ""))
            nodes = list(nodes) or have
            extra = [n for n in nodes if n not in have]
            if extra:
                raise LauncherError(f"not in allocation {self.job}: {', '.join(extra)}")
        else:
            if len(nodes) < 2:
                raise LauncherError("outside an allocation give the nodes (--nodes a,b,...)")
            # --no-kill: a node lost mid-run fails its own pairs, not the allocation
            argv = ["salloc", "--no-shell", "--no-kill", "-N", str(len(nodes)),
                    "-w", ",".join(nodes),
                    "--job-name=bench-mesh", "--immediate=" + str(int(alloc_timeout))]
            if partition:
                argv += ["-p", partition]
            d = labctl.run_command(argv, alloc_timeout + 30)
            m = re.search(r"Granted job allocation (\d+)", d.text)
            if d.rc != 0 or not m:
                raise LauncherError(f"salloc failed (exit {d.rc}): "
                                    f"{d.text.strip().splitlines()[-1] if d.text.strip() else ''}")
            self.job, self.made_job = m.group(1), True
        super().__init__(nodes)

    @staticmethod
    def _hostnames(nodelist: str) -> list[str]:
        if not nodelist:
            return []
        d = labctl.run_command(["scontrol", "show", "hostnames", nodelist], 30)
        return d.out.split() if d.rc == 0 else []

    def wrap(self, node: str, argv: Sequence[str], timeout: float) -> list[str]:
        bind = [f"--cpu-bind={self.cpu_bind}"] if self.cpu_bind else []
        return ["srun", f"--jobid={self.job}", "--overlap", "-N1", "-n1", "-w", node,
                "--kill-on-bad-exit=1", f"--time={max(1, int(timeout + 59) // 60)}", *bind,
                "timeout", "-k", "5", str(int(timeout)), *argv]

    def end(self, node: str) -> End:
        return MarkedEnd(self, node)

    def addr(self, node: str) -> str:
        """--addr's, else Slurm's NodeAddr (what slurmd is reached at: a
        name resolvable on the nodes or an IP), else the node's name."""
        if node not in self.addrs:
            d = labctl.run_command(["scontrol", "show", "node", node], 30)
            m = re.search(r"\bNodeAddr=(\S+)", d.out)
            self.addrs[node] = m.group(1) if d.rc == 0 and m else node
        return self.addrs[node]

    def out_dir(self) -> str:
        return self._out

    def close(self) -> None:
        if self.made_job and self.job:
            labctl.run_command(["scancel", self.job], 30)
            self.made_job = False

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "job": self.job, "allocated_by_mesh": self.made_job,
                "cpu_bind": self.cpu_bind}

# SPDX-License-Identifier: BSD-2-Clause
"""Where the two ends of a run execute: this host (local), lab nodes
(ci/lab exec), or remote hosts over plain OpenSSH in BatchMode (ssh).

Every launcher starts a local process (the tool itself, `ci/lab exec ...` or
`ssh ...`), so starting, waiting and killing work alike; the far-side
timeouts (`ci/lab exec --timeout`, `timeout` over ssh) stop what a killed
local process leaves behind."""

import os
import shlex
import signal
import subprocess
import time

SIDES = ("server", "client")
LISTEN_WAIT_MAX = 60      # s: how long a server may take to listen
SERVER_GRACE = 15         # s: how long the server may outlive its client
FAILED_GRACE = 3          # s: the same when the client failed
CM_LISTEN_WAIT = 2        # s: rdma_cm servers listen on no TCP port: a fixed wait


class LauncherError(Exception):
    """A launcher that cannot work at all (no lab, no hosts)."""


class Launcher:
    name = "?"

    def __init__(self, out_dir):
        self.out_dir = out_dir

    # --- what subclasses provide ------------------------------------------
    def wrap(self, side, argv, timeout):
        """The local argv that runs argv on side."""
        raise NotImplementedError

    def json_path(self, side, run_id):
        """Where side's tool writes its JSON (a path on side's host)."""
        raise NotImplementedError

    def fetch(self, side, path):
        """Contents of path on side's host, or None."""
        raise NotImplementedError

    def server_addr(self):
        raise NotImplementedError

    def prepare(self):
        """Set-up before the first run (directories on the far side)."""

    def clear(self, side, path):
        """Remove a JSON file a run is about to write, so a stale one is never read."""
        try:
            os.remove(path)
        except FileNotFoundError:
            pass

    def describe(self):
        return {"launcher": self.name}

    # --- shared ---------------------------------------------------------------
    def run(self, side, argv, timeout=30):
        """(exit code, stdout, stderr) of a short command on side."""
        try:
            p = subprocess.run(self.wrap(side, argv, timeout), capture_output=True,
                               text=True, timeout=timeout + 15, errors="replace")
            return p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired:
            return 124, "", f"timed out after {timeout} s"
        except OSError as e:
            return 127, "", str(e)

    def start(self, side, argv, timeout, out, err):
        """Start argv on side; stdout/stderr to the open files out/err."""
        return subprocess.Popen(self.wrap(side, argv, timeout), stdout=out, stderr=err,
                                stdin=subprocess.DEVNULL, start_new_session=True)

    # One far-side command checks for up to this long (every 0.1 s), so a
    # server that takes a while to listen costs one round trip, not many.
    LISTEN_CHECK_S = 2

    def listening(self, side, port):
        """True when something listens on TCP port on side's host (checked
        there for up to LISTEN_CHECK_S)."""
        loop = ('n=0; while :; do ss -Hltn "sport = :$1" | grep -q LISTEN && exit 0; '
                'n=$((n + 1)); [ "$n" -ge "$2" ] && exit 1; sleep 0.1; done')
        rc, _, _ = self.run(side, ["sh", "-c", loop, "sh", str(port),
                                   str(int(self.LISTEN_CHECK_S * 10))], timeout=20)
        return rc == 0


def kill(proc):
    """Stop a started process and its group (it leads its own session)."""
    if proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _wait(proc, deadline):
    """(exit code, late): late when proc had to be killed at deadline (code 124)."""
    try:
        return proc.wait(max(0.0, deadline - time.monotonic())), False
    except subprocess.TimeoutExpired:
        kill(proc)
        return 124, True


def _wait_listen(launcher, proc, port, deadline, rdma_cm):
    """None once the server listens on port, else why not."""
    if rdma_cm:
        time.sleep(CM_LISTEN_WAIT)
        return None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return f"server exited ({proc.returncode}) before listening on port {port}"
        if launcher.listening("server", port):
            return None
        time.sleep(0.25)
    return f"server did not listen on TCP port {port} within {LISTEN_WAIT_MAX} s"


def run_pair(launcher, argv, logs, port, timeout, rdma_cm=False):
    """Start argv["server"], wait until it listens on port, run argv["client"],
    wait for both (timeout s for the client; the server then gets SERVER_GRACE,
    or FAILED_GRACE when the client failed), kill what is left. Each side's
    output goes to logs[side] + ".out" / ".err". Returns {"rc": {side: code},
    "late": {side: True when we had to stop it}, "error": why the pair did not
    run to its end, or None}; a side that never started has no code."""
    slack = 0 if launcher.name == "local" else SERVER_GRACE
    files = {side: (open(logs[side] + ".out", "w"), open(logs[side] + ".err", "w"))
             for side in SIDES}
    rcs, late, error, procs = {}, {}, None, {}
    try:
        t0 = time.monotonic()
        procs["server"] = launcher.start("server", argv["server"], timeout, *files["server"])
        error = _wait_listen(launcher, procs["server"], port,
                             t0 + min(LISTEN_WAIT_MAX, timeout), rdma_cm)
        if error is None:
            procs["client"] = launcher.start("client", argv["client"], timeout,
                                             *files["client"])
            rcs["client"], late["client"] = _wait(procs["client"], t0 + timeout + slack)
            if late["client"]:
                error = f"client timed out after {timeout} s"
            # A server whose client failed may wait for it forever: it is
            # stopped from here after FAILED_GRACE, without the far side's slack.
            grace = SERVER_GRACE if rcs["client"] == 0 else FAILED_GRACE
            rcs["server"], late["server"] = _wait(
                procs["server"], time.monotonic() + grace + (slack if rcs["client"] == 0 else 0))
            if late["server"] and not error and rcs["client"] == 0:
                error = f"server still running {grace} s after the client ended"
        else:
            late["server"] = procs["server"].poll() is None
            kill(procs["server"])
            rcs["server"] = procs["server"].wait()
            if rcs["server"] > 0:
                error = None  # its exit code and last line say more
    except OSError as e:
        error = f"cannot start: {e}"
    finally:
        for p in procs.values():
            kill(p)
        for out, err in files.values():
            out.close()
            err.close()
    return {"rc": rcs, "late": late, "error": error}


def _listening_here(port):
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


class Local(Launcher):
    """Both ends on this host; JSON straight into the output directory."""
    name = "local"

    def __init__(self, out_dir, settings):
        super().__init__(out_dir)
        self.addr = settings["server_addr"] or "127.0.0.1"

    def wrap(self, side, argv, timeout):
        return list(argv)

    def json_path(self, side, run_id):
        return os.path.join(self.out_dir, "runs", f"{run_id}-{side}.json")

    def fetch(self, side, path):
        try:
            with open(path, errors="replace") as f:
                return f.read()
        except OSError:
            return None

    def server_addr(self):
        return self.addr

    def listening(self, side, port):
        return _listening_here(port)


class Lab(Local):
    """Server on lab node 1, client on node 2 (ci/lab exec); the JSON goes
    to the lab's share directory, which the host reads directly."""
    name = "lab"
    NODES = {"server": 1, "client": 2}

    def __init__(self, out_dir, settings, lab_cmd):
        Launcher.__init__(self, out_dir)
        self.lab = lab_cmd
        rc, out, err = self._lab("share")
        if rc != 0 or not out.strip():
            raise LauncherError(f"'{lab_cmd} share' failed: {err.strip() or out.strip()}")
        rc, addr, err = self._lab("addr", "1")
        if rc != 0 or not addr.strip():
            raise LauncherError(f"the lab is not up ('{lab_cmd} addr 1': "
                                f"{err.strip() or addr.strip()}); run 'ci/lab up' first")
        rc, _, err = self._lab("addr", "2")
        if rc != 0:
            raise LauncherError(f"the lab has no node 2 for the client: {err.strip()}")
        self.addr = settings["server_addr"] or addr.strip()
        stamp = time.strftime("%Y%m%d-%H%M%S")
        self.share = os.path.join(out.strip(), f"bench-{stamp}-{os.getpid()}")

    def _lab(self, *args):
        try:
            p = subprocess.run([self.lab, *args], capture_output=True, text=True, timeout=60)
            return p.returncode, p.stdout, p.stderr
        except (OSError, subprocess.TimeoutExpired) as e:
            return 127, "", str(e)

    def prepare(self):
        os.makedirs(self.share, exist_ok=True)

    def wrap(self, side, argv, timeout):
        return [self.lab, "exec", str(self.NODES[side]), "--timeout", str(timeout), "--", *argv]

    def json_path(self, side, run_id):
        return os.path.join(self.share, f"{run_id}-{side}.json")

    def listening(self, side, port):
        return Launcher.listening(self, side, port)

    def describe(self):
        return {"launcher": self.name, "lab": self.lab, "share": self.share,
                "nodes": dict(self.NODES)}


class Ssh(Launcher):
    """hosts = SERVER, CLIENT over OpenSSH (BatchMode: keys only, no prompts);
    the tools and nicinfo must exist at the same paths there. JSON is written
    to remote_dir and read back with 'cat'."""
    name = "ssh"

    def __init__(self, out_dir, settings, ssh_cmd):
        super().__init__(out_dir)
        from .matrix import split_items
        hosts = split_items(settings["hosts"]) if settings["hosts"] else []
        if len(hosts) != 2:
            raise LauncherError("the ssh launcher needs hosts = SERVER, CLIENT "
                                f"(got {settings['hosts']!r})")
        self.hosts = dict(zip(SIDES, hosts))
        self.ssh = shlex.split(ssh_cmd)
        self.addr = settings["server_addr"] or hosts[0].split("@")[-1]
        self.stamp = f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
        self.dir = settings["remote_dir"] or f"/tmp/bench-sweep-{self.stamp}"

    def wrap(self, side, argv, timeout):
        # The far side gets one shell command: quote every word; 'timeout'
        # ends it even if our ssh is killed and the connection lingers.
        remote = " ".join(shlex.quote(a) for a in
                          ["timeout", "-k", "5", str(timeout), *argv])
        return [*self.ssh, "-o", "BatchMode=yes", "-o", "ConnectTimeout=10",
                self.hosts[side], remote]

    def prepare(self):
        for side in SIDES:
            rc, _, err = self.run(side, ["mkdir", "-p", self.dir])
            if rc != 0:
                raise LauncherError(f"ssh {self.hosts[side]}: cannot create {self.dir}: "
                                    f"{err.strip()}")

    def json_path(self, side, run_id):
        # The stamp keeps a file of an earlier sweep in remote_dir from passing for ours.
        return f"{self.dir}/{self.stamp}-{run_id}-{side}.json"

    def clear(self, side, path):
        pass   # the name is unique to this sweep

    def fetch(self, side, path):
        rc, out, _ = self.run(side, ["cat", path])
        return out if rc == 0 else None

    def server_addr(self):
        return self.addr

    def describe(self):
        return {"launcher": self.name, "hosts": dict(self.hosts), "remote_dir": self.dir}


def make(name, out_dir, settings, lab_cmd, ssh_cmd):
    if name == "local":
        return Local(out_dir, settings)
    if name == "lab":
        return Lab(out_dir, settings, lab_cmd)
    if name == "ssh":
        return Ssh(out_dir, settings, ssh_cmd)
    raise LauncherError(f"unknown launcher '{name}' (local, lab or ssh)")

# SPDX-License-Identifier: BSD-2-Clause
"""What the rdmamon lab tests 82-84 share: rdmamon running on node 1 (its
JSON lines read from the share), cgroups on node 1's cgroup2 tree, small
verbs programs of ours compiled for the test, and scrapes of --listen."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Any, Optional, Sequence

from benchlib.labctl import TOP, Lab

BUILD = Path(os.environ.get("PT_BUILD") or TOP / "build")
RDMAMON = BUILD / "monitor" / "rdmamon"
CGROOT = "/sys/fs/cgroup"
# rdmamon's start (BTF, loading and verifying its programs, seeding) takes
# 15-25 s on an idle TCG guest and over a minute on a host loaded by other labs
MONITOR_START = 240

# Holds objects until a stop file appears: 1 PD, 1 CQ, NQP RC QPs, NMR MRs
# (and the device context). argv: DEV NQP NMR STOPFILE.
HOLD_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>
int main(int argc, char **argv) {
    if (argc != 5) return 2;
    int nqp = atoi(argv[2]), nmr = atoi(argv[3]);
    struct ibv_device **l = ibv_get_device_list(NULL);
    struct ibv_context *c = NULL;
    for (int i = 0; l && l[i]; i++)
        if (!strcmp(ibv_get_device_name(l[i]), argv[1])) c = ibv_open_device(l[i]);
    if (!c) { fprintf(stderr, "no device %s\n", argv[1]); return 2; }
    struct ibv_pd *pd = ibv_alloc_pd(c);
    struct ibv_cq *cq = ibv_create_cq(c, 16, NULL, NULL, 0);
    if (!pd || !cq) { perror("pd/cq"); return 2; }
    static char buf[64][4096];
    struct ibv_mr *mr[64]; struct ibv_qp *qp[64];
    for (int i = 0; i < nmr && i < 64; i++)
        if (!(mr[i] = ibv_reg_mr(pd, buf[i], 4096, IBV_ACCESS_LOCAL_WRITE))) { perror("mr"); return 2; }
    for (int i = 0; i < nqp && i < 64; i++) {
        struct ibv_qp_init_attr a = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
            .cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 } };
        if (!(qp[i] = ibv_create_qp(pd, &a))) { perror("qp"); return 2; }
    }
    printf("ready pid %d pd 1 cq 1 qp %d mr %d\n", (int)getpid(), nqp, nmr);
    fflush(stdout);
    while (access(argv[4], F_OK) != 0) usleep(100000);
    for (int i = 0; i < nqp; i++) ibv_destroy_qp(qp[i]);
    for (int i = 0; i < nmr; i++) ibv_dereg_mr(mr[i]);
    ibv_destroy_cq(cq); ibv_dealloc_pd(pd); ibv_close_device(c);
    return 0;
}
"""


def compile_c(lab: Lab, workdir: Path, name: str, source: str) -> Path:
    """gcc on the host into the share (the guests run the host's root)."""
    src = workdir / f"{name}.c"
    exe = lab.share() / name
    src.write_text(source)
    cc = subprocess.run(["gcc", "-O2", "-Wall", "-o", str(exe), str(src), "-libverbs"],
                        capture_output=True, text=True, timeout=120)
    assert cc.returncode == 0, cc.stderr
    return exe


class Monitor:
    """rdmamon [view] -i 1 --json [args] on node (1 by default), its lines read
    from a shared file; stop() sends SIGINT (the final summary) and waits."""

    def __init__(self, lab: Lab, workdir: Path, args: Sequence[str] = (), tag: str = "rdmamon",
                 view: str = "", node: int = 1) -> None:
        share = lab.share()
        self.out = share / f"{tag}.jsonl"
        self.err = share / f"{tag}.err"
        self.stop_file = share / f"{tag}.stop"
        for f in (self.out, self.err, self.stop_file):
            f.unlink(missing_ok=True)
        argv = " ".join([str(RDMAMON), *([view] if view else []), "-i", "1", "--json", *args])
        script = (f'{argv} > {self.out} 2> {self.err} & p=$!; '
                  f'while [ ! -e {self.stop_file} ] && kill -0 $p 2>/dev/null; do sleep 0.3; done; '
                  f'kill -INT $p; wait $p')
        self.log = open(workdir / f"{tag}.exec", "wb")
        self.proc = lab.start(node, ["sh", "-c", script], 600, self.log, subprocess.STDOUT)

    def lines(self) -> list[dict[str, Any]]:
        if not self.out.exists():
            return []
        text = self.out.read_text()
        # a last line without its newline is still being written
        done = text[:text.rfind("\n") + 1]
        return [json.loads(l) for l in done.splitlines() if l.strip()]

    def next_line(self, timeout: float = 30) -> dict[str, Any]:
        """The first interval written after this call."""
        n = len(self.lines())
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ls = self.lines()
            if len(ls) > n:
                return ls[n]
            assert self.proc.poll() is None, f"rdmamon ended\n{self.evidence()}"
            time.sleep(0.2)
        raise AssertionError(f"no rdmamon interval in {timeout}s\n{self.evidence()}")

    def stop(self) -> int:
        self.stop_file.touch()
        try:
            return self.proc.wait(timeout=60)
        finally:
            self.log.close()

    def evidence(self) -> str:
        err = self.err.read_text() if self.err.exists() else ""
        return f"rdmamon stderr:\n{err[-3000:]}"


class Holder:
    """HOLD_C started on node 1 inside cgroup path cg; ready() waits for its line."""

    def __init__(self, lab: Lab, exe: Path, workdir: Path, dev: str, cg: str, nqp: int, nmr: int) -> None:
        self.stop_file = lab.share() / f"hold{cg.replace('/', '_')}.stop"
        self.stop_file.unlink(missing_ok=True)
        self.outf = workdir / f"hold{cg.replace('/', '_')}.out"
        self.log = open(self.outf, "wb")
        script = f'echo $$ > {CGROOT}{cg}/cgroup.procs && exec {exe} {dev} {nqp} {nmr} {self.stop_file}'
        self.proc = lab.start(1, ["sh", "-c", script], 300, self.log, subprocess.STDOUT)
        self.pid = 0

    def ready(self, timeout: float = 60) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = re.search(r"ready pid (\d+)", self.outf.read_text())
            if m:
                self.pid = int(m.group(1))
                return self.pid
            assert self.proc.poll() is None, f"holder ended: {self.outf.read_text()}"
            time.sleep(0.2)
        raise AssertionError(f"holder not ready in {timeout}s: {self.outf.read_text()}")

    def stop(self) -> None:
        self.stop_file.touch()
        try:
            self.proc.wait(timeout=60)
        finally:
            self.log.close()


def qpns(text: str) -> list[int]:
    """The QPNs one of our tools printed as its local addresses."""
    return [int(x, 16) for x in re.findall(r"local address:.*QPN (0x[0-9a-fA-F]+)", text)]


def cq_mod(text: str) -> int:
    """The CQ moderation one of our BW tools printed."""
    m = re.search(r"CQ Moderation\s*:\s*(\d+)", text)
    assert m, "the tool prints no CQ Moderation line"
    return int(m.group(1))


def signaled(iters: int, mod: int) -> int:
    """Signaled WRs of a run of iters: every mod-th and the last."""
    return iters // mod + (1 if iters % mod else 0)


def make_cgroups(lab: Lab, names: Sequence[str]) -> None:
    """cgroup2 directories under the root with the rdma controller enabled
    for them (rdmamon mounted cgroup2 at start when it was missing)."""
    mkdirs = " && ".join(f"mkdir -p {CGROOT}/{n}" for n in names)
    d = lab.exec(1, ["sh", "-c", f"test \"$(stat -f -c %T {CGROOT})\" = cgroup2fs && "
                     f"grep -qw rdma {CGROOT}/cgroup.controllers && "
                     f"echo +rdma > {CGROOT}/cgroup.subtree_control && {mkdirs}"], timeout=60)
    assert d.rc == 0, f"cannot make cgroups {names} with +rdma under {CGROOT}\n{d.evidence()}"


def remove_cgroups(lab: Lab, names: Sequence[str]) -> None:
    lab.exec(1, ["sh", "-c", " ; ".join(f"rmdir {CGROOT}/{n} 2>/dev/null" for n in names) + "; true"],
             timeout=60)


def rdma_current(lab: Lab, cg: str, dev: str) -> dict[str, int]:
    """A cgroup's rdma.current for dev: {hca_handle: n, hca_object: n}
    (zeros when the device is not listed)."""
    d = lab.exec(1, ["cat", f"{CGROOT}/{cg}/rdma.current"], timeout=60)
    assert d.rc == 0, d.evidence()
    for line in d.out.splitlines():
        f = line.split()
        if f and f[0] == dev:
            return {k: int(v) for k, v in (x.split("=") for x in f[1:])}
    return {"hca_handle": 0, "hca_object": 0}


def scrape(lab: Lab, url: str, accept: Optional[str] = None, node: int = 1) -> tuple[int, str, str]:
    """curl on node: (exit code, headers, body)."""
    hdr = ["-H", f"Accept: {accept}"] if accept else []
    d = lab.exec(node, ["curl", "-sS", "--max-time", "10", "-i", *hdr, url], timeout=60)
    parts = re.split(r"\r?\n\r?\n", d.out, maxsplit=1)
    return d.rc, parts[0], parts[1] if len(parts) > 1 else ""


def next_scrape(lab: Lab, url: str, after: float = -1.0, timeout: float = 60) -> tuple[float, str]:
    """The first exposition whose rdmamon_last_update_timestamp_seconds is
    later than after (any answered one with the default): (that time, text).
    For the events view, which prints no intervals but renews /metrics."""
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        rc, head, body = scrape(lab, url)
        if rc == 0 and head and " 200 " in head.splitlines()[0]:
            ts = value(samples(body), "rdmamon_last_update_timestamp_seconds")
            if ts > after:
                return ts, body
        last = head
        time.sleep(0.3)
    raise AssertionError(f"no renewed /metrics at {url} in {timeout}s (last answer: {last[:200]!r})")


SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def samples(text: str) -> list[tuple[str, dict[str, str], float]]:
    """The exposition's samples: (name, labels, value)."""
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        assert m, f"not a sample line: {line!r}"
        labels = {k: v.replace('\\"', '"').replace("\\\\", "\\") for k, v in LABEL.findall(m.group(2) or "")}
        out.append((m.group(1), labels, float(m.group(3))))
    return out


def value(ss: list[tuple[str, dict[str, str], float]], name: str, **labels: str) -> float:
    """The sum of name's samples whose labels include labels."""
    return sum(v for n, l, v in ss if n == name and all(l.get(k) == x for k, x in labels.items()))

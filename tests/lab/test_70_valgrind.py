# SPDX-License-Identifier: BSD-2-Clause
"""Each of our eight tools once between two nodes with one side under
valgrind memcheck (RC, -n 20): the server for send_bw, write_bw, read_bw,
atomic_bw, the client for the latency tools, so both roles of the shared
engine and every tool's own code are checked; the other side runs natively
(valgrind under TCG costs 20-30 s of guest CPU a side). A tool passes when
both sides exit 0, the client prints its result row, and valgrind reports no
error and no definitely lost block (a pair that fails with valgrind clean
runs once more, alone, with a note: under TCG with four valgrind pairs on
two host cores the transport fails now and then; a valgrind finding is
never retried). Suppressions, if any, are in tests/lab/valgrind.supp (each
entry says why it is not our bug); none are needed. valgrind runs from the
host root shared into the guests. Pairs run LABTEST_VG_JOBS (default 4) at
a time, the valgrind sides spread over both nodes, and the clients start
with their servers (they retry the connection)."""

import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from benchlib import labctl, results
from benchlib.labctl import TOP, Lab

pytestmark = pytest.mark.nodes(2)
SUPP = TOP / "tests" / "lab" / "valgrind.supp"
VG = ["valgrind", "--tool=memcheck", "--error-exitcode=99", "--leak-check=full",
      "--errors-for-leak-kinds=definite", "--num-callers=30", "--vgdb=no"]
if SUPP.exists():
    VG.append(f"--suppressions={SUPP}")
TOOLS = (os.environ.get("LABTEST_VG_TOOLS") or
         "send_bw send_lat write_bw write_lat read_bw read_lat atomic_bw atomic_lat").split()
JOBS = int(os.environ.get("LABTEST_VG_JOBS") or 4)
ITERS = 20
WAIT = 600     # per side; a side under valgrind takes 20-30 s of guest CPU under TCG
_run: dict[str, Any] = {}


def vg_side(tool: str) -> str:
    return "cli" if tool.endswith("_lat") else "srv"


class VgPair:
    """Both sides of one tool at once; outputs in workdir/TOOL.srv|cli."""

    def __init__(self, lab: Lab, ours, dev: str, gid: int, workdir: Path, tool: str, port: int,
                 sn: int) -> None:
        cn = 3 - sn
        args = ["-d", dev, "-x", str(gid), "-F", "-n", str(ITERS), f"--oob_timeout={WAIT - 60}",
                "-p", str(port)]
        self.files = {s: workdir / f"{tool}.{s}" for s in ("srv", "cli")}
        self.argv = {"srv": [ours(f"ib_{tool}"), *args],
                     "cli": [ours(f"ib_{tool}"), *args, lab.addr(sn)]}
        self.argv[vg_side(tool)][:0] = VG
        self.procs: dict[str, "subprocess.Popen[bytes]"] = {}
        for s, node in (("srv", sn), ("cli", cn)):
            with open(self.files[s], "wb") as f:
                self.procs[s] = lab.start(node, self.argv[s], WAIT, f, subprocess.STDOUT)

    def wait(self) -> dict[str, int]:
        rcs = {}
        deadline = time.monotonic() + WAIT + 40
        for s, p in self.procs.items():
            try:
                rcs[s] = p.wait(max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                labctl.kill_group(p)
                rcs[s] = labctl.TIMEOUT_RC
        return rcs

    def kill(self) -> None:
        for p in self.procs.values():
            labctl.kill_group(p)


def vg_verdict(text: str) -> str:
    """What valgrind says is wrong (empty: nothing)."""
    errors = re.findall(r"^==[0-9]*== ERROR SUMMARY: ([0-9]*) errors", text, re.M)
    lost = re.findall(r"^==[0-9]*==  *definitely lost: ([0-9,]*) bytes", text, re.M)
    if not errors:
        return "no valgrind summary"
    why = f"{errors[-1]} errors " if int(errors[-1]) else ""
    if lost and lost[-1] != "0":
        why += f"{lost[-1]} bytes definitely lost"
    return why


def verdict(tool: str, texts: dict[str, str], rcs: dict[str, int]) -> tuple[str, bool]:
    """(what is wrong with the pair, whether valgrind found it)."""
    why, found = [], False
    for s in ("srv", "cli"):
        v = vg_verdict(texts[s]) if vg_side(tool) == s else ""
        if v:
            why.append(f"{s}: valgrind: {v}")
            found = True
        elif rcs.get(s) != 0:
            why.append(f"{s}: exit {rcs.get(s)}")
    if not why and not any(r.iters == ITERS for r in results.rows(texts["cli"])):
        why.append(f"client: no result row with {ITERS} iterations")
    return "; ".join(why), found


@pytest.fixture
def vg_runs(lab: Lab, ours, dev: str, gid: int, workdir: Path) -> dict[str, Any]:
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed (ci/deps installs it)")
    if _run.get("boot") == (lab.boots, lab.nodes()):
        return _run
    port = 18700
    t0 = time.monotonic()
    rcs: dict[str, dict[str, int]] = {}
    for i in range(0, len(TOOLS), JOBS):
        batch: dict[str, VgPair] = {}
        try:
            for j in range(i, min(i + JOBS, len(TOOLS))):
                port += 1
                tool = TOOLS[j]
                vn = 1 + j // 2 % 2     # the valgrind sides two by two on each node
                sn = vn if vg_side(tool) == "srv" else 3 - vn
                batch[tool] = VgPair(lab, ours, dev, gid, workdir, tool, port, sn)
            for tool, p in batch.items():
                rcs[tool] = p.wait()
        finally:
            for p in batch.values():
                p.kill()
    notes = [f"{time.monotonic() - t0:.0f} s for {len(TOOLS)} tools, {JOBS} at a time"]
    texts: dict[str, dict[str, str]] = {}
    for tool in TOOLS:
        d = workdir
        texts[tool] = {s: (d / f"{tool}.{s}").read_text(errors="replace") for s in ("srv", "cli")}
        why, found = verdict(tool, texts[tool], rcs[tool])
        if not why or found:
            continue
        for s in ("srv", "cli"):
            (d / f"{tool}.{s}").rename(d / f"{tool}.{s}.first")
        port += 1
        p = VgPair(lab, ours, dev, gid, workdir, tool, port, 1)
        try:
            rcs[tool] = p.wait()
        finally:
            p.kill()
        texts[tool] = {s: (d / f"{tool}.{s}").read_text(errors="replace") for s in ("srv", "cli")}
        notes.append(f"valgrind/{tool}: first attempt failed ({why}), run again alone")
    _run.clear()
    _run.update(boot=(lab.boots, lab.nodes()), rcs=rcs, texts=texts, notes=notes)
    return _run


def show_vg(text: str) -> str:
    """valgrind's reports (not its banner or summaries), bounded, and the
    tool's own last lines."""
    banner = re.compile(r"== (Memcheck|Copyright|Using Valgrind|Command|For lists|To see them|"
                        r"Reachable blocks|Rerun with)")
    vg = [re.sub(r"^==[0-9]*== ", "", l) for l in text.splitlines()
          if re.match(r"^==[0-9]+== ", l) and not banner.search(l)]
    own = [l for l in text.splitlines() if not re.match(r"^==[0-9]+==", l)
           and not re.match(r"^ *[A-Z][A-Za-z. ]* *: ", l)][-15:]
    return "".join(f"    | {l}\n" for l in vg[:80] if l.strip()) + "".join(f"    > {l}\n" for l in own)


@pytest.mark.name("valgrind/{id}")
@pytest.mark.parametrize("tool", TOOLS, ids=TOOLS)
def test_tool(vg_runs: dict[str, Any], tool: str, note) -> None:
    for n in vg_runs["notes"]:
        if n.startswith(f"valgrind/{tool}:") or (tool == TOOLS[0] and not n.startswith("valgrind/")):
            note(n)
    texts, rcs = vg_runs["texts"][tool], vg_runs["rcs"][tool]
    why, _ = verdict(tool, texts, rcs)
    assert not why, why + "\n" + "".join(f"  {tool} {s}:\n{show_vg(texts[s])}" for s in ("srv", "cli"))
    supp = sum(int(x) for s in ("srv", "cli")
               for x in re.findall(r"ERROR SUMMARY: .*\(suppressed: ([0-9]*) from", texts[s]))
    note(f"valgrind/{tool}: 0 errors, 0 bytes definitely lost on the {vg_side(tool)} side "
         f"({supp} suppressed)")

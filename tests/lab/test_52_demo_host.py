# SPDX-License-Identifier: BSD-2-Clause
"""The README's main job on a host that has an RDMA device: ci/demo run
inside lab node 1 (its rxe device; the guest's root is read-only, so the
build is the host's and the results go to the share). Host mode is chosen
by itself; RC and UD runs between two processes through the device complete
with traces, summaries and PNG plots; the local sweep writes a dataset and
plots."""

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from benchlib.labctl import TOP, Lab

pytestmark = pytest.mark.nodes(2)
_run: dict[str, Any] = {}


@pytest.fixture
def demo(lab: Lab, build_dirs: dict[str, Path]) -> dict[str, Any]:
    if _run.get("boot") == (lab.boots, lab.nodes()):
        return _run
    out = lab.share() / "demo-host"
    shutil.rmtree(out, ignore_errors=True)
    d = lab.exec(1, ["env", "DEMO_NO_BUILD=1", f"PT_BUILD={build_dirs['build']}", f"DEMO_OUT={out}",
                     "DEMO_ITERS=300", "DEMO_SWEEP_ARGS=--iters 100 --size 64 --qps 1",
                     str(TOP / "ci" / "demo")], timeout=600)
    _run.clear()
    _run.update(boot=(lab.boots, lab.nodes()), out=out, done=d)
    return _run


def log(demo: dict[str, Any]) -> str:
    return str(demo["done"].text)


@pytest.mark.name("host-mode-chosen")
def test_host_mode(demo: dict[str, Any], dev: str) -> None:
    assert re.search(rf"^demo: host mode \({re.escape(dev)} 1\)", log(demo), re.M), \
        demo["done"].evidence(60)


@pytest.mark.name("exit-0")
def test_exit(demo: dict[str, Any], note) -> None:
    assert demo["done"].rc == 0, demo["done"].evidence(60)
    note(f"demo (host mode in node 1): {len(log(demo).splitlines())} lines, "
         f"{len(list(demo['out'].iterdir()))} files in the results folder")


@pytest.mark.name("rc-ud-rows")
def test_rows(demo: dict[str, Any]) -> None:
    rows = re.findall(r"^ (65536|1024) +300 ", log(demo), re.M)
    assert len(rows) == 2, f"{len(rows)} RC/UD rows of 300 iterations, want 2\n{demo['done'].evidence(60)}"


@pytest.mark.name("summaries")
def test_summaries(demo: dict[str, Any]) -> None:
    assert log(demo).count("wrtrace run 0") >= 2, demo["done"].evidence(60)


@pytest.mark.name("pngs")
def test_pngs(demo: dict[str, Any]) -> None:
    """Four traces' plots and at least one sweep plot, all PNGs."""
    out = demo["out"]
    files = sorted(out.glob("*.png")) + sorted((out / "sweep" / "plots").glob("*.png"))
    bad = [str(f) for f in files if not (f.stat().st_size and f.read_bytes()[:4] == b"\x89PNG")]
    assert not bad, f"not PNGs: {bad}"
    assert len(files) >= 5, f"{len(files)} PNGs, want at least 5\n{demo['done'].evidence(60)}"


@pytest.mark.name("sweep-dataset")
def test_sweep_dataset(demo: dict[str, Any]) -> None:
    with open(demo["out"] / "sweep" / "dataset.jsonl") as f:
        rows = [json.loads(line) for line in f]
    assert len(rows) == 2 and all(r["status"] == "ok" for r in rows), rows

# SPDX-License-Identifier: BSD-2-Clause
"""bench/ in the lab (issue 6): the small sweep of bench/matrix/lab-small.ini
(ib_send_bw, 2 sizes x 2 QP counts x RC/UD, nic-local) between node 1 and
node 2 completes; the dataset has one row per run with every metadata
field; the plots are valid PNGs; compare of the dataset with itself gives
1.00."""

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from benchlib import dataset
from benchlib.labctl import TOP, Lab

pytestmark = pytest.mark.nodes(2)
BENCH = TOP / "bench"
MATRIX = BENCH / "matrix" / "lab-small.ini"
_run: dict[str, Any] = {}


@pytest.fixture
def sweep(lab: Lab, workdir: Path, build_dirs: dict[str, Path]) -> dict[str, Any]:
    """The sweep, once per lab boot: its output folder, run count, log."""
    if _run.get("boot") == (lab.boots, lab.nodes()):
        return _run
    out = workdir / "sweep"
    dry = subprocess.run([str(BENCH / "sweep"), "--launcher", "lab", "--matrix", str(MATRIX),
                          "--out", str(out), "--dry-run"], capture_output=True, text=True,
                         env=lab.env, timeout=120)
    m = re.search(r"^([0-9]+) runs, ", dry.stdout, re.M)
    assert m, f"bench/sweep --dry-run names no run count\n{dry.stdout}{dry.stderr}"
    p = subprocess.run([str(BENCH / "sweep"), "--launcher", "lab", "--matrix", str(MATRIX),
                        "--out", str(out), "--bindir", str(build_dirs["ours"]),
                        "--nicinfo", str(build_dirs["build"] / "bench" / "nicinfo")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       env=lab.env, timeout=1500)
    _run.clear()
    _run.update(boot=(lab.boots, lab.nodes()), out=out, runs=int(m.group(1)), rc=p.returncode,
                log=p.stdout)
    return _run


@pytest.mark.name("sweep")
def test_sweep(sweep: dict[str, Any], note) -> None:
    """Every run ok (exit 0) and one progress line per run."""
    runs, log = sweep["runs"], sweep["log"]
    assert sweep["rc"] == 0, f"bench/sweep exit {sweep['rc']}\n{log}"
    progress = re.findall(rf"^\[[0-9]*/{runs}\] .*ETA", log, re.M)
    assert len(progress) == runs, f"{len(progress)} progress lines, want {runs}\n{log}"
    for line in log.splitlines():
        if line.startswith("["):
            note(line)


NEED = ("tool_version", "peer_version", "client_host", "server_host", "client_kernel",
        "server_kernel", "device", "port_rate", "link_layer", "netdev", "client_placement",
        "server_placement", "client_cmd", "server_cmd", "client_rc", "server_rc", "start_time",
        "bw_gbps", "msg_rate_mpps", "bw_pct_reason", "client_nic", "server_nic", "test_info")


@pytest.mark.name("dataset")
def test_dataset(sweep: dict[str, Any], note) -> None:
    """One ok row per run, the same in JSONL and CSV, metadata filled."""
    out = sweep["out"]
    rows = dataset.load(str(out / "dataset.jsonl"))
    assert rows == dataset.load(str(out / "dataset.csv")), "JSONL and CSV differ"
    assert len(rows) == sweep["runs"], f"{len(rows)} rows for {sweep['runs']} runs"
    for r in rows:
        assert r["status"] == "ok", (r["run_id"], r["error"])
        missing = [k for k in NEED if r[k] is None]
        assert not missing, (r["run_id"], missing)
        assert r["client_placement"].startswith("nic-local: cpus "), r["client_placement"]
        assert r["client_host"] != r["server_host"], "both ends on one node"
        note(f"{r['run_id']} {r['conn']} q{r['qps']} {r['size']} {r['bw_gbps']:.3f} Gb/s "
             f"{r['client_placement']} limit: {r['limit_gbps']} {r['bw_pct_reason']}")


@pytest.mark.name("plots")
def test_plots(sweep: dict[str, Any]) -> None:
    """Two PNGs (BW, rate; no latency runs here) with the PNG signature."""
    out = sweep["out"]
    p = subprocess.run([str(BENCH / "plot"), str(out), "-o", str(out / "plots")],
                       capture_output=True, text=True, timeout=300)
    pngs = [f for f in sorted((out / "plots").glob("*.png"))
            if f.stat().st_size and f.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"]
    assert len(pngs) == 2, f"{len(pngs)} valid PNGs, want 2\n{p.stdout}{p.stderr}"


@pytest.mark.name("compare-self")
def test_compare_self(sweep: dict[str, Any]) -> None:
    """compare with itself: exit 0, every ratio 1.00."""
    out = sweep["out"]
    p = subprocess.run([str(BENCH / "compare"), str(out), str(out)], capture_output=True,
                       text=True, timeout=300)
    log = p.stdout + p.stderr
    assert p.returncode == 0, f"exit {p.returncode}\n{log}"
    assert re.search(rf"^compared {sweep['runs']} .* 0 with a regression", p.stdout, re.M), log
    bad = [line for line in p.stdout.splitlines() if line.startswith("ib_")
           and any(f not in ("1.00", "-") for f in line.split()[-5:-1])]
    assert not bad, f"ratios other than 1.00: {bad}\n{log}"

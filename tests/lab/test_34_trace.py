# SPDX-License-Identifier: BSD-2-Clause
"""Per-WR tracing in our tools: --trace on both sides (RC and UD
ib_send_bw, ib_send_lat, ib_write_bw with 2 QPs): one record per WR, counts
match the iterations, post times rise per QP, completion >= post
(benchlib.tracecheck); the summary is printed and `wrtrace report` reads
the file back; our regular loops keep every row deferred to run end. The
example plugin is loaded and called (--plugin); a plugin that cannot be
loaded stops the tool; bench/trace-overhead runs (its figure is for the
log, not a pass mark)."""

import os
import re
import subprocess
from pathlib import Path

import pytest

from benchlib import caps, results, tracecheck
from benchlib.labctl import TOP, Lab

BUILD = Path(os.environ.get("PT_BUILD") or TOP / "build")
WRTRACE = BUILD / "plugin" / "wrtrace"
COUNT = BUILD / "plugin" / "examples" / "count_plugin.so"
pytestmark = pytest.mark.nodes(2)

# name, tool, arguments, server's rows (None: no file checked; "auto": as
# many RECV as the server reports messages, UD may lose some), client's rows
CASES = [
    ("rc-send-bw", "ib_send_bw", "-n 200 -Q 16", {"RECV": 200}, {"SEND": 200}),
    ("ud-send-bw", "ib_send_bw", "-c UD -s 1024 -n 200", "auto", {"SEND": 200}),
    ("send-lat", "ib_send_lat", "-n 100", {"SEND": 100, "RECV": 100}, {"SEND": 100, "RECV": 100}),
    ("write-bw-q2", "ib_write_bw", "-q 2 -n 100 -Q 8", None, {"WRITE": 200}),
    # -e: the latency loops' hooked copies sleeping on the completion channel
    ("send-lat-events", "ib_send_lat", "-e -n 100", {"SEND": 100, "RECV": 100},
     {"SEND": 100, "RECV": 100}),
    ("read-lat-events", "ib_read_lat", "-e -n 100", None, {"READ": 100}),
]


@pytest.fixture
def built() -> None:
    assert WRTRACE.exists() and COUNT.exists(), f"wrtrace or the example plugin is not built in {BUILD}"


@pytest.mark.name("{id}")
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_trace_pair(built: None, lab: Lab, pair, ours, dev: str, gid: int, note, workdir: Path,
                    case: tuple) -> None:
    name, tool, args, sspec, cspec = case
    share = lab.share()
    files = {role: share / f"{name}.{role}.csv" for role in ("srv", "cli")}
    for f in files.values():
        f.unlink(missing_ok=True)
    base = [ours(tool), "-d", dev, "-x", str(gid), *args.split()]
    p = pair(name, [*base, f"--trace={files['srv']}"], [*base, f"--trace={files['cli']}"])
    ev = p.evidence(25)
    assert p.server.rc == 0 and p.client.rc == 0, f"exit {p.server.rc}/{p.client.rc}\n{ev}"
    if sspec == "auto":
        rs = results.rows(p.server.text)
        assert rs, f"the server reports no row\n{ev}"
        sspec = {"RECV": rs[0].iters}
    if sspec is not None:
        bad = tracecheck.check_tool_trace(results.read_trace(files["srv"]), sspec)
        assert not bad, "server: " + "\n".join(bad) + "\n" + ev
    bad = tracecheck.check_tool_trace(results.read_trace(files["cli"]), cspec)
    assert not bad, "client: " + "\n".join(bad) + "\n" + ev
    assert "wrtrace run 0" in p.client.text, f"no summary\n{ev}"
    if caps.hw_timestamps(lab, dev) is not None:     # rxe: no clock to stamp CQEs
        assert f"hardware CQE timestamps: not supported by {dev}" in p.client.text, \
            f"the summary does not say {dev} has no CQE timestamps\n{ev}"
    else:
        assert re.search(r"hardware CQE timestamps: (?!not supported)", p.client.text), ev
    rep = subprocess.run([str(WRTRACE), "report", str(files["cli"])], capture_output=True,
                         text=True, timeout=120)
    assert rep.returncode == 0, f"wrtrace report failed: {rep.stdout}{rep.stderr}"
    # our loops are regular: the recorder must defer every row to run end
    ho = [l for l in (p.server.text + p.client.text).splitlines() if "rows built at each CQE" in l]
    assert not ho, f"deferral ended: {ho[0]}\n{ev}"
    note(f"{name}: " + next((" ".join(l.split()) for l in p.client.text.splitlines()
                              if "post->compl" in l), ""))


@pytest.mark.name("example-plugin")
def test_example_plugin(built: None, lab: Lab, pair, ours, dev: str, gid: int, note) -> None:
    """One start and one end line per run, every WR counted."""
    out = lab.share() / "count.txt"
    out.unlink(missing_ok=True)
    base = [ours("ib_send_bw"), "-d", dev, "-x", str(gid), "-n", "150"]
    p = pair("plugin", base, [*base, f"--plugin={COUNT}:{out}"])
    ev = p.evidence()
    assert p.server.rc == 0 and p.client.rc == 0, f"exit {p.server.rc}/{p.client.rc}\n{ev}"
    text = out.read_text() if out.exists() else ""
    assert re.search(rf"^start run=0 tool=ib_send_bw device={re.escape(dev)} qps=1", text, re.M), \
        f"no start line in {out}:\n{text}\n{ev}"
    assert re.search(r"^end run=0 .* wrs=150 .* last_seq=149 ", text, re.M), \
        f"no end line with 150 WRs in {out}:\n{text}\n{ev}"
    note(f"example plugin: {text.strip().splitlines()[-1]}")


@pytest.mark.name("bad-plugin-refused")
def test_bad_plugin(lab: Lab, ours, dev: str, note) -> None:
    """A plugin that cannot be loaded stops the tool before any traffic."""
    d = lab.exec(2, [ours("ib_send_bw"), "-d", dev, "--plugin=/nonexistent.so", "192.0.2.1"],
                 timeout=30)
    assert d.rc == 1, f"exit {d.rc}, not 1\n{d.evidence()}"
    assert "nonexistent.so" in d.text, f"the tool does not name the plugin\n{d.evidence()}"
    note(f"bad plugin: {d.text.strip().splitlines()[0]}")


@pytest.mark.name("trace-overhead")
def test_trace_overhead(lab: Lab, note) -> None:
    """What --trace costs on the lab link: four plain and four traced runs of
    RC 64 B in ABBA order; the ratio of the medians is a figure for the log
    (the lab link is too noisy for more rounds to sharpen it)."""
    env = dict(lab.env, PT_BUILD=str(BUILD))
    p = subprocess.run([str(TOP / "bench" / "trace-overhead"), "4", "2000"], capture_output=True,
                       text=True, env=env, timeout=800)
    assert p.returncode == 0, f"bench/trace-overhead failed ({p.returncode})\n{p.stdout}{p.stderr}"
    lines = p.stdout.splitlines()
    for i, l in enumerate(lines):
        if l.startswith("case") and i + 1 < len(lines):
            note(f"trace-overhead: {' '.join(lines[i + 1].split())}")
    for l in lines:
        note(f"  | {l}")

# SPDX-License-Identifier: BSD-2-Clause
"""rdmamon's wr view (rdmamon.8) counts our tools' WRs from their USDT
probes (docs/usdt.md), without --plugin. On node 2, `rdmamon wr --json
build/perftest/ib_send_bw` attaches to the tool's probes by path before the
client starts; then `ib_send_bw -s 64 -q 2 -n N -Q MOD` runs, its client on
node 2. rdmamon's final summary, against what is known from outside it:
  - exactly one process of the tool, with the QPNs it printed, each with N
    WRs posted and the signaled WRs completed (every MOD-th and the last, MOD
    as the tool printed it), the last CQE retiring sequence N-1, no error;
    one run started and ended, not failed, of N iterations; nothing lost;
  - a binary without perftest probes (/bin/true) is refused with a clear
    message and a non-zero exit;
  - the same run once rdmamon has left ends as well (the probes off again).
Skips when rdmamon is not built or node 2 has no BPF support."""

from pathlib import Path
from typing import Any

import pytest

from benchlib import caps
from benchlib.labctl import Lab
from monitorlib import BUILD, MONITOR_START, RDMAMON, Monitor, cq_mod, qpns, signaled

pytestmark = pytest.mark.nodes(2)
N, QPS, MOD = 1000, 2, 7
TOOL = BUILD / "perftest" / "ib_send_bw"


def the_process(final: dict[str, Any], comm: str) -> dict[str, Any]:
    procs = [p for p in final["processes"] if p.get("comm") == comm]
    assert len(procs) == 1, f"{len(procs)} processes named {comm} in rdmamon's summary: {final}"
    return procs[0]


@pytest.mark.name("count-wrs")
def test_monitor_wr(lab: Lab, pair, dev: str, gid: int, note, workdir: Path) -> None:
    for why in (caps.built(RDMAMON), caps.built(TOOL), caps.bpf(lab, node=2)):
        if why:
            pytest.skip(why)
    bad = lab.exec(2, [str(RDMAMON), "wr", "/bin/true"], timeout=120)
    assert bad.rc != 0 and "has no perftest USDT probes" in bad.err, \
        f"a binary without probes: exit {bad.rc}\n{bad.err[-1500:]}"

    argv = [str(TOOL), "-d", dev, "-x", str(gid), "-s", "64", "-q", str(QPS), "-n", str(N),
            "-Q", str(MOD)]
    mon = Monitor(lab, workdir, args=[str(TOOL)], tag="rdmamon-wr", view="wr", node=2)
    try:
        mon.next_line(timeout=MONITOR_START)     # attached: intervals flow
        bw = pair("send-bw-watched", argv, argv, timeout=120)
    finally:
        rc = mon.stop()
    lines = mon.lines()
    ev = f"{bw.evidence(20)}\n{mon.evidence()}\nrdmamon's last line: {lines[-1] if lines else None}"
    assert rc == 0 and lines and lines[-1].get("final"), f"rdmamon exit {rc}, no final summary\n{ev}"
    assert bw.server.rc == 0 and bw.client.rc == 0, f"ib_send_bw exit {bw.server.rc}/{bw.client.rc}\n{ev}"
    final = lines[-1]
    mod = cq_mod(bw.client.text)
    assert mod == MOD, f"the tool printed CQ moderation {mod}, not -Q {MOD}\n{ev}"
    want = sorted(qpns(bw.client.text))
    assert len(want) == QPS, f"the client printed {len(want)} QPNs\n{ev}"

    p = the_process(final, "ib_send_bw")
    got = {q["qpn"]: q for q in p["qps"]}
    assert sorted(got) == want, f"QPNs seen {sorted(got)}, printed {want}\n{ev}"
    for qpn, q in got.items():
        assert q["posted"] == N, f"QPN {qpn}: {q['posted']} WRs posted, not {N}\n{ev}"
        assert q["completed"] == signaled(N, mod), \
            f"QPN {qpn}: {q['completed']} CQEs, not {signaled(N, mod)} (cq_mod {mod})\n{ev}"
        assert q["last_seq"] == N - 1 and q["complete_errors"] == 0, f"QPN {qpn}: {q}\n{ev}"
    assert final["totals"]["posted"] == N * QPS, f"total posted\n{ev}"
    assert (p["runs_started"], p["runs_ended"], p["runs_failed"]) == (1, 1, 0), f"runs: {p}\n{ev}"
    assert p["last_run"]["iterations"] == N and p["last_run"]["qps"] == QPS, f"last run: {p}\n{ev}"
    assert final["lost_qp_map"] == 0 and final["lost_run_map"] == 0, f"lost updates\n{ev}"
    # the intervals' deltas add up to their cumulative count (none dropped or doubled)
    steps = lines[:-1]
    assert steps and sum(l["totals"]["posted_delta"] for l in steps) == steps[-1]["totals"]["posted"], \
        f"interval deltas vs the cumulative count\n{ev}"

    plain = pair("send-bw-plain", argv, argv, timeout=120)
    assert plain.server.rc == 0 and plain.client.rc == 0, \
        f"ib_send_bw without rdmamon: exit {plain.server.rc}/{plain.client.rc}\n{plain.evidence(20)}"
    assert len(qpns(plain.client.text)) == QPS, f"without rdmamon\n{plain.evidence(20)}"
    note(f"rdmamon wr: {N * QPS} WRs posted, {signaled(N, mod) * QPS} CQEs (cq_mod {mod}) over {QPS} QPs, "
         f"1 run; /bin/true refused; the run without rdmamon ends 0")

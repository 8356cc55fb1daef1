# SPDX-License-Identifier: BSD-2-Clause
"""rdmamon --listen: a real scrape. rdmamon -i 1 --json --listen PORT runs
on node 1 while a workload of ours (HOLD_C) holds 3 QPs in a cgroup of its
own; curl on node 1 fetches /metrics, `promtool check metrics` (Debian's
prometheus) accepts it, and its figures equal those of the --json line of
the same interval (objects per device and owner, the cgroup's objects by
path, calls per operation) and the holder's own counts; with an OpenMetrics
Accept header the answer is OpenMetrics (# EOF). Given only a port, the
endpoint is on 127.0.0.1: node 2 cannot reach it. A second rdmamon on the
same port, and one on an address that is not numeric or not this host's,
exit 1 with the reason before attaching anything. Skips when rdmamon is
not built or the node has no BPF support."""

import json
import time
from pathlib import Path

import pytest

from benchlib import caps
from benchlib.labctl import Lab
from monitorlib import (MONITOR_START, HOLD_C, RDMAMON, Holder, Monitor, compile_c, make_cgroups, remove_cgroups,
                        samples, scrape, value)

pytestmark = pytest.mark.nodes(2)
CG = "ptlab-metrics"
PORT = 9484
TYPES = ("pd", "cq", "qp", "mr", "srq", "ah", "cm_id", "ctx")


def need(reason):
    if reason:
        pytest.skip(reason)


@pytest.mark.name("scrape")
def test_scrape(lab: Lab, dev: str, workdir: Path, note) -> None:
    need(caps.built(RDMAMON))
    need(caps.bpf(lab))
    exe = compile_c(lab, workdir, "rdmamon-hold", HOLD_C)
    url = f"http://127.0.0.1:{PORT}/metrics"
    mon = Monitor(lab, workdir, args=["--listen", str(PORT)], tag="rdmamon-metrics")
    holder = None
    try:
        mon.next_line(timeout=MONITOR_START)
        make_cgroups(lab, [CG])
        holder = Holder(lab, exe, workdir, dev, f"/{CG}", 3, 2)
        holder.ready()
        # rdmamon publishes a reading right after printing its line: with the
        # figures the same in the two lines before a scrape and the line after
        # it, the scrape holds those figures
        def figures(l):
            return (l["devices"], [(c.get("path"), c["live"]) for c in l["cgroups"]],
                    {op: c["total"] for op, c in l["calls"].items()}, l["lost"], l["hooks_attached"])
        mon.next_line()
        mon.next_line()
        for _ in range(6):
            earlier = mon.lines()[-2:]
            rc, headers, text = scrape(lab, url)
            assert rc == 0, f"curl {url} failed ({rc})\n{mon.evidence()}"
            line = mon.next_line()
            if figures(earlier[0]) == figures(earlier[1]) == figures(line):
                break
        else:
            raise AssertionError("the figures never steady around a scrape")
        assert "200" in headers.splitlines()[0] and "version=0.0.4" in headers, headers
        scraped = lab.share() / "rdmamon-metrics.txt"     # the guests' / is read-only
        check = lab.exec(1, ["sh", "-c", f"curl -sSf --max-time 10 {url} > {scraped} && "
                             f"test -s {scraped} && promtool check metrics < {scraped}"], timeout=60)
        assert check.rc == 0, f"promtool check metrics refused the scrape\n{check.evidence()}"
        (workdir / "scrape.txt").write_text(text)
        (workdir / "line.json").write_text(json.dumps(line, indent=1))
        ss = samples(text)
        # the same figures as the --json line of that interval
        for d in line["devices"]:
            for owner in ("user", "kernel"):
                for t in TYPES:
                    got = value(ss, "rdmamon_objects", device=d["name"], type=t, owner=owner)
                    assert got == d[owner][t], f"{d['name']} {owner} {t}: /metrics {got}, json {d[owner][t]}"
        cgj = [c for c in line["cgroups"] if c.get("path") == f"/{CG}"]
        assert cgj, f"no /{CG} in {json.dumps(line['cgroups'])}"
        for t in TYPES:
            got = value(ss, "rdmamon_cgroup_objects", cgroup=f"/{CG}", type=t)
            assert got == cgj[0]["live"][t], f"/{CG} {t}: /metrics {got}, json {cgj[0]['live'][t]}"
        assert (value(ss, "rdmamon_cgroup_objects", cgroup=f"/{CG}", device=dev, type="qp"),
                value(ss, "rdmamon_cgroup_objects", cgroup=f"/{CG}", device=dev, type="mr")) == (3, 2)
        for op, c in line["calls"].items():
            got = value(ss, "rdmamon_calls_total", operation=op)
            assert got == c["total"], f"{op}: /metrics {got}, json {c['total']}"
        assert value(ss, "rdmamon_calls_total", cgroup=f"/{CG}", operation="create_qp", errno="ok") == 3
        assert value(ss, "rdmamon_hooks_attached") == line["hooks_attached"]
        assert sum(v for n, _, v in ss if n == "rdmamon_lost_total") == sum(line["lost"].values())
        # OpenMetrics when asked for
        rc, headers, om = scrape(lab, url, accept="application/openmetrics-text; version=1.0.0")
        assert rc == 0 and "application/openmetrics-text" in headers and om.endswith("# EOF\n"), headers
        assert "# TYPE rdmamon_creates counter" in om
        rc, headers, _ = scrape(lab, f"http://127.0.0.1:{PORT}/")
        assert " 404" in headers.splitlines()[0], headers
        # only a port: loopback only, not reachable from node 2
        far = lab.exec(2, ["curl", "-sS", "--max-time", "5", f"http://{lab.addr(1)}:{PORT}/metrics"], timeout=30)
        assert far.rc != 0, f"the endpoint answered node 2 on {lab.addr(1)}:{PORT}"
        # refused before attaching: the busy port, bad addresses
        for spec, why in ((str(PORT), "Address already in use"),
                          (f"localhost:{PORT}", "not a numeric IPv4 or [IPv6] address"),
                          ("192.0.2.1:9999", "Cannot assign requested address"),
                          ("70000", "not a port number")):
            t0 = time.monotonic()
            d = lab.exec(1, [str(RDMAMON), "--listen", spec, "-c", "1"], timeout=60)
            assert d.rc == 1 and why in d.err and "existed at start" not in d.err, \
                f"--listen {spec}: exit {d.rc}\n{d.evidence()}"
            note(f"--listen {spec}: exit 1 in {time.monotonic() - t0:.1f} s: {d.err.strip()}")
        note(f"scrape: {len(ss)} samples, promtool check metrics passed, equal to the JSON line; "
             f"/{CG} qp 3 mr 2")
    finally:
        if holder:
            holder.stop()
        mon.stop()
        remove_cgroups(lab, [CG])

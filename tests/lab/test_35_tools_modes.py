# SPDX-License-Identifier: BSD-2-Clause
"""Modes of the other seven tools beyond the interop matrix: -b for write,
read and atomic BW (ours and 6.06), -A CMP_AND_SWAP, -o for read and atomic,
-D for every tool but send_bw (in 30; latency tools: upstream's duration
table, then our percentiles, also in JSON), -H/-U sample lists, -C, and -e
in the latency tools (the waiting side's poll() calls on the completion
channel, counted with strace)."""

import re
from pathlib import Path
from typing import Callable, Optional

import pytest

from benchlib import results
from benchlib.labctl import Lab

pytestmark = pytest.mark.nodes(2)
Check = Callable[[str, str, Path], Optional[str]]   # (client, server, share) -> why not


def bw_pos(text: str) -> bool:
    return any(results.positive(r.bw_avg) or results.positive(r.msg_rate) for r in results.rows(text))


def lat_pos(text: str) -> bool:
    return any(r.t_min > 0 and r.t_min <= r.t_typical <= r.t_max for r in results.rows(text))


def c_bw_pos(cli: str, srv: str, share: Path) -> Optional[str]:
    # Debian's 6.06 as the client may print 0.00 after its failed CPU-MHz
    # calibration (results.row_ok_or_calibration); our server then prints
    # the row it was sent
    if bw_pos(cli) or (results.CALIBRATION.search(cli) and results.rows(cli)):
        return None
    return "no client row with BW or message rate > 0"


def c_lat_pos(cli: str, srv: str, share: Path) -> Optional[str]:
    return None if lat_pos(cli) else "no client row with 0 < t_min <= t_typical <= t_max"


def c_bidir(cli: str, srv: str, share: Path) -> Optional[str]:
    """-b: both sides print the sum row, with a peak (each side's own, summed)."""
    for role, t in (("client", cli), ("server", srv)):
        if not any(results.positive(r.bw_peak) for r in results.rows(t)):
            return f"{role}: no row with a peak > 0"
        if not bw_pos(t):
            return f"{role}: no row with BW or message rate > 0"
    return None


def c_outs4(cli: str, srv: str, share: Path) -> Optional[str]:
    if "Outstand reads  : 4" not in cli:
        return "no 'Outstand reads  : 4'"
    if "OUT 0x04" not in cli:
        return "no 'OUT 0x04' in the address lines"
    return c_bw_pos(cli, srv, share)


def c_outs4_atomic(cli: str, srv: str, share: Path) -> Optional[str]:
    """Atomics: the header on both sides (their address lines have no OUT field)."""
    if "Outstand reads  : 4" not in cli or "Outstand reads  : 4" not in srv:
        return "no 'Outstand reads  : 4' on both sides"
    return c_bw_pos(cli, srv, share)


def c_cas(cli: str, srv: str, share: Path) -> Optional[str]:
    return c_bw_pos(cli, srv, share) if "CMP_AND_SWAP" in cli else "no CMP_AND_SWAP"


def c_cas_lat(cli: str, srv: str, share: Path) -> Optional[str]:
    return c_lat_pos(cli, srv, share) if "CMP_AND_SWAP" in cli else "no CMP_AND_SWAP"


def c_samples(cli: str, srv: str, share: Path) -> Optional[str]:
    """-U then -H: 99 unsorted samples, then the 97 kept after dropping the 2 largest."""
    heads = len(re.findall(r"^#, usec", cli, re.M))
    samples = len(re.findall(r"^[0-9]+, [0-9.]+$", cli, re.M))
    if heads != 2:
        return f"{heads} sample list headers, not 2"
    if samples != 99 + 97:
        return f"{samples} samples, not 99 + 97"
    return c_lat_pos(cli, srv, share)


def c_clock_units(cli: str, srv: str, share: Path) -> Optional[str]:
    if "nanoseconds of CLOCK_MONOTONIC_RAW" not in cli:
        return "no 'nanoseconds of CLOCK_MONOTONIC_RAW'"
    return c_lat_pos(cli, srv, share)


PCT_HEAD = re.compile(r"^ #bytes #samples +t_min\[usec\] +p50\[usec\] +p90\[usec\] +p99\[usec\] "
                      r"+p99\.9\[usec\] +p99\.99\[usec\] +p99\.999\[usec\] +t_max\[usec\]$")


def c_dur_lat(cli: str, srv: str, share: Path) -> Optional[str]:
    """Duration latency: upstream's table, "#bytes #iterations t_avg tps"
    right under its header with iterations, t_avg and tps > 0; then our
    percentile table: the labelled line, its header, one row of 10 fields
    with samples = iterations (or one fewer: -f 0), 0 < t_min <= each
    percentile in order <= t_max, and t_min <= t_avg <= t_max."""
    h = lab_line = ph = 0
    n = avg = 0.0
    up = pct = False
    for i, line in enumerate(cli.splitlines(), 1):
        if re.match(r"^ #bytes #iterations +t_avg\[usec\] +tps average$", line):
            h = i
            continue
        f = line.split()
        if h and i == h + 1 and len(f) == 4 and f[0].isdigit():
            v = [float(x) for x in f[1:]]
            if all(x > 0 for x in v):
                n, avg, up = v[0], v[1], True
        if re.match(r"^ Percentiles of the [0-9]+ round trips in the measured window", line):
            lab_line = i
        if lab_line and i == lab_line + 1 and PCT_HEAD.match(line):
            ph = i
        if ph and i == ph + 1 and len(f) == 10:
            x = [float(y) for y in f]
            ok = x[1] > 0 and x[1] in (n, n - 1) and x[2] > 0 and x[2] <= avg <= x[9]
            ok = ok and all(x[k] <= x[k + 1] for k in range(2, 9))
            pct = ok
    if not up:
        return "no duration table with iterations, t_avg and tps > 0"
    if not pct:
        return "no percentile row in order with samples = iterations and t_min <= t_avg <= t_max"
    return None


def dur_json(tool: str) -> Check:
    """With --out_json on the client: the duration row in JSON holds the
    same percentiles (iteration mode's keys), in order, and n_samples."""
    def check(cli: str, srv: str, share: Path) -> Optional[str]:
        why = c_dur_lat(cli, srv, share)
        if why:
            return why
        r = results.read_json(share / f"dur-{tool}-duration-ours-ours.json")["results"]
        keys = ["t_min", "percentile_50", "percentile_90", "percentile_99", "percentile_99.9",
                "percentile_99.99", "percentile_99.999", "max"]
        v = [r[k] for k in keys]
        if not (r["t_avg"] > 0 and r["tps_average"] > 0):
            return f"JSON t_avg / tps_average not > 0: {r}"
        if r["n_samples"] not in (r["n_iterations"], r["n_iterations"] - 1):
            return f"JSON n_samples {r['n_samples']} vs n_iterations {r['n_iterations']}"
        if not (0 < v[0] and v == sorted(v)):
            return f"JSON percentiles not in order: {v}"
        return None
    return check


def json_arg(tool: str) -> str:
    return f"--out_json --out_json_file={{share}}/dur-{tool}-duration-ours-ours.json"


# name, tool, server, client, arguments, check, client's extra arguments.
# write_bw -b at 4 KiB: two 64 KiB write streams on this TCG link hit the
# rxe failure lab 30 documents for RC -q 4 (status 9, remote invalid request,
# 6.06 against itself as well). -b is size-independent.
CELLS: list[tuple[str, str, str, str, str, Check, str]] = [
    ("write_bw/bidir/ours-ours", "write_bw", "ours", "ours", "-b -n 200 -s 4096", c_bidir, ""),
    ("write_bw/bidir/ours-up", "write_bw", "ours", "up", "-b -n 200 -s 4096", c_bidir, ""),
    ("write_bw/bidir/up-ours", "write_bw", "up", "ours", "-b -n 200 -s 4096", c_bidir, ""),
    ("read_bw/bidir/ours-ours", "read_bw", "ours", "ours", "-b -n 200", c_bidir, ""),
    ("read_bw/bidir/up-ours", "read_bw", "up", "ours", "-b -n 200", c_bidir, ""),
    ("read_bw/outs-4/ours-up", "read_bw", "ours", "up", "-o 4 -n 200", c_outs4, ""),
    ("read_bw/bidir/ours-up", "read_bw", "ours", "up", "-b -n 200", c_bidir, ""),
    ("atomic_bw/bidir/up-ours", "atomic_bw", "up", "ours", "-b -n 200", c_bidir, ""),
    ("atomic_bw/outs-4/ours-up", "atomic_bw", "ours", "up", "-o 4 -n 200", c_outs4_atomic, ""),
    ("atomic_bw/cas/ours-up", "atomic_bw", "ours", "up", "-A CMP_AND_SWAP -n 200", c_cas, ""),
    ("atomic_lat/cas/up-ours", "atomic_lat", "up", "ours", "-A CMP_AND_SWAP -n 100", c_cas_lat, ""),
    ("send_lat/duration/ours-ours", "send_lat", "ours", "ours", "-D 4", dur_json("send_lat"),
     json_arg("send_lat")),
    ("write_lat/duration/ours-ours", "write_lat", "ours", "ours", "-D 4", dur_json("write_lat"),
     json_arg("write_lat")),
    ("read_lat/duration/ours-ours", "read_lat", "ours", "ours", "-D 4", dur_json("read_lat"),
     json_arg("read_lat")),
    ("write_bw/duration/ours-ours", "write_bw", "ours", "ours", "-D 3", c_bw_pos, ""),
    ("read_bw/duration/ours-up", "read_bw", "ours", "up", "-D 2", c_bw_pos, ""),
    ("atomic_bw/duration/up-ours", "atomic_bw", "up", "ours", "-D 2", c_bw_pos, ""),
    ("atomic_lat/duration/ours-ours", "atomic_lat", "ours", "ours", "-D 4", c_dur_lat, ""),
    ("send_lat/samples/ours-ours", "send_lat", "ours", "ours", "-n 100 -U -H", c_samples, ""),
    ("write_lat/clock-units/ours-ours", "write_lat", "ours", "ours", "-n 100 -C", c_clock_units, ""),
    # -e against 6.06 (it sleeps on events too): both sides agree
    ("send_lat/events/ours-up", "send_lat", "ours", "up", "-e -n 50", c_lat_pos, ""),
    ("read_lat/events/up-ours", "read_lat", "up", "ours", "-e -n 50", c_lat_pos, ""),
]


@pytest.mark.name("{id}")
@pytest.mark.parametrize("cell", CELLS, ids=[c[0] for c in CELLS])
def test_cell(lab: Lab, pair, binary, dev: str, gid: int, note, cell: tuple) -> None:
    name, tool, srv, cli, args, check, cextra = cell
    share = lab.share()
    a = ["-d", dev, "-x", str(gid), "-F", *args.split()]
    p = pair(name.replace("/", "-"), [binary(srv, tool), *a],
             [binary(cli, tool), *a, *cextra.format(share=share).split()])
    ev = p.evidence(25)
    assert p.server.rc == 0 and p.client.rc == 0, f"exit {p.server.rc}/{p.client.rc}\n{ev}"
    why = check(p.client.text, p.server.text, share)
    assert why is None, f"{why}\n{ev}"
    note(f"{name}: {results.rows(p.client.text)[-1] if results.rows(p.client.text) else ''}")


# strace -y names a verbs event fd (completion channel, async events)
EVENT_FD = "<anon_inode:[infinibandevent]>"


def polls_wrapper(share: Path, tag: str) -> list[str]:
    """bash -c that runs "$@" under strace and prints "waits READS POLLS":
    its read() calls on a verbs event fd (the completion channel: one per
    event taken or sleep woken), and its poll() calls on one (none since
    -e sleeps in the read alone, chan_wait.h)."""
    f = share / f"polls.{tag}"
    fd = EVENT_FD.replace("[", "\\[").replace("]", "\\]")
    script = (f"strace -f -qq -y -e trace=poll,read -o {f} \"$@\"; rc=$?; "
              f"echo waits $(grep -c 'read([0-9]*{fd}' {f}) "
              f"$(grep -c 'poll(.*{fd}' {f}); "
              f"rm -f {f}; exit $rc")
    return ["bash", "-c", script, "bash"]


def polls(text: str) -> tuple[int, int]:
    """(reads, polls) of polls_wrapper's line; (-1, -1) without one."""
    m = re.search(r"^waits (\d+) (\d+)", text, re.M)
    return (int(m.group(1)), int(m.group(2))) if m else (-1, -1)


@pytest.mark.name("{id}/events")
@pytest.mark.parametrize("tool,side", [("send_lat", "srv"), ("read_lat", "cli"), ("atomic_lat", "cli")],
                         ids=["send_lat", "read_lat", "atomic_lat"])
def test_events(lab: Lab, pair, ours, dev: str, gid: int, note, tool: str, side: str) -> None:
    """-e in the latency tools: same results as polling, and the side that
    waits sleeps on the completion channel: under strace its read() calls on
    the channel are counted (at least 10 of 100: on rxe many READs complete
    before the CQ is armed), with no poll() before them (one system call per
    event, as 6.06); the same run without -e reads none. send_lat: the
    server waits for each ping; read/atomic_lat: the client waits."""
    share = lab.share()
    a = [ours(f"ib_{tool}"), "-d", dev, "-x", str(gid), "-F", "-n", "100"]
    runs = {}
    for mode, extra in (("e", ["-e"]), ("p", [])):
        tag = f"ev-{tool}-{mode}"
        s, c = [*a, *extra], [*a, *extra]
        if side == "srv":
            s = [*polls_wrapper(share, tag), *s]
        else:
            c = [*polls_wrapper(share, tag), *c]
        runs[mode] = pair(tag, s, c, timeout=120)
    e, p = runs["e"], runs["p"]
    ev = e.evidence() + p.evidence(10)
    assert e.ok and p.ok, f"exit {e.server.rc}/{e.client.rc} and {p.server.rc}/{p.client.rc}\n{ev}"
    waiting = e.server if side == "srv" else e.client
    assert f"Test with events. Using {dev}_comp" in waiting.text, ev
    assert lat_pos(e.client.text), f"-e client: no row with 0 < t_min <= t_typical <= t_max\n{ev}"
    assert results.shape(e.client.text) == results.shape(p.client.text), \
        f"-e and polling rows differ\n{ev}"
    ve = polls(waiting.text)
    vp = polls((p.server if side == "srv" else p.client).text)
    assert ve[0] >= 10 and ve[1] == 0 and vp == (0, 0), \
        f"(read(), poll()) calls on the channel: -e {ve} vs polling {vp}\n{ev}"
    note(f"{tool} -e: the waiting side's (read(), poll()) calls on the channel with -e: {ve}; "
         f"polling: {vp}")

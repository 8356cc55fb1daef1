# SPDX-License-Identifier: BSD-2-Clause
"""Placement and queue options of issue 18 (docs/upstream-behaviour.md §13), on a lab whose
guests have two NUMA nodes (one CPU each) and the NIC behind a PCI expander on node 1
(ci/lab up --numa): 6.29's default binds to the NIC's node, --numa_node / --pin_cores /
--disable_numa change it (6.06 lacks them: ours against ours). The server is looked at from
outside while it runs: /proc/PID/status Cpus_allowed_list and /proc/PID/numa_maps (the
process policy "prefer:N", the work buffer "bind:N" with its pages on N). -X (6.06 has it)
runs against Debian's 6.06 in both roles; out-of-range -X, --no_lock (rxe has no thread
domain), a node or CPU the guest lacks: refused with exit 1 before any traffic."""

import json
import re
import shlex
from pathlib import Path

import pytest

from benchlib import results
from benchlib.labctl import Lab

pytestmark = [pytest.mark.nodes(2), pytest.mark.numa]

# Runs the tool and, once its result row is out (the run is over and --wait_destroy
# keeps its resources and placement), takes the snapshot, ends the wait with SIGINT and
# prints the tool's output and the snapshot. $1: a file in the share. Polling for the
# row, not the header: on a loaded host the poll can lag a whole short run.
SNAP = r'''out=$1; shift
"$@" > "$out" 2>&1 & p=$!
i=0
while ! grep -q '^ *65536 ' "$out" && kill -0 $p 2>/dev/null && [ $i -lt 1200 ]; do
	sleep 0.2; i=$((i + 1))
done
snap=$(grep Cpus_allowed_list /proc/$p/status; cat /proc/$p/numa_maps)
kill -INT $p 2>/dev/null
wait $p; rc=$?
# 130: the SIGINT that ended --wait_destroy, after a complete run (the row)
[ $rc = 130 ] && grep -q '^ *65536 ' "$out" && rc=0
cat "$out"; echo "== snapshot"; echo "$snap"; exit $rc'''


def snapshot(text: str) -> tuple[str, str]:
    """(Cpus_allowed_list, numa_maps) from SNAP's output."""
    snap = text.split("== snapshot", 1)[1] if "== snapshot" in text else ""
    m = re.search(r"Cpus_allowed_list:\s*(\S+)", snap)
    return (m.group(1) if m else "?"), snap


def header_numa(text: str) -> str:
    m = re.search(r"^ NUMA node\s*: (.*?)\t\tCPU affinity\s*: (\S+)", text, re.M)
    return f"{m.group(1)} / {m.group(2)}" if m else "(no NUMA line)"


# Two pairs cover the four placements, each side looked at: name, then per side
# (options, expected CPUs, policy node or None, header "node / CPUs").
CELLS = [
    ("nic-default/pin_cores", ("", "1", 1, "1 (NIC) / 1"),
     ("--pin_cores 0", "0", 1, "1 (NIC) / 0")),
    ("numa_node/disable_numa", ("--numa_node 0", "0", 0, "0 (--numa_node) / 0"),
     ("--disable_numa", "0-1", None, "OFF (--disable_numa) / 0-1")),
]


def check_side(role: str, text: str, want: tuple, doc: dict, ev: str) -> str:
    _, cpus, node, line = want
    got_cpus, maps = snapshot(text)
    assert got_cpus == cpus, f"{role} runs on CPUs {got_cpus}, expected {cpus}\n{ev}"
    assert header_numa(text) == line, f"{role} header: {header_numa(text)}\n{ev}"
    if node is None:
        assert not re.search(r" (prefer|bind):", maps), f"{role}: a memory policy with --disable_numa\n{ev}"
    else:
        assert f" prefer:{node} " in maps, f"{role}: process policy is not prefer:{node}\n{ev}"
        # the work buffer: bound to the node and its pages there
        bound = [l for l in maps.splitlines() if f" bind:{node} " in l]
        assert bound and all(f"N{node}=" in l for l in bound), f"{role}: no buffer bound to {node}\n{ev}"
    ti = doc["test_info"]
    assert ti["NIC_NUMA_node"] == 1 and ti["NUMA_node"] == (-1 if node is None else node), \
        f"{role} --out_json: {ti}\n{ev}"
    return f"{role} CPUs {got_cpus}, '{header_numa(text)}'"


@pytest.mark.name("{id}")
@pytest.mark.parametrize("cell", CELLS, ids=[c[0] for c in CELLS])
def test_placement(lab: Lab, pair, ours, dev: str, gid: int, note, cell: tuple) -> None:
    name, srv, cli = cell
    share = lab.share()
    tag = name.replace("/", "-")
    argv = {}
    for role, side in (("server", srv), ("client", cli)):
        (share / f"place-{tag}-{role}.json").unlink(missing_ok=True)
        argv[role] = ["sh", "-c", SNAP, "sh", str(share / f"place-{tag}-{role}.out"),
                      ours("ib_send_bw"), "-d", dev, "-x", str(gid), "-F", "-n", "200",
                      *shlex.split(side[0]), "--wait_destroy", "60", "--out_json",
                      "--out_json_file", str(share / f"place-{tag}-{role}.json")]
    p = pair(tag, argv["server"], argv["client"])
    ev = p.evidence(30)
    assert p.server.rc == 0 and p.client.rc == 0, f"exit {p.server.rc}/{p.client.rc}\n{ev}"
    assert results.row_ok_or_calibration(p.server.text, False), f"server: no result row\n{ev}"
    said = [check_side(role, side.text, want, json.loads((share / f"place-{tag}-{role}.json").read_text()), ev)
            for role, side, want in (("server", p.server, srv), ("client", p.client, cli))]
    note(f"{name}: " + "; ".join(said))


# -X with events, against Debian's 6.06 in both roles (the NUMA guest has 2 vectors)
VECTOR = [("vector/ours-up", "ours", "up"), ("vector/up-ours", "up", "ours")]


@pytest.mark.name("{id}")
@pytest.mark.parametrize("cell", VECTOR, ids=[c[0] for c in VECTOR])
def test_vector(lab: Lab, pair, binary, dev: str, gid: int, note, cell: tuple) -> None:
    name, srv, cli = cell
    a = ["-d", dev, "-x", str(gid), "-F", "-n", "200", "-e", "-X", "1"]
    p = pair(name.replace("/", "-"), [binary(srv, "send_bw"), *a], [binary(cli, "send_bw"), *a])
    ev = p.evidence(25)
    assert p.server.rc == 0 and p.client.rc == 0, f"exit {p.server.rc}/{p.client.rc}\n{ev}"
    ours_text = p.server.text if srv == "ours" else p.client.text
    assert f"Using {dev}_comp1" in ours_text, f"ours: no 'Using {dev}_comp1'\n{ev}"
    assert results.row_ok_or_calibration(p.client.text, False), f"client: no result row\n{ev}"
    note(f"{name}: {results.rows(p.client.text)[-1]}")


# refused before any traffic: no server needed, exit 1 in well under the bound
REFUSED = [
    ("no_lock", "--no_lock", r"--no_lock: \S+ cannot allocate a thread domain \(ibv_alloc_td: "
     r"Operation not supported, errno 95\)"),
    ("vector-range", "-e -X 2", r"-X/--vector 2 is out of range: \S+ has 2 completion vectors"),
    ("numa_node-range", "--numa_node 2", r"--numa_node 2: this host has NUMA nodes 0\.\.1"),
    ("pin_cores-range", "--pin_cores 5", r"--pin_cores 5: not a CPU list of this host"),
]


@pytest.mark.name("refused")
def test_refused(lab: Lab, ours, dev: str, note) -> None:
    """All four in one exec (a guest exec costs seconds under TCG): each exits 1 with its reason."""
    script = "; ".join(f"{shlex.join([ours('ib_send_bw'), '-d', dev, *opts.split()])}; echo \"== {name} $?\""
                       for name, opts, _ in REFUSED)
    d = lab.exec(1, ["sh", "-c", "exec 2>&1; " + script], timeout=60)
    parts = re.split(r"^== (\S+) (\d+)$", d.out, flags=re.M)
    got = {parts[i + 1]: (int(parts[i + 2]), parts[i]) for i in range(0, len(parts) - 2, 3)}
    for name, _, why in REFUSED:
        assert name in got, f"{name}: did not run\n{d.evidence()}"
        rc, text = got[name]
        assert rc == 1, f"{name}: exit {rc}, expected 1\n{text}"
        assert re.search(why, text), f"{name}: no '{why}'\n{text}"
        assert "Waiting for client" not in text, f"{name}: refused only after listening\n{text}"
        note(f"{name}: {text.strip().splitlines()[-1].strip()}")

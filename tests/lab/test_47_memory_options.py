# SPDX-License-Identifier: BSD-2-Clause
"""Memory options of issue 18 (docs/option-parity.md): --use_hugepages,
--mr_per_qp and --mmap/--mmap-offset against Debian's 6.06 (it has them) in
both roles, --payload_file_path and --data_validation[_debug] ours against
ours (6.29 only), and the refusals rxe forces: --odp (no ODP caps on 6.1's
rxe: refused before any peer) and --use-null-mr (rxe has no null MR).

Checks, per cell: exits; result rows; huge pages: the tool's own
/proc/PID/maps holds an anon_hugepage mapping while it runs and
HugePages_Free is below HugePages_Total then, and without reserved pages
the error names nr_hugepages; --mr_per_qp: our two QPs print two RKeys
(one without); --mmap: the tool maps the file, and the bytes our client
sent from its file are in 6.06's server's file afterwards; data validation:
"passed" with the bytes checked, and a byte broken on purpose
(PT_TEST_BREAK=payload) fails the checking side with the offset named."""

import re

import pytest

from benchlib import results
from benchlib.labctl import Lab

pytestmark = pytest.mark.nodes(2)

HUGE_PAGES = 16         # 32 MiB of 2 MiB pages per guest: our buffers need one
MMAP_FILE = "/dev/shm/pt47.buf"
MMAP_OFF = 8192

# Runs "$@" and, while it lives, prints the first line of its maps matching
# $PT47_MAPS with the huge page counters read just before (so they count
# the mapping: with huge pages, until Free < Total is seen while it is
# mapped), then exits with the tool's status.
WATCH = r'''"$@" & pid=$!
seen=
while kill -0 $pid 2>/dev/null; do
  mi=$(awk '/^HugePages_(Total|Free):/ {print "MEMINFO", $1, $2}' /proc/meminfo)
  if line=$(grep -m1 -- "$PT47_MAPS" /proc/$pid/maps 2>/dev/null); then
    seen=1
    case $PT47_MAPS in
    anon_hugepage) set -- $mi; [ "$3" = "$6" ] && [ "$2" = HugePages_Total: ] && { sleep 0.05; continue; } ;;
    esac
    echo "MAPS $line"; echo "$mi"
    break
  fi
  sleep 0.05
done
wait $pid; rc=$?
[ -n "$seen" ] || echo "MAPS none"
exit $rc'''


def watched(maps: str, argv: list[str]) -> list[str]:
    return ["env", f"PT47_MAPS={maps}", "sh", "-c", WATCH, "sh", *argv]


def sh(lab: Lab, node: int, script: str) -> str:
    d = lab.exec(node, ["sh", "-c", script], timeout=30)
    assert d.rc == 0, f"node {node}: {script}: {d.out}{d.err}"
    return d.out


def base(dev: str, gid: int) -> list[str]:
    return ["-d", dev, "-x", str(gid), "-F"]


def meminfo(text: str) -> dict[str, int]:
    return {m[1]: int(m[2]) for m in re.finditer(r"^MEMINFO (\w+): (\d+)", text, re.M)}


# name, tool, server build, client build, extra arguments (both sides)
HUGE = [
    ("hugepages/write_bw/ours-up", "write_bw", "ours", "up", "-s 4096 -n 200"),
    ("hugepages/write_bw/up-ours", "write_bw", "up", "ours", "-s 4096 -n 200"),
]


@pytest.mark.name("{id}")
@pytest.mark.parametrize("cell", HUGE, ids=[c[0] for c in HUGE])
def test_hugepages(lab: Lab, pair, binary, dev: str, gid: int, note, cell: tuple) -> None:
    name, tool, srv, cli, args = cell
    for node in (1, 2):
        sh(lab, node, f"echo {HUGE_PAGES} > /proc/sys/vm/nr_hugepages")
    a = [*base(dev, gid), "--use_hugepages", *args.split()]
    # ours is watched (and waits 4 s after the run: under load a watch round takes seconds)
    s = [binary(srv, tool), *a] + (["--wait_destroy", "4"] if srv == "ours" else [])
    c = [binary(cli, tool), *a] + (["--wait_destroy", "4"] if cli == "ours" else [])
    s, c = (watched("anon_hugepage", s), c) if srv == "ours" else (s, watched("anon_hugepage", c))
    p = pair(name.replace("/", "-"), s, c)
    ev = p.evidence(25)
    assert p.server.rc == 0 and p.client.rc == 0, f"exit {p.server.rc}/{p.client.rc}\n{ev}"
    text = p.server.text if srv == "ours" else p.client.text
    assert "MAPS none" not in text and "anon_hugepage" in text, f"ours: no huge page mapping\n{ev}"
    mi = meminfo(text)
    assert mi.get("HugePages_Total") == HUGE_PAGES and mi.get("HugePages_Free", HUGE_PAGES) < HUGE_PAGES, \
        f"ours: huge pages not taken: {mi}\n{ev}"
    assert results.row_ok_or_calibration(p.client.text, False), f"client: no result row with values > 0\n{ev}"
    note(f"{name}: {mi}, {results.rows(p.client.text)[-1]}")


@pytest.mark.name("hugepages/none-reserved")
def test_hugepages_none(lab: Lab, pair, ours, dev: str, gid: int) -> None:
    sh(lab, 1, "echo 0 > /proc/sys/vm/nr_hugepages")
    a = [*base(dev, gid), "-s", "4096", "-n", "200"]
    p = pair("hugepages-none", [ours("ib_write_bw"), *a, "--use_hugepages"],
             [ours("ib_write_bw"), *a])
    ev = p.evidence(25)
    assert p.server.rc not in (0, None), f"server with no huge pages exited {p.server.rc}\n{ev}"
    assert "--use_hugepages" in p.server.text and "nr_hugepages" in p.server.text, \
        f"server: the cause is not named\n{ev}"


MR_PER_QP = [
    ("mr_per_qp/write_bw/ours-up", "write_bw", "ours", "up", "-s 4096 -n 200 -q 2"),
    ("mr_per_qp/read_bw/up-ours", "read_bw", "up", "ours", "-s 4096 -n 200 -q 2"),
]


def rkeys(text: str) -> set[str]:
    return set(re.findall(r"local address:.*?RKey (0x[0-9a-f]+)", text))


@pytest.mark.name("{id}")
@pytest.mark.parametrize("cell", MR_PER_QP, ids=[c[0] for c in MR_PER_QP])
def test_mr_per_qp(lab: Lab, pair, binary, dev: str, gid: int, note, cell: tuple) -> None:
    name, tool, srv, cli, args = cell
    a = [*base(dev, gid), "--mr_per_qp", *args.split()]
    p = pair(name.replace("/", "-"), [binary(srv, tool), *a], [binary(cli, tool), *a])
    ev = p.evidence(25)
    assert p.server.rc == 0 and p.client.rc == 0, f"exit {p.server.rc}/{p.client.rc}\n{ev}"
    assert results.row_ok_or_calibration(p.client.text, False), f"client: no result row with values > 0\n{ev}"
    for role, build, text in (("server", srv, p.server.text), ("client", cli, p.client.text)):
        if build == "ours":
            assert len(rkeys(text)) == 2, f"{role}: not one RKey per QP: {rkeys(text)}\n{ev}"
    note(f"{name}: {results.rows(p.client.text)[-1]}")


@pytest.mark.name("mr_per_qp/off-one-rkey")
def test_mr_shared(lab: Lab, pair, ours, dev: str, gid: int) -> None:
    a = [*base(dev, gid), "-s", "4096", "-n", "200", "-q", "2"]
    p = pair("mr-shared", [ours("ib_write_bw"), *a], [ours("ib_write_bw"), *a])
    ev = p.evidence(25)
    assert p.server.rc == 0 and p.client.rc == 0, f"exit {p.server.rc}/{p.client.rc}\n{ev}"
    assert len(rkeys(p.client.text)) == 1, f"client: {rkeys(p.client.text)}\n{ev}"


MMAP = [
    ("mmap/write_bw/ours-up", "ours", "up"),
    ("mmap/write_bw/up-ours", "up", "ours"),
]


@pytest.mark.name("{id}")
@pytest.mark.parametrize("cell", MMAP, ids=[c[0] for c in MMAP])
def test_mmap(lab: Lab, pair, binary, dev: str, gid: int, note, cell: tuple) -> None:
    name, srv, cli = cell
    # the server's file zeros, the client's 0xab: what the server's file
    # holds afterwards came from the client's file
    sh(lab, 1, f"head -c 1048576 /dev/zero > {MMAP_FILE}")
    sh(lab, 2, f"head -c 1048576 /dev/zero | tr '\\000' '\\253' > {MMAP_FILE}")
    a = [*base(dev, gid), "-s", "4096", "-n", "200", "--mmap", MMAP_FILE, "--mmap-offset",
         str(MMAP_OFF)]
    s, c = [binary(srv, "write_bw"), *a], [binary(cli, "write_bw"), *a]
    if srv == "ours":
        s = watched(MMAP_FILE, s + ["--wait_destroy", "1"])
    if cli == "ours":
        c = watched(MMAP_FILE, c + ["--wait_destroy", "1"])
    p = pair(name.replace("/", "-"), s, c)
    ev = p.evidence(25)
    assert p.server.rc == 0 and p.client.rc == 0, f"exit {p.server.rc}/{p.client.rc}\n{ev}"
    for role, build, text in (("server", srv, p.server.text), ("client", cli, p.client.text)):
        if build == "ours":
            assert f"MAPS " in text and MMAP_FILE in text.split("MAPS ", 1)[1].splitlines()[0], \
                f"{role}: {MMAP_FILE} not mapped\n{ev}"
    got = int(sh(lab, 1, f"tr -cd '\\253' < {MMAP_FILE} | wc -c").strip())
    if cli == "ours":
        # 6.06's server maps its file too: our 4 KiB writes are in it
        assert got >= 4096, f"server's file holds {got} bytes of the client's 0xab\n{ev}"
    note(f"{name}: server file has {got} bytes 0xab, {results.rows(p.client.text)[-1]}")


DV = [
    # name, tool, extra, break (side), expect server rc, client rc ok
    ("dv/write_bw-q2-s100/ours-ours", "write_bw", "-q 2 -s 100 -n 200", None),
    ("dv/write_bw-b/ours-ours", "write_bw", "-b -s 4096 -n 200", None),
    ("dv/read_bw/ours-ours", "read_bw", "-s 4096 -n 200", None),
    ("dv/write_bw-broken/ours-ours", "write_bw", "-s 4096 -n 200", "client"),
    ("dv/read_bw-broken/ours-ours", "read_bw", "-s 4096 -n 200", "server"),
]


@pytest.mark.name("{id}")
@pytest.mark.parametrize("cell", DV, ids=[c[0] for c in DV])
def test_data_validation(lab: Lab, pair, ours, dev: str, gid: int, note, cell: tuple) -> None:
    name, tool, args, broken = cell
    a = [*base(dev, gid), "--data_validation_debug", *args.split()]
    s, c = [ours(f"ib_{tool}"), *a], [ours(f"ib_{tool}"), *a]
    if broken == "client":
        c = ["env", "PT_TEST_BREAK=payload", *c]
    if broken == "server":
        s = ["env", "PT_TEST_BREAK=payload", *s]
    p = pair(name.replace("/", "-"), s, c)
    ev = p.evidence(25)
    # the checking side: WRITE the server (both with -b), READ the client
    checkers = {"write_bw": ["server"] + (["client"] if "-b" in args.split() else []),
                "read_bw": ["client"]}[tool]
    texts = {"server": (p.server.rc, p.server.text), "client": (p.client.rc, p.client.text)}
    for role in checkers:
        rc, text = texts[role]
        if broken:
            assert rc not in (0, None), f"{role}: a broken byte passed (exit {rc})\n{ev}"
            assert "Data validation failed: 1 of" in text and "offset 0: expected" in text, \
                f"{role}: the mismatch is not named\n{ev}"
        else:
            assert rc == 0 and "Data validation passed" in text, f"{role}: exit {rc}\n{ev}"
    if not broken:
        assert p.server.rc == 0 and p.client.rc == 0, f"exit {p.server.rc}/{p.client.rc}\n{ev}"
        assert results.row_ok_or_calibration(p.client.text, False), f"client: no result row\n{ev}"
    note(f"{name}: " + "; ".join(l.strip() for r in checkers for l in texts[r][1].splitlines()
                                 if "Data validation" in l and "offset" not in l))


@pytest.mark.name("dv/payload_file/ours-ours")
def test_payload_file(lab: Lab, pair, ours, dev: str, gid: int, note) -> None:
    path = lab.share() / "pt47-payload.txt"
    path.write_text("0xdeadbeef, 0x01020304,\n0xa5a5a5a5\n")
    # the server checks what arrived against the file's pattern: a client
    # sending anything else fails it
    a = [*base(dev, gid), "-n", "200", "-s", "1000", "--data_validation",
         "--payload_file_path", str(path)]
    p = pair("payload-file", [ours("ib_write_bw"), *a], [ours("ib_write_bw"), *a])
    ev = p.evidence(25)
    assert p.server.rc == 0 and p.client.rc == 0, f"exit {p.server.rc}/{p.client.rc}\n{ev}"
    assert "Data validation passed" in p.server.text, f"server: not checked\n{ev}"
    # and a client without the file sends data validation's own pattern
    b = [x for x in a if x not in ("--payload_file_path", str(path))]
    q = pair("payload-file-missing", [ours("ib_write_bw"), *a], [ours("ib_write_bw"), *b])
    ev = q.evidence(25)
    assert q.server.rc not in (0, None) and "Data validation failed" in q.server.text, \
        f"server: a payload other than the file's passed\n{ev}"
    note("payload_file: " + next(l.strip() for l in p.server.text.splitlines()
                                 if "Data validation" in l))


@pytest.mark.name("dv/mismatch/ours-ours")
def test_dv_mismatch(lab: Lab, pair, ours, dev: str, gid: int) -> None:
    # only the server checks: the client's unfilled buffer fails it
    a = [*base(dev, gid), "-s", "4096", "-n", "200"]
    p = pair("dv-one-side", [ours("ib_write_bw"), *a, "--data_validation"],
             [ours("ib_write_bw"), *a])
    ev = p.evidence(25)
    assert p.server.rc not in (0, None) and "Data validation failed" in p.server.text, \
        f"server: exit {p.server.rc}\n{ev}"
    # announcing 6.29 both sides negotiate (N): the flag differs, both refuse
    v = ["--announce_version=6.29"]
    q = pair("dv-negotiated", [ours("ib_write_bw"), *a, *v, "--data_validation"],
             [ours("ib_write_bw"), *a, *v])
    ev = q.evidence(25)
    assert q.server.rc not in (0, None) and q.client.rc not in (0, None), \
        f"exit {q.server.rc}/{q.client.rc}\n{ev}"
    assert "data_validation mismatch" in q.server.text + q.client.text, f"not named\n{ev}"


@pytest.mark.name("refused/odp")
def test_odp_refused(lab: Lab, ours, dev: str) -> None:
    # refused at device open: no peer is needed, nothing is sent
    d = lab.exec(1, [ours("ib_write_bw"), "-d", dev, "--odp"], timeout=30)
    text = d.out + d.err
    assert d.rc not in (0, 124), f"--odp on rxe exited {d.rc}\n{text}"
    assert "--odp" in text and "odp_caps" in text and "IBV_ODP_SUPPORT" in text, text


@pytest.mark.name("refused/use-null-mr")
def test_null_mr(lab: Lab, pair, ours, dev: str, gid: int) -> None:
    a = [*base(dev, gid), "-s", "4096", "-n", "200", "--use-null-mr"]
    p = pair("null-mr", [ours("ib_write_bw"), *a], [ours("ib_write_bw"), *a])
    ev = p.evidence(25)
    assert p.server.rc not in (0, None) and p.client.rc not in (0, None), \
        f"exit {p.server.rc}/{p.client.rc}\n{ev}"
    assert "ibv_alloc_null_mr" in p.server.text and "--use-null-mr" in p.server.text, ev

#!/usr/bin/python3 -B
# SPDX-License-Identifier: BSD-2-Clause
"""The sweep matrix: file parsing, value checks, expansion (with the
combinations the tools refuse skipped and counted) and the tool arguments."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchtap import case, eq, raises, run  # noqa: E402
from benchlib import matrix  # noqa: E402
from benchlib.matrix import MatrixError  # noqa: E402


def mx(text):
    return matrix.build(matrix.parse_text(text, "m.ini"))


@case
def file_format():
    """comments, [sections], ':' or '=', trailing comments, quoted items with commas"""
    m = mx("""# a sweep
[sweep]
tool = ib_send_bw, ib_write_bw   # two tools
size: 64, 4K, 1M, all
placement = nic-local, "cpus:0-3,8"
extra = -F --report_gbits
""")
    eq(m.lists["tool"], ["ib_send_bw", "ib_write_bw"])
    eq(m.lists["size"], [64, 4096, 1048576, "all"])
    eq(m.lists["placement"], ["nic-local", "cpus:0-3,8"])
    eq(m.settings["extra"], "-F --report_gbits")
    eq(m.settings["port"], 18515)  # default


@case
def bad_files():
    """each bad line is refused with its file, line and key"""
    for text, want in (
            ("bogus = 1", "m.ini:1: unknown key 'bogus'"),
            ("tool = ib_send_bw\ntool = ib_write_bw", "m.ini:2: 'tool' given twice"),
            ("size =", "m.ini:1: 'size' has no value"),
            ("just words", "m.ini:1: expected 'key = value'"),
            ("size = 64, 12Q", "m.ini:1: size: '12Q' is not a size"),
            ("size = 0", "outside 1..2147483647"),
            ("tool = ib_foo_bw", "unknown tool 'ib_foo_bw'"),
            ("conn = RD", "unknown connection type 'RD'"),
            ("post_api = ancient", "post_api is new (ibv_wr_*) or old"),
            ("placement = numa0", "unknown placement 'numa0'"),
            ("placement = cpus:3-1", "runs backwards"),
            ("iters = 4", "4 is outside 5..100000000"),
            ("qps = 1, 1", "an item is listed twice"),
            ("qps = 1,,2", "empty item"),
            ("extra = -F 'open", "extra"),
            ("timeout = 0", "outside 1..86400"),
            ("port = 80", "outside 1024..65000"),
            ('placement = "cpus:1', "cannot split")):
        raises(MatrixError, mx, text, match=want)


@case
def defaults_one_run():
    """an empty matrix is one run: ib_send_bw RC, one QP, new post API, no placement"""
    runs, skipped = mx("").expand()
    eq(skipped, [])
    eq(runs, [{"tool": "ib_send_bw", "conn": "RC", "qps": 1, "post_api": "new",
               "placement": "none", "size": None, "iters": None, "duration": None, "repeat": 1}])


@case
def expansion_counts_and_skips():
    """2 tools x 2 conns x 2 QP counts x 2 sizes: write_bw UD is skipped, with the reason"""
    runs, skipped = mx("tool = ib_send_bw, ib_write_bw\nconn = RC, UD\nqps = 1, 4\n"
                       "size = 64, 1024").expand()
    eq(len(runs), 8 + 4)
    eq(len(skipped), 4)
    assert all("does not run UD" in why for _, why in skipped), skipped
    eq({(r["tool"], r["conn"]) for r in runs},
       {("ib_send_bw", "RC"), ("ib_send_bw", "UD"), ("ib_write_bw", "RC")})
    # the size varies fastest, the tool slowest
    eq([r["size"] for r in runs[:4]], [64, 1024, 64, 1024])
    eq([r["tool"] for r in runs], ["ib_send_bw"] * 8 + ["ib_write_bw"] * 4)


@case
def refusal_rules():
    """lat tools run one QP, atomics have no -a, -a is not timed, read runs RC only"""
    cases = (("tool = ib_send_lat\nqps = 1, 2", 1, "runs one QP"),
             ("tool = ib_atomic_bw\nsize = 8, all", 1, "has no -a"),
             ("size = all\nduration = 5\niters = 100", 1, "not with -D"),
             ("tool = ib_read_bw\nconn = RC, UC", 1, "does not run UC"))
    for text, n_skipped, why in cases:
        runs, skipped = mx(text).expand()
        eq(len(skipped), n_skipped, text)
        assert why in skipped[0][1], (text, skipped)
        eq(len(runs), 1, text)


@case
def iters_and_duration():
    """iters and duration lists are one axis: their union"""
    runs, _ = mx("iters = 100, 200\nduration = 5").expand()
    eq([(r["iters"], r["duration"]) for r in runs], [(100, None), (200, None), (None, 5)])


@case
def repeats():
    """repeat = 3 runs every combination three times, numbered"""
    runs, _ = mx("size = 64, 128\nrepeat = 3").expand()
    eq([(r["size"], r["repeat"]) for r in runs],
       [(64, 1), (64, 2), (64, 3), (128, 1), (128, 2), (128, 3)])


@case
def client_and_server_args():
    """tool arguments: device, port, GID, size, QPs, old post API, iterations, JSON, address last"""
    m = mx("device = mlx5_0\npeer_device = mlx5_1\nib_port = 2\ngid_index = 3\n"
           "extra = -F --report_gbits")
    r = {"tool": "ib_send_bw", "conn": "UD", "qps": 4, "post_api": "old", "placement": "none",
         "size": 4096, "iters": 500, "duration": None}
    c = matrix.tool_args(r, m.settings, "client", "/x/c.json", 19000, "10.0.0.1")
    eq(c, ["-d", "mlx5_0", "-i", "2", "-x", "3", "-c", "UD", "-s", "4096", "-q", "4",
           "--use_old_post_send", "-n", "500", "-p", "19000", "-F", "--report_gbits",
           "--out_json", "--out_json_file=/x/c.json", "10.0.0.1"])
    s = matrix.tool_args(r, m.settings, "server", "/x/s.json", 19000, "10.0.0.1")
    eq(s[:2], ["-d", "mlx5_1"])
    eq(s[-1], "--out_json_file=/x/s.json")


@case
def minimal_args():
    """defaults add nothing: no -d, -i, -x, -s or -q; -a and -D when asked"""
    m = mx("")
    r = {"tool": "ib_send_bw", "conn": "RC", "qps": 1, "post_api": "new", "placement": "none",
         "size": "all", "iters": None, "duration": 7}
    eq(matrix.tool_args(r, m.settings, "server", "j", 18515, "h"),
       ["-c", "RC", "-a", "-D", "7", "-p", "18515", "--out_json", "--out_json_file=j"])


@case
def split_items():
    """list items: commas separate, quotes keep a comma, blanks are trimmed"""
    eq(matrix.split_items('a, b ,"c,d"'), ["a", "b", "c,d"])
    raises(ValueError, matrix.split_items, "a,,b")
    raises(ValueError, matrix.split_items, " ")


@case
def labels():
    """a run's label names every axis"""
    eq(matrix.label({"tool": "ib_send_bw", "conn": "RC", "qps": 2, "post_api": "old",
                     "placement": "nic-local", "size": 64, "iters": 100, "duration": None}),
       "ib_send_bw RC q2 old nic-local n100 size=64")


if __name__ == "__main__":
    sys.exit(run())

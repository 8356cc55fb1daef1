# SPDX-License-Identifier: BSD-2-Clause
"""The sweep matrix: parsing the 'key = item, item' file, checking every
value, and expanding axes into runs (skipping combinations the tools refuse)."""

from __future__ import annotations

import csv
import itertools
import re
import shlex
from typing import Any, Callable, Optional, Union

from . import placement

# Axes, in expansion order (the last varies fastest).
AXES = ("tool", "conn", "qps", "post_api", "placement", "length", "size")

TOOL_RE = re.compile(r"ib_(send|write|read|atomic)_(bw|lat)")
CONNS = ("RC", "UC", "UD", "XRC", "DC", "SRD")

# Settings: one value each. name -> (parser, default)
Value = Any                       # an item or setting as parsed: int, str or None
Parser = Callable[[str], Value]
Run = dict[str, Any]              # one run: axis values, iters, duration, repeat
Raw = dict[str, tuple[str, str]]  # key -> (text, where it was given)


def _int_range(lo: int, hi: int) -> Callable[[str], int]:
    def parse(v: str) -> int:
        if not re.fullmatch(r"\d+", v):
            raise ValueError(f"'{v}' is not a whole number")
        n = int(v)
        if not lo <= n <= hi:
            raise ValueError(f"{n} is outside {lo}..{hi}")
        return n
    return parse


def _size(v: str) -> Union[int, str]:
    if v == "all":
        return "all"
    m = re.fullmatch(r"(\d+)([KM]?)", v)
    if not m:
        raise ValueError(f"'{v}' is not a size (N, NK, NM or all)")
    n = int(m.group(1)) * {"": 1, "K": 1024, "M": 1048576}[m.group(2)]
    if not 1 <= n <= 2147483647:
        raise ValueError(f"size {v} is outside 1..2147483647")
    return n


def _tool(v: str) -> str:
    if not TOOL_RE.fullmatch(v):
        raise ValueError(f"unknown tool '{v}' (ib_send_bw, ib_write_lat, ...)")
    return v


def _conn(v: str) -> str:
    if v.upper() not in CONNS:
        raise ValueError(f"unknown connection type '{v}' ({', '.join(CONNS)})")
    return v.upper()


def _post_api(v: str) -> str:
    if v not in ("new", "old"):
        raise ValueError(f"post_api is new (ibv_wr_*) or old (ibv_post_send), not '{v}'")
    return v


def _placement(v: str) -> str:
    return placement.check_spec(v)


def _text(v: str) -> str:
    return v


def _extra(v: str) -> str:
    shlex.split(v)  # refuses unbalanced quotes
    return v


LISTS: dict[str, Parser] = {
    "tool": _tool, "size": _size, "qps": _int_range(1, 16384), "conn": _conn,
    "post_api": _post_api, "placement": _placement,
    "iters": _int_range(5, 100000000), "duration": _int_range(1, 86400),
}
SETTINGS: dict[str, tuple[Parser, Value]] = {
    "device": (_text, None), "peer_device": (_text, None),
    "ib_port": (_int_range(1, 255), 1), "gid_index": (_int_range(0, 255), None),
    "port": (_int_range(1024, 65000), 18515), "extra": (_extra, ""),
    "timeout": (_int_range(1, 86400), 120), "repeat": (_int_range(1, 1000), 1),
    "bindir": (_text, None), "peer_bindir": (_text, None),
    "server_addr": (_text, None), "hosts": (_text, None), "remote_dir": (_text, None),
}
DEFAULTS: dict[str, list[Value]] = {"tool": ["ib_send_bw"], "size": [None], "qps": [1], "conn": ["RC"],
            "post_api": ["new"], "placement": ["none"]}


class MatrixError(Exception):
    """A bad matrix file or option; the text names the key (and line)."""


def split_items(value: str) -> list[str]:
    """'a, b, "c,d"' -> ['a', 'b', 'c,d'] (quote an item holding a comma)."""
    try:
        row = next(csv.reader([value], skipinitialspace=True, strict=True))
    except (csv.Error, StopIteration) as e:
        raise ValueError(f"cannot split '{value}' ({e})") from None
    items = [i.strip() for i in row]
    if not items or any(not i for i in items):
        raise ValueError(f"empty item in '{value}'")
    return items


def parse_text(text: str, origin: str = "matrix") -> Raw:
    """The file's 'key = value' lines -> {key: raw value}. '#' starts a comment
    line; '[section]' lines are allowed and ignored."""
    raw: Raw = {}
    for num, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or s.startswith("#") or re.fullmatch(r"\[[\w.-]+\]", s):
            continue
        m = re.fullmatch(r"([A-Za-z_]+)\s*[=:]\s*(.*?)\s*(?:\s#.*)?", s)
        if not m:
            raise MatrixError(f"{origin}:{num}: expected 'key = value', got '{s}'")
        key, value = m.group(1).lower(), m.group(2)
        if key not in LISTS and key not in SETTINGS:
            raise MatrixError(f"{origin}:{num}: unknown key '{key}' "
                              f"(known: {', '.join(sorted(list(LISTS) + list(SETTINGS)))})")
        if key in raw:
            raise MatrixError(f"{origin}:{num}: '{key}' given twice")
        if value == "":
            raise MatrixError(f"{origin}:{num}: '{key}' has no value")
        raw[key] = (value, f"{origin}:{num}")
    return raw


def build(raw: Raw) -> "Matrix":
    """{key: (value, where)} -> Matrix, checking every item."""
    lists: dict[str, list[Value]] = {}
    settings: dict[str, Value] = {}
    for key, (value, where) in raw.items():
        try:
            if key in LISTS:
                lists[key] = [LISTS[key](i) for i in split_items(value)]
                if len(set(map(str, lists[key]))) != len(lists[key]):
                    raise ValueError("an item is listed twice")
            else:
                settings[key] = SETTINGS[key][0](value.strip())
        except ValueError as e:
            raise MatrixError(f"{where}: {key}: {e}") from None
    return Matrix(lists, settings)


class Matrix:
    def __init__(self, lists: dict[str, list[Value]], settings: dict[str, Value]) -> None:
        self.lists: dict[str, Optional[list[Value]]] = {k: lists.get(k, DEFAULTS.get(k)) for k in LISTS}
        self.settings: dict[str, Value] = {k: settings.get(k, d) for k, (_, d) in SETTINGS.items()}
        self.given = set(lists) | set(settings)

    def axis(self, name: str) -> list[Value]:
        if name == "length":
            out: list[Value] = [("iters", n) for n in self.lists["iters"] or []]
            out += [("duration", d) for d in self.lists["duration"] or []]
            return out or [(None, None)]
        return self.lists[name] or []

    def expand(self) -> tuple[list[Run], list[tuple[Run, str]]]:
        """(runs, skipped): runs are dicts of axis values plus 'repeat';
        skipped are (combination, reason) the tools would refuse."""
        runs: list[Run] = []
        skipped: list[tuple[Run, str]] = []
        for combo in itertools.product(*(self.axis(a) for a in AXES)):
            r = dict(zip(AXES, combo))
            r["iters"] = r["length"][1] if r["length"][0] == "iters" else None
            r["duration"] = r["length"][1] if r["length"][0] == "duration" else None
            del r["length"]
            why = refusal(r)
            if why:
                skipped.append((r, why))
                continue
            for rep in range(self.settings["repeat"]):
                runs.append(dict(r, repeat=rep + 1))
        return runs, skipped


def refusal(r: Run) -> Optional[str]:
    """Why the tools would refuse this combination (docs/upstream-behaviour.md §2), or None."""
    m = TOOL_RE.fullmatch(r["tool"])
    if m is None:
        return f"unknown tool '{r['tool']}'"
    verb, kind = m.groups()
    if r["conn"] == "UD" and verb != "send":
        return f"{r['tool']} does not run UD (send tools only)"
    if r["conn"] == "UC" and verb in ("read", "atomic"):
        return f"{r['tool']} does not run UC"
    if r["qps"] > 1 and kind == "lat":
        return f"{r['tool']} runs one QP (-q is for BW tools)"
    if r["size"] == "all" and verb == "atomic":
        return f"{r['tool']} has no -a"
    if r["duration"] is not None and r["size"] == "all":
        return "-a sweeps sizes by iterations, not with -D"
    return None


def label(r: Run) -> str:
    """Short text of a run's configuration, for progress lines."""
    parts = [r["tool"], r["conn"], f"q{r['qps']}", r["post_api"], r["placement"]]
    if r.get("iters") is not None:
        parts.append(f"n{r['iters']}")
    if r.get("duration") is not None:
        parts.append(f"D{r['duration']}")
    parts.append("size=" + ("default" if r["size"] is None else str(r["size"])))
    return " ".join(parts)


def tool_args(r: Run, s: dict[str, Value], side: str, json_path: str, port: int,
              server_addr: str) -> list[str]:
    """The tool's arguments (without numactl or the binary) for one end."""
    dev = s["device"] if side == "client" else (s["peer_device"] or s["device"])
    a: list[str] = []
    if dev:
        a += ["-d", dev]
    if s["ib_port"] != 1:
        a += ["-i", str(s["ib_port"])]
    if s["gid_index"] is not None:
        a += ["-x", str(s["gid_index"])]
    a += ["-c", r["conn"]]
    if r["size"] == "all":
        a.append("-a")
    elif r["size"] is not None:
        a += ["-s", str(r["size"])]
    if r["qps"] != 1:
        a += ["-q", str(r["qps"])]
    if r["post_api"] == "old":
        a.append("--use_old_post_send")
    if r.get("iters") is not None:
        a += ["-n", str(r["iters"])]
    if r.get("duration") is not None:
        a += ["-D", str(r["duration"])]
    a += ["-p", str(port)]
    a += shlex.split(s["extra"])
    a += ["--out_json", f"--out_json_file={json_path}"]
    if side == "client":
        a.append(server_addr)
    return a

# SPDX-License-Identifier: BSD-2-Clause
"""What the tools leave behind, read back: the printed result table, the
--out_json document and a --trace file (CSV or JSON Lines). Pure functions
of text; shared by the lab tests and bench/."""

from __future__ import annotations

import csv
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Union

# A result row as both builds print it: bytes and iterations, then three
# figures or more (BW peak, BW average, message rate; or t_min, t_max,
# t_typical, ... for latency tools). A figure may be "-nan" or "inf" when a
# clock misbehaves: the row counts, the figure reads as NaN.
_NUM = r"[-+]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?|nan|inf)"
ROW = re.compile(rf"^\s*(\d+)\s+(\d+)((?:\s+{_NUM}){{3,}})\s*$", re.I)

# 6.06's CPU-MHz calibration failing in a VM: it then prints BW 0.00, and
# may print the message on the row's own line, right after the last figure
# ("0.000000Correlation coefficient r^2: 0.69 < 0.9"), where it is cut off.
CALIBRATION = re.compile(r"Correlation coefficient r\^2: .* < 0\.9")
_GLUED = re.compile(r"(?<=\d)(?:Correlation coefficient|Conflicting CPU frequency).*$")


@dataclass(frozen=True)
class Row:
    size: int
    iters: int
    figures: tuple[float, ...]

    def fig(self, i: int) -> float:
        """The i-th figure after the iterations (0-based); NaN if absent."""
        return self.figures[i] if i < len(self.figures) else math.nan

    # bandwidth tools
    @property
    def bw_peak(self) -> float:
        return self.fig(0)

    @property
    def bw_avg(self) -> float:
        return self.fig(1)

    @property
    def msg_rate(self) -> float:
        return self.fig(2)

    # latency tools: t_min, t_max, t_typical
    @property
    def t_min(self) -> float:
        return self.fig(0)

    @property
    def t_max(self) -> float:
        return self.fig(1)

    @property
    def t_typical(self) -> float:
        return self.fig(2)

    def __str__(self) -> str:
        return f"{self.size} {self.iters} " + " ".join(f"{f:g}" for f in self.figures[:3])


def _float(s: str) -> float:
    try:
        return float(s)
    except ValueError:
        return math.nan


def rows(text: str) -> list[Row]:
    """Every result row of a tool's output, in order."""
    out = []
    for line in text.splitlines():
        m = ROW.match(_GLUED.sub("", line))
        if m:
            out.append(Row(int(m.group(1)), int(m.group(2)),
                           tuple(_float(f) for f in m.group(3).split())))
    return out


def shape(text: str) -> list[tuple[int, int]]:
    """(size, iterations) of every result row."""
    return [(r.size, r.iters) for r in rows(text)]


def positive(x: float) -> bool:
    return not math.isnan(x) and x > 0


def row_ok(text: str, lat: bool) -> bool:
    """A plausible result row: latency t_min > 0 and t_min <= t_typical <=
    t_max; bandwidth an average BW > 0."""
    if lat:
        return any(r.t_min > 0 and r.t_min <= r.t_typical <= r.t_max for r in rows(text))
    return any(positive(r.bw_avg) for r in rows(text))


def row_ok_or_calibration(text: str, lat: bool) -> bool:
    """row_ok, or Debian's 6.06 printing its rows as 0 after its CPU-MHz
    calibration failed in a VM ("Correlation coefficient r^2: ... < 0.9",
    its bug; ours never prints that): for output that may be 6.06's."""
    return row_ok(text, lat) or bool(CALIBRATION.search(text) and rows(text))


def read_json(path: Union[str, Path]) -> dict[str, Any]:
    """An --out_json document (a JSON object); ValueError if it is not one."""
    doc = json.loads(Path(path).read_text(errors="replace"))
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: not a JSON object")
    return doc


# --- --trace files ----------------------------------------------------------------------

@dataclass
class TraceRun:
    """One run of a trace file: its metadata and its WR rows, all values as
    strings ("" for none), whichever format the file is in."""
    meta: dict[str, str]
    rows: list[dict[str, str]]


def _s(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return str(int(v))
    return str(v)


def read_trace(path: Union[str, Path]) -> list[TraceRun]:
    """The runs of a --trace file: CSV ("# wrtrace 1", a header, then per run
    a "# key=value ..." line and rows) or JSON Lines (.jsonl: a type
    "wrtrace" line, then "run" and "wr" objects)."""
    text = Path(path).read_text(errors="replace")
    runs: list[TraceRun] = []
    if str(path).endswith(".jsonl"):
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            obj = json.loads(line)
            kind = obj.get("type")
            if kind == "run":
                runs.append(TraceRun({k: _s(v) for k, v in obj.items() if k != "type"}, []))
            elif kind == "wr":
                if not runs:
                    raise ValueError(f"{path}:{n}: a WR before any run")
                runs[-1].rows.append({k: _s(v) for k, v in obj.items() if k != "type"})
        return runs
    header: Optional[list[str]] = None
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("# wrtrace") or not line.strip():
            continue
        if line.startswith("#"):
            meta = dict(kv.split("=", 1) for kv in line[1:].split() if "=" in kv)
            runs.append(TraceRun(meta, []))
        elif header is None:
            header = next(csv.reader([line]))
        else:
            if not runs:
                raise ValueError(f"{path}:{n}: a row before any run")
            runs[-1].rows.append(dict(zip(header, next(csv.reader([line])))))
    return runs


def expect_row(text: str, size: int, iters: int) -> tuple[Optional[str], Optional[str]]:
    """(problem, note): exactly the check of a run that printed a row of size
    and iters with an average BW > 0. Debian's 6.06 prints BW 0.00 when its
    CPU-MHz calibration fails in a VM (the upstream bug ours fixes): such a
    row is accepted with a note naming the calibration message."""
    rs = rows(text)
    if not rs:
        return "no result row", None
    if any(r.size == size and r.iters == iters and positive(r.bw_avg) for r in rs):
        return None, None
    m = CALIBRATION.search(text)
    if m and any(r.size == size and r.iters == iters for r in rs):
        return None, f"6.06 printed 0.00: {m.group(0)} (its MHz calibration)"
    return (f"no row with size {size}, {iters} iterations and BW > 0 "
            f"(rows: {'; '.join(str(r) for r in rs)})"), None

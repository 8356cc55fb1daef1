# SPDX-License-Identifier: BSD-2-Clause
"""Invariants of a --trace file (benchlib.results.read_trace), as the lab
tests check them on what our tools and the preload library record. Each
function returns the problems found (empty: none)."""

from __future__ import annotations

from typing import Mapping

from .results import TraceRun


def _int(s: str, base: int = 10) -> int:
    return int(s, base) if s != "" else 0


def check_tool_trace(runs: list[TraceRun], want: Mapping[str, int]) -> list[str]:
    """Our tools' --trace: exactly want[OPCODE] rows of each opcode and no
    others; completion >= post on every row that has both; status success;
    per QP the sends' post times do not go backwards in sequence order and
    the sequence has no gap; send rows have the run's size, are signaled
    every cq_mod WRs and at the last, and (BW tools) carry the wr_id the
    tool posted, QP << 48 | sequence."""
    rows = [r for run in runs for r in run.rows]
    meta: dict[str, str] = {}
    for run in runs:
        meta.update(run.meta)
    bad: list[str] = []
    for op, n in want.items():
        got = sum(1 for r in rows if r.get("opcode") == op)
        if got != n:
            bad.append(f"{got} {op} rows, want {n}")
    if len(rows) != sum(want.values()):
        bad.append(f"{len(rows)} rows in all, want {sum(want.values())}")
    for r in rows:
        if r.get("t_post_ns") and r.get("t_comp_ns") and _int(r["t_comp_ns"]) < _int(r["t_post_ns"]):
            bad.append(f"completion before post: {r}")
        if r.get("status") not in ("0", "SUCCESS", ""):
            bad.append(f"status {r.get('status')}: {r}")
    for op in sorted({r.get("opcode", "") for r in rows} - {"RECV"}):
        ops = [r for r in rows if r.get("opcode") == op]
        by_qp: dict[str, list[tuple[int, int]]] = {}
        for r in ops:
            by_qp.setdefault(r["qp"], []).append((_int(r["seq"]), _int(r["t_post_ns"])))
        for qp, v in by_qp.items():
            v.sort()
            if any(b[1] < a[1] for a, b in zip(v, v[1:])):
                bad.append(f"post times go back on QP {qp}")
            if [s for s, _ in v] != list(range(len(v))):
                bad.append(f"sequence gaps on QP {qp}")
        try:
            cq_mod, size = int(meta["cq_mod"]), meta["msg_size"]
        except (KeyError, ValueError):
            bad.append(f"run metadata without cq_mod / msg_size: {meta}")
            continue
        bw = meta.get("tool", "").endswith("_bw")
        last: dict[str, int] = {}
        for r in ops:
            last[r["qp"]] = max(last.get(r["qp"], 0), _int(r["seq"]))
        for r in ops:
            seq, qpn = _int(r["seq"]), _int(r["qp"])
            if r.get("bytes") != size:
                bad.append(f"{r.get('bytes')} bytes, the run's size is {size}: {r}")
            signaled = (seq + 1) % cq_mod == 0 or seq == last[r["qp"]]
            if r.get("signaled") != str(int(signaled)):
                bad.append(f"signaled {r.get('signaled')}, cq_mod {cq_mod}: {r}")
            if bw and _int(r.get("wr_id", ""), 16) != (qpn << 48 | seq):
                bad.append(f"wr_id {r.get('wr_id')}: {r}")
    return bad[:20]

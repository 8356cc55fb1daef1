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


def check_preload_trace(runs: list[TraceRun], n: int, kind: str,
                        unsignaled: bool = False) -> tuple[list[str], str]:
    """The preload library's trace of one side of 6.06: kind "send" or
    "recv" rows completed == n and no completed row of the other kind;
    every send completed; per QP and direction, post and completion times
    and sequence numbers rise (+1) over the completed rows; completion >=
    post; status 0; nothing dropped, untracked, incomplete, unmatched or in
    error in the run metadata. unsignaled: at least one send was retired by
    a later CQE (own_cqe 0). Returns (problems, a one-line summary)."""
    bad: list[str] = []
    nrows = ns = nr = own = 0
    last_post: dict[tuple[str, bool], int] = {}
    last_comp: dict[tuple[str, bool], int] = {}
    last_seq: dict[tuple[str, bool], int] = {}
    for run in runs:
        for r in run.rows:
            nrows += 1
            recv = r.get("opcode") == "RECV"
            if r.get("t_comp_ns", "") == "":
                if not recv:
                    bad.append(f"send without completion: {r}")
                continue
            if recv:
                nr += 1
            else:
                ns += 1
                own += _int(r.get("own_cqe", ""))
            post, comp, seq = r.get("t_post_ns", ""), _int(r["t_comp_ns"]), _int(r.get("seq", ""))
            if post != "" and comp < _int(post):
                bad.append(f"completion before post: {r}")
            if r.get("status") != "0":
                bad.append(f"error status: {r}")
            k = (r.get("qp", ""), recv)
            if post != "" and k in last_post and _int(post) < last_post[k]:
                bad.append(f"post time goes back: {r}")
            if k in last_comp and comp < last_comp[k]:
                bad.append(f"completion time goes back: {r}")
            if k in last_seq and seq != last_seq[k] + 1:
                bad.append(f"sequence gap: {r}")
            if post != "":
                last_post[k] = _int(post)
            last_comp[k] = comp
            last_seq[k] = seq
    want, other = (ns, nr) if kind == "send" else (nr, ns)
    summary = f"{nrows} rows, {ns} send ({own} with their own CQE) + {nr} recv completed"
    if unsignaled and kind == "send" and own >= ns:
        bad.append("no unsignaled send retired by a later CQE")
    if want != n:
        bad.append(f"{want} {kind} rows completed, want {n}")
    if other != 0:
        bad.append(f"{other} rows of the other kind completed")
    if not runs:
        bad.append("no run in the trace")
    for run in runs:
        for key in ("dropped", "untracked", "incomplete", "unmatched", "errors"):
            if run.meta.get(key) != "0":
                bad.append(f"run metadata {key}={run.meta.get(key)}")
    return bad[:20], summary

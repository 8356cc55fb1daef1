# SPDX-License-Identifier: BSD-2-Clause
"""The dataset: one row per run, written to JSON Lines and CSV side by side
(same fields, same order; nested values are JSON text in the CSV), appended
and flushed after every run so an interrupted sweep keeps what it measured."""

from __future__ import annotations

import csv
import json
import os
from typing import Any, Iterator, Optional

Row = dict[str, Any]          # one dataset row (or a JSON object of a tool's)
Point = tuple[int, Optional[float], Optional[float], dict[str, float]]
ConfigKey = tuple[Any, ...]

# name -> kind: str, int, float, bool, json (nested; JSON text in CSV)
FIELDS = [
    ("run_id", "str"), ("status", "str"), ("error", "str"), ("start_time", "str"),
    ("elapsed_s", "float"),
    # the configuration (matrix axes)
    ("tool", "str"), ("size", "str"), ("qps", "int"), ("conn", "str"), ("post_api", "str"),
    ("placement", "str"), ("iters", "int"), ("duration", "int"), ("repeat", "int"),
    # where and with what
    ("launcher", "str"), ("client_host", "str"), ("server_host", "str"),
    ("client_kernel", "str"), ("server_kernel", "str"),
    ("tool_version", "str"), ("peer_version", "str"),
    ("device", "str"), ("fw_ver", "str"), ("node_guid", "str"), ("port_state", "str"),
    ("port_rate", "str"), ("port_rate_gbps", "float"), ("port_width", "str"),
    ("link_layer", "str"), ("netdev", "str"), ("netdev_speed_mbps", "int"),
    ("pcie_address", "str"), ("pcie_link", "str"), ("pcie_max_link", "str"),
    ("pcie_gbps", "float"), ("numa_node", "int"),
    ("peer_device", "str"), ("peer_fw_ver", "str"), ("peer_port_rate", "str"),
    ("peer_pcie_link", "str"), ("peer_numa_node", "int"),
    ("client_placement", "str"), ("server_placement", "str"),
    ("client_cmd", "str"), ("server_cmd", "str"),
    ("client_rc", "int"), ("server_rc", "int"),
    ("client_stderr", "str"), ("server_stderr", "str"), ("server_json_error", "str"),
    # results: the client's last row ("results"), plus the server's BW
    ("msg_size", "int"), ("n_iterations", "int"), ("bw_peak", "float"),
    ("bw_average", "float"), ("bw_units", "str"), ("bw_gbps", "float"),
    ("msg_rate_mpps", "float"), ("server_bw_gbps", "float"),
    ("t_min", "float"), ("t_max", "float"), ("t_typical", "float"), ("t_avg", "float"),
    ("t_stdev", "float"), ("p50", "float"), ("p90", "float"), ("p99", "float"),
    ("p99_9", "float"), ("p99_99", "float"), ("p99_999", "float"), ("lat_max", "float"),
    ("tps_average", "float"), ("cpu_util", "float"),
    ("limit_gbps", "float"), ("bw_pct_of_limit", "float"), ("bw_pct_reason", "str"),
    # nested detail
    ("all_results", "json"), ("test_info", "json"),
    ("client_placement_detail", "json"), ("server_placement_detail", "json"),
    ("client_nic", "json"), ("server_nic", "json"),
    # bench/mesh: the round a pair ran in and the pattern it belongs to
    ("round", "int"), ("pattern", "str"),
]
NAMES = [n for n, _ in FIELDS]
KINDS = dict(FIELDS)

# --out_json row keys -> dataset fields (docs/upstream-behaviour.md §8, perftest/report/json.c)
RESULT_KEYS = {
    "MsgSize": "msg_size", "n_iterations": "n_iterations", "BW_peak": "bw_peak",
    "BW_average": "bw_average", "bw_avg": "bw_average", "BW_units": "bw_units",
    "MsgRate": "msg_rate_mpps", "msgRate_avg": "msg_rate_mpps",
    "t_min": "t_min", "t_max": "t_max", "t_typical": "t_typical", "t_avg": "t_avg",
    "avg_lat": "t_avg", "t_stdev": "t_stdev", "percentile_50": "p50", "percentile_90": "p90",
    "percentile_99": "p99", "percentile_99.9": "p99_9", "percentile_99.99": "p99_99",
    "percentile_99.999": "p99_999", "max": "lat_max", "tps_average": "tps_average",
    "CPU_util": "cpu_util",
}

MIB_GBPS = 1048576 * 8 / 1e9


def bw_gbps(row: Row) -> Optional[float]:
    """A result row's average BW in Gb/s (perftest reports MiB/s unless
    --report_gbits); None without a BW."""
    bw = row.get("BW_average", row.get("bw_avg"))
    if not isinstance(bw, (int, float)):
        return None
    return float(bw) if row.get("BW_units") == "Gb/s" else bw * MIB_GBPS


def results_fields(doc: Row) -> Row:
    """Fields from a tool's --out_json document (its 'results' row)."""
    res: Row = doc.get("results") or {}
    out: Row = {}
    for k, v in res.items():
        if k in RESULT_KEYS:
            out[RESULT_KEYS[k]] = v
    if "p50" not in out and "t_typical" in out:
        out["p50"] = out["t_typical"]  # the median, as upstream names it
    out["bw_gbps"] = bw_gbps(res)
    out["all_results"] = doc.get("all_results") or ([res] if res else [])
    out["test_info"] = doc.get("test_info")
    return out


def empty_row() -> Row:
    return {n: None for n in NAMES}


def _cell(kind: str, v: Any) -> str:
    if v is None:
        return ""
    if kind == "json":
        return json.dumps(v, separators=(",", ":"), sort_keys=True)
    if kind == "bool":
        return "true" if v else "false"
    return str(v)


def _uncell(kind: str, s: str) -> Any:
    if s == "":
        return None
    if kind == "json":
        return json.loads(s)
    if kind == "int":
        return int(s)
    if kind == "float":
        return float(s)
    if kind == "bool":
        return s == "true"
    return s


def normalize(row: Row) -> Row:
    """A row as both files hold it: every field, values of their kind
    (size is text: a number or 'all')."""
    out = empty_row()
    for k, v in row.items():
        if k not in KINDS:
            raise KeyError(f"unknown dataset field '{k}'")
        if v is not None and KINDS[k] == "float":
            v = float(v)
        elif v is not None and KINDS[k] == "str" and not isinstance(v, str):
            v = str(v)
        out[k] = v
    return out


class Writer:
    """Appends rows to DIR/dataset.jsonl and DIR/dataset.csv."""

    def __init__(self, out_dir: str) -> None:
        self.jsonl_path = os.path.join(out_dir, "dataset.jsonl")
        self.csv_path = os.path.join(out_dir, "dataset.csv")
        for p in (self.jsonl_path, self.csv_path):
            if os.path.exists(p):
                raise FileExistsError(f"{p} exists: give a new output directory")
        self.jsonl = open(self.jsonl_path, "w")
        self.csvf = open(self.csv_path, "w", newline="")
        self.csv = csv.writer(self.csvf)
        self.csv.writerow(NAMES)
        self.rows = 0

    def write(self, row: Row) -> None:
        row = normalize(row)
        self.jsonl.write(json.dumps(row, sort_keys=False) + "\n")
        self.csv.writerow([_cell(KINDS[n], row[n]) for n in NAMES])
        for f in (self.jsonl, self.csvf):
            f.flush()
            os.fsync(f.fileno())
        self.rows += 1

    def close(self) -> None:
        self.jsonl.close()
        self.csvf.close()


def read_jsonl(path: str) -> list[Row]:
    rows: list[Row] = []
    with open(path) as f:
        for num, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{num}: not JSON ({e})") from None
    return rows


def read_csv(path: str) -> list[Row]:
    rows: list[Row] = []
    with open(path, newline="") as f:
        r = csv.reader(f)
        head = next(r, None)
        if head is None:
            raise ValueError(f"{path}: empty")
        unknown = [h for h in head if h not in KINDS]
        if unknown:
            raise ValueError(f"{path}: unknown columns {unknown}")
        for num, cells in enumerate(r, 2):
            if len(cells) != len(head):
                raise ValueError(f"{path}:{num}: {len(cells)} cells for {len(head)} columns")
            try:
                rows.append({h: _uncell(KINDS[h], c) for h, c in zip(head, cells)})
            except ValueError as e:
                raise ValueError(f"{path}:{num}: {e}") from None
    return rows


def load(path: str) -> list[Row]:
    """Rows of a dataset: a .jsonl or .csv file, or a sweep directory."""
    if os.path.isdir(path):
        for name in ("dataset.jsonl", "dataset.csv"):
            if os.path.exists(os.path.join(path, name)):
                return load(os.path.join(path, name))
        raise ValueError(f"{path}: no dataset.jsonl or dataset.csv")
    if path.endswith(".csv"):
        return read_csv(path)
    return read_jsonl(path)


def points(row: Row) -> list[Point]:
    """(size, bw Gb/s, msg rate Mpps, latency dict) per size of a run: every
    row of all_results (one per size with -a), else the run's own result."""
    rows: list[Any] = row.get("all_results") or []
    out: list[Point] = []
    for r in rows:
        if not isinstance(r, dict) or not isinstance(r.get("MsgSize"), int):
            continue
        lat: dict[str, float] = {}
        for k in ("t_typical", "percentile_50", "percentile_99", "percentile_99.9", "t_avg"):
            if isinstance(r.get(k), (int, float)):
                lat[k] = float(r[k])
        if "percentile_50" not in lat and "t_typical" in lat:
            lat["percentile_50"] = lat["t_typical"]
        rate = r.get("MsgRate", r.get("msgRate_avg"))
        out.append((r["MsgSize"], bw_gbps(r),
                    float(rate) if isinstance(rate, (int, float)) else None, lat))
    return out


def values(rows: list[Row]) -> Iterator[tuple[ConfigKey, int, str, float]]:
    """(configuration, size, metric, value) of every point of the ok rows;
    metric is bw, rate or a latency key (percentile_50, ...). What
    bench/compare and bench/plot both aggregate."""
    for row in rows:
        if row.get("status") != "ok":
            continue
        key = config_key(row)
        for size, bw, rate, lat in points(row):
            vals: dict[str, Optional[float]] = {"bw": bw, "rate": rate, **lat}
            for metric, v in vals.items():
                if v is not None:
                    yield key, size, metric, v


CONFIG_KEYS = ("tool", "conn", "qps", "post_api", "placement", "iters", "duration")


def config_key(row: Row) -> ConfigKey:
    """The configuration of a run, without its size: what one plotted line
    or one compared entry stands for."""
    return tuple(row.get(k) for k in CONFIG_KEYS)


def config_label(key: ConfigKey) -> str:
    tool, conn, qps, api, place, iters, dur = key
    s = f"{tool} {conn} q{qps} {api} {place}"
    if iters is not None:
        s += f" n{iters}"
    if dur is not None:
        s += f" D{dur}"
    return s

# SPDX-License-Identifier: BSD-2-Clause
"""The sweep loop: describe both ends once (nicinfo, tool versions), then per
run resolve placements, start the server, wait for its port, run the client,
collect both JSON files and write one dataset row, failed or not."""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import time
from typing import IO, Any, Optional

from . import dataset, matrix, nic, placement
from .launchers import SIDES, Launcher, run_pair

PORT_SPAN = 500           # runs rotate over port .. port + PORT_SPAN - 1


def hms(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def last_line(path: str) -> Optional[str]:
    """Last non-empty line of a log file (where tools print their error)."""
    try:
        with open(path, errors="replace") as f:
            lines = [l.strip() for l in f.read().splitlines() if l.strip()]
        return lines[-1][:300] if lines else None
    except OSError:
        return None


class Sweep:
    def __init__(self, mx: matrix.Matrix, launcher: Launcher, out_dir: str, nicinfo_path: str,
                 bindir: str, peer_bindir: Optional[str], out: IO[str] = sys.stdout) -> None:
        self.mx, self.s = mx, mx.settings
        self.launcher = launcher
        self.out_dir = out_dir
        self.nicinfo_path = nicinfo_path
        self.bins = {"client": bindir, "server": peer_bindir or bindir}
        self.out = out
        self.versions: dict[tuple[str, str], Optional[str]] = {}
        self.nics: dict[str, tuple[Optional[nic.Doc], Optional[str]]] = {}
        self.devices: dict[str, Optional[str]] = {"client": self.s["device"],
                        "server": self.s["peer_device"] or self.s["device"]}

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    # --- once per sweep -----------------------------------------------------------
    def describe_ends(self) -> None:
        """nicinfo on both ends: {side: (doc, error)}."""
        for side in SIDES:
            dev = self.devices[side]
            argv = [self.nicinfo_path] + ([dev] if dev else [])
            done = self.launcher.run(side, argv)
            rc, out, err = done.rc, done.out, done.err
            doc: Optional[nic.Doc] = None
            error: Optional[str] = None
            try:
                doc = nic.parse(out)
            except ValueError as e:
                error = f"nicinfo exit {rc}: {err.strip().splitlines()[-1] if err.strip() else e}"
            if doc is not None and rc != 0:
                error = err.strip().splitlines()[-1] if err.strip() else f"nicinfo exit {rc}"
            if doc is not None and dev is None:
                found = nic.device(doc, None)
                self.devices[side] = found.get("device") if found else None
                if not found:
                    error = (f"no device given and nicinfo lists "
                             f"{len(doc.get('devices') or [])}: set device = NAME")
            self.nics[side] = (doc, error)
            if error:
                self.say(f"note: {side} end: {error}")

    def version(self, side: str, tool: str) -> Optional[str]:
        """The tool's -V answer ('Version: X' -> X), cached; None if none."""
        key = (side, tool)
        if key not in self.versions:
            done = self.launcher.run(side, [os.path.join(self.bins[side], tool), "-V"])
            m = re.search(r"Version:\s*(\S+)", done.text)
            self.versions[key] = m.group(1) if m else None
        return self.versions[key]

    # --- one run ------------------------------------------------------------------------
    def _place(self, side: str, spec: str) -> dict[str, Any]:
        doc, _ = self.nics[side]
        if spec == "none":
            return placement.resolve(spec, {}, None)
        if doc is None:
            raise placement.PlacementError(f"{spec}: no nicinfo for the {side} end "
                                           f"({self.nics[side][1]})")
        dev = nic.device(doc, self.devices[side])
        if dev is None and not spec.startswith("cpus:"):
            raise placement.PlacementError(f"{spec}: no device information for the {side} "
                                           f"end ({self.nics[side][1]})")
        return placement.resolve(spec, doc["host"], dev)

    def execute(self, idx: int, run: matrix.Run) -> dataset.Row:
        """Run one configuration; returns its dataset row."""
        run_id = f"{idx + 1:04d}"
        row = dataset.empty_row()
        row.update({k: run.get(k) for k in ("tool", "qps", "conn", "post_api", "placement",
                                            "iters", "duration", "repeat")})
        row.update(run_id=run_id, size=None if run["size"] is None else str(run["size"]),
                   launcher=self.launcher.name,
                   start_time=time.strftime("%Y-%m-%dT%H:%M:%S%z"))
        t0 = time.monotonic()
        self._fill_ends(row, run["tool"])
        try:
            place = {side: self._place(side, run["placement"]) for side in SIDES}
        except placement.PlacementError as e:
            row.update(status="failed", error=f"placement: {e}", elapsed_s=0.0)
            return row
        port = self.s["port"] + idx % PORT_SPAN
        argv: dict[str, list[str]] = {}
        logs: dict[str, str] = {}
        for side in SIDES:
            jp = self.launcher.json_path(side, run_id)
            self.launcher.clear(side, jp)
            argv[side] = (place[side]["numactl"] + [os.path.join(self.bins[side], run["tool"])]
                          + matrix.tool_args(run, self.s, side, jp, port,
                                             self.launcher.server_addr()))
            row[f"{side}_cmd"] = shlex.join(argv[side])
            row[f"{side}_placement"] = placement.summary(place[side])
            row[f"{side}_placement_detail"] = place[side]
            logs[side] = os.path.join(self.out_dir, "runs", f"{run_id}-{side}")
        rcs, error = self._run_pair(argv, logs, port)
        row["elapsed_s"] = round(time.monotonic() - t0, 3)
        for side in SIDES:
            row[f"{side}_rc"] = rcs.get(side)
            row[f"{side}_stderr"] = last_line(logs[side] + ".err") or last_line(logs[side] + ".out")
        docs = {side: self._collect(side, run_id) for side in SIDES}
        error = error or self._first_error(rcs, row, docs)
        if docs["client"][0] is not None:
            row.update(dataset.results_fields(docs["client"][0]))
        if docs["server"][0] is not None:
            row["server_bw_gbps"] = dataset.bw_gbps(docs["server"][0].get("results") or {})
        self._percent(row)
        row["status"] = "failed" if error else "ok"
        row["error"] = error
        return row

    def _fill_ends(self, row: dataset.Row, tool: str) -> None:
        ends: dict[str, nic.Doc] = {}
        for side in SIDES:
            doc, err = self.nics[side]
            ends[side] = nic.describe(doc, self.devices[side], self.s["ib_port"], err)
        c, sv = ends["client"], ends["server"]
        row.update(client_host=c["host"], server_host=sv["host"], client_kernel=c["kernel"],
                   server_kernel=sv["kernel"], client_nic=c, server_nic=sv,
                   tool_version=self.version("client", tool),
                   peer_version=self.version("server", tool))
        for k in ("device", "fw_ver", "node_guid", "port_state", "port_rate", "port_rate_gbps",
                  "port_width", "link_layer", "netdev", "netdev_speed_mbps", "pcie_address",
                  "pcie_link", "pcie_max_link", "pcie_gbps", "numa_node"):
            row[k] = c.get(k)
        for k in ("device", "fw_ver", "port_rate", "pcie_link", "numa_node"):
            row["peer_" + k] = sv.get(k)
        row["limit_gbps"], row["bw_pct_reason"] = nic.pair_limit(c, sv)

    def _run_pair(self, argv: dict[str, list[str]], logs: dict[str, str],
                  port: int) -> tuple[dict[str, Optional[int]], Optional[str]]:
        """Start the server, wait for its port, run the client. ({side: rc}, error)."""
        cm = re.search(r"(^|\s)(-R|--rdma_cm)(\s|$)", self.s["extra"]) is not None
        res = run_pair(self.launcher, argv, logs, port, self.s["timeout"], rdma_cm=cm)
        return {"server": res.server.rc, "client": res.client.rc}, res.error

    def _collect(self, side: str, run_id: str) -> tuple[Optional[dataset.Row], Optional[str]]:
        """(JSON document, problem) of side's --out_json file; keeps a copy."""
        path = self.launcher.json_path(side, run_id)
        text = self.launcher.fetch(side, path)
        if text is None:
            return None, f"{side} JSON missing ({path})"
        keep = os.path.join(self.out_dir, "runs", f"{run_id}-{side}.json")
        if os.path.abspath(keep) != os.path.abspath(path):
            with open(keep, "w") as f:
                f.write(text)
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            return None, f"{side} JSON is not valid JSON ({e}; upstream before 24.01 writes such)"
        if not isinstance(doc, dict) or not doc.get("results"):
            return None, f"{side} JSON has no results"
        return doc, None

    @staticmethod
    def _first_error(rcs: dict[str, Optional[int]], row: dataset.Row,
                     docs: dict[str, tuple[Optional[dataset.Row], Optional[str]]]) -> Optional[str]:
        for side in ("client", "server"):
            rc = rcs.get(side)
            if rc not in (None, 0):
                return f"{side} exit {rc}: {row[side + '_stderr'] or 'no output'}"
        # The server's JSON only adds server_bw_gbps: its problems (an
        # upstream peer before 24.01 writes invalid JSON) are noted, not fatal.
        row["server_json_error"] = docs["server"][1]
        return docs["client"][1]

    @staticmethod
    def _percent(row: dataset.Row) -> None:
        lim, bw = row["limit_gbps"], row["bw_gbps"]
        if bw is None:
            row["bw_pct_reason"] = "no BW result"
        elif lim:
            row["bw_pct_of_limit"] = round(100.0 * bw / lim, 2)

    # --- the loop -------------------------------------------------------------------------
    def run(self, runs: list[matrix.Run], skipped: list[tuple[matrix.Run, str]]) -> int:
        os.makedirs(os.path.join(self.out_dir, "runs"), exist_ok=True)
        self.launcher.prepare()   # may refuse (LauncherError) before any file exists
        writer = dataset.Writer(self.out_dir)
        self.describe_ends()
        meta = {"matrix": {"lists": self.mx.lists, "settings": self.mx.settings},
                "runs": len(runs), "skipped": [{"run": r, "reason": w} for r, w in skipped],
                "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "nicinfo": {s: {"doc": d, "error": e} for s, (d, e) in self.nics.items()},
                "binaries": self.bins, "nicinfo_path": self.nicinfo_path,
                **self.launcher.describe()}
        with open(os.path.join(self.out_dir, "sweep.json"), "w") as f:
            json.dump(meta, f, indent=2, default=str)
        for r, why in skipped:
            self.say(f"skip: {matrix.label(r)}: {why}")
        t0, failed = time.monotonic(), 0
        for i, run in enumerate(runs):
            row = self.execute(i, run)
            writer.write(row)
            failed += row["status"] != "ok"
            el = time.monotonic() - t0
            eta = el / (i + 1) * (len(runs) - i - 1)
            if row["status"] == "ok":
                res = (f"{row['bw_gbps']:.3f} Gb/s" if row["bw_gbps"] is not None
                       else f"t_avg {row['t_avg']} usec")
                if row["bw_pct_of_limit"] is not None:
                    res += f" ({row['bw_pct_of_limit']:.1f}% of {row['limit_gbps']:g})"
            else:
                res = f"FAILED: {row['error']}"
            self.say(f"[{i + 1}/{len(runs)}] {matrix.label(run)}: {res} | "
                     f"elapsed {hms(el)}, ETA {hms(eta)}")
        writer.close()
        self.say(f"sweep: {len(runs)} runs, {len(runs) - failed} ok, {failed} failed, "
                 f"{len(skipped)} combinations skipped; dataset {writer.jsonl_path} "
                 f"and {writer.csv_path}")
        return 1 if failed else 0

# SPDX-License-Identifier: BSD-2-Clause
"""bench/mesh's loop: the rounds one after another, the pairs of a round at
the same time (one thread each, labctl.run_ends), one dataset row per pair
(bench/sweep's format, with the round and the pattern), a progress line per
round."""

from __future__ import annotations

import json
import os
import shlex
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any, Optional, Sequence

from . import dataset, labctl
from .mesh_nodes import Nodes
from .mesh_plan import Link, Round
from .runner import hms, last_line

PORT_SPAN = 400

# Runs on the far side: binds the tool to the NUMA node of the RDMA device
# ($1) when the node is known and numactl is there, else runs it as it is
# (and says so on stderr, which the row keeps).
NIC_LOCAL = ('n=$(cat "/sys/class/infiniband/$1/device/numa_node" 2>/dev/null); shift; '
             'if [ "${n:--1}" -ge 0 ] && command -v numactl >/dev/null; then '
             'exec numactl --cpunodebind="$n" --membind="$n" "$@"; fi; '
             'echo "mesh: no NUMA node for the device (or no numactl): not pinned" >&2; exec "$@"')


def nic_local(dev: str, argv: list[str]) -> list[str]:
    """argv run on the CPUs and memory of dev's NUMA node (NIC-local)."""
    return ["sh", "-c", NIC_LOCAL, "sh", dev, *argv]


class Mesh:
    def __init__(self, nodes: Nodes, tool_path: str, tool_args: Sequence[str], out_dir: str,
                 pattern: str, port: int = 18515, timeout: float = 300,
                 out: IO[str] = sys.stdout, nic_dev: Optional[str] = None) -> None:
        self.nodes, self.tool_path, self.args = nodes, tool_path, list(tool_args)
        self.out_dir, self.pattern, self.port, self.timeout = out_dir, pattern, port, timeout
        self.out, self.nic_dev = out, nic_dev
        self.tool = os.path.basename(tool_path)
        self.stamp = f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
        self.round_times: list[tuple[float, list[float]]] = []

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def _argv(self, l: Link, side: str, port: int, json_path: str) -> list[str]:
        argv = [self.tool_path, *self.args, "-p", str(port), "--out_json",
                f"--out_json_file={json_path}"]
        if side == "client":
            argv.append(self.nodes.addr(l.server))
        return nic_local(self.nic_dev, argv) if self.nic_dev else argv

    def run_link(self, r: int, l: Link, port: int) -> dataset.Row:
        run_id = f"r{r:02d}-{l.client}-{l.server}"
        row = dataset.empty_row()
        row.update(run_id=run_id, round=r, pattern=self.pattern, tool=self.tool,
                   launcher=self.nodes.name, client_host=l.client, server_host=l.server,
                   start_time=time.strftime("%Y-%m-%dT%H:%M:%S%z"))
        jdir = self.nodes.out_dir()
        jpath = {s: os.path.join(jdir, f"mesh-{self.stamp}-{run_id}-{s}.json")
                 for s in ("server", "client")}
        argv = {s: self._argv(l, s, port, jpath[s]) for s in ("server", "client")}
        for s in ("server", "client"):
            row[f"{s}_cmd"] = shlex.join(argv[s])
            if self.nodes.name == "lab":     # the share is this host's: no stale file is read
                Path(jpath[s]).unlink(missing_ok=True)
        logs = {s: Path(self.out_dir, "runs", f"{run_id}-{s}") for s in ("server", "client")}
        pair = labctl.Pair(run_id, labctl.Side(0, argv["server"]), labctl.Side(0, argv["client"]))
        timing = labctl.Timing(self.timeout, min(60.0, self.timeout), 15 + self.nodes.slack, 3,
                               self.nodes.slack)
        t0 = time.monotonic()
        labctl.run_ends(pair, self.nodes.end(l.server), self.nodes.end(l.client), port,
                        {s: (Path(str(logs[s]) + ".out"), Path(str(logs[s]) + ".err"))
                         for s in ("server", "client")}, timing)
        row["elapsed_s"] = round(time.monotonic() - t0, 3)
        row["server_rc"], row["client_rc"] = pair.server.rc, pair.client.rc
        for s in ("server", "client"):
            row[f"{s}_stderr"] = (last_line(str(logs[s]) + ".err")
                                  or last_line(str(logs[s]) + ".out"))
        error = pair.error
        for s in ("client", "server"):
            rc = row[f"{s}_rc"]
            if not error and rc not in (None, 0):
                error = f"{s} on {getattr(l, s)} exit {rc}: {row[s + '_stderr'] or 'no output'}"
        text = self.nodes.fetch(l.client, jpath["client"])
        if text is not None:
            try:
                doc = json.loads(text)
                row.update(dataset.results_fields(doc))
                info = doc.get("test_info") or {}
                row["device"] = info.get("Device") or info.get("device")
                size = (doc.get("results") or {}).get("MsgSize")
                row["size"] = None if size is None else str(size)
                if isinstance(info.get("Number_of_qps"), int):
                    row["qps"] = info["Number_of_qps"]
                row["conn"] = info.get("Connection_type")
            except (ValueError, AttributeError) as e:
                error = error or f"client JSON is not valid ({e})"
        elif not error:
            error = f"client JSON missing ({jpath['client']} on {l.client})"
        stext = self.nodes.fetch(l.server, jpath["server"])
        if stext is not None:      # the server's NIC and its own BW: noted, never fatal
            try:
                sdoc = json.loads(stext)
                sinfo = sdoc.get("test_info") or {}
                row["peer_device"] = sinfo.get("Device") or sinfo.get("device")
                row["server_bw_gbps"] = dataset.bw_gbps(sdoc.get("results") or {})
            except (ValueError, AttributeError) as e:
                row["server_json_error"] = f"server JSON is not valid ({e})"
        row["status"] = "failed" if error else "ok"
        row["error"] = error
        return row

    def run(self, rounds: Sequence[Round], writer: dataset.Writer,
            round_timeout: Optional[float] = None) -> list[dataset.Row]:
        os.makedirs(os.path.join(self.out_dir, "runs"), exist_ok=True)
        rows: list[dataset.Row] = []
        t_start = time.monotonic()
        done_pairs, total = 0, sum(len(r) for r in rounds)
        width = max(len(r) for r in rounds)
        for k, rnd in enumerate(rounds, 1):
            base = self.port + ((k - 1) * width) % PORT_SPAN
            got: list[Optional[dataset.Row]] = [None] * len(rnd)

            def one(j: int, l: Link) -> None:
                got[j] = self.run_link(k, l, base + j)
            t0 = time.monotonic()
            threads = [threading.Thread(target=one, args=(j, l), daemon=True)
                       for j, l in enumerate(rnd)]
            for t in threads:
                t.start()
            limit = round_timeout or (self.timeout + 120)
            for t in threads:
                t.join(max(0.0, t0 + limit - time.monotonic()))
            wall = time.monotonic() - t0
            for j, l in enumerate(rnd):
                row = got[j]
                if row is None:   # its thread is still waiting: the round's bound
                    row = dataset.empty_row()
                    row.update(run_id=f"r{k:02d}-{l.client}-{l.server}", round=k,
                               pattern=self.pattern, tool=self.tool, launcher=self.nodes.name,
                               client_host=l.client, server_host=l.server, status="failed",
                               error=f"round timeout: still running after {limit:g} s",
                               elapsed_s=round(wall, 3))
                writer.write(row)
                rows.append(row)
            self.round_times.append((wall, [float(r["elapsed_s"] or 0) for r in rows[-len(rnd):]]))
            done_pairs += len(rnd)
            el = time.monotonic() - t_start
            eta = el / k * (len(rounds) - k)
            bad = [r for r in rows[-len(rnd):] if r["status"] != "ok"]
            self.say(f"round {k}/{len(rounds)}: {len(rnd)} pairs in {wall:.1f} s, "
                     f"{len(rnd) - len(bad)} ok, {len(bad)} failed | pairs done "
                     f"{done_pairs}/{total} | elapsed {hms(el)}, ETA {hms(eta)}")
            for r in bad:
                self.say(f"  failed {r['client_host']}>{r['server_host']}: {r['error']}")
        return rows


def metric(row: dataset.Row) -> tuple[Optional[float], str, bool]:
    """(value, unit, higher is better) of a row: BW in Gb/s for the BW tools,
    else the typical latency in usec."""
    if row.get("bw_gbps") is not None:
        return float(row["bw_gbps"]), "Gb/s", True
    for k in ("t_typical", "t_avg"):
        if row.get(k) is not None:
            return float(row[k]), "usec", False
    return None, "", True


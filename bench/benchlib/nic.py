# SPDX-License-Identifier: BSD-2-Clause
"""Reading bench/nicinfo's JSON: pick a device and port, flatten what a
dataset row records about one end, and the physical limit of a pair."""

from __future__ import annotations

import json
from typing import Any, Optional

Doc = dict[str, Any]        # a JSON object of nicinfo's


def parse(text: str) -> Doc:
    """nicinfo's stdout -> its document; ValueError with the reason otherwise."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"nicinfo printed no JSON ({e})") from None
    if not isinstance(doc, dict) or "host" not in doc or "devices" not in doc:
        raise ValueError("nicinfo JSON lacks 'host'/'devices'")
    out: Doc = doc
    return out


def device(doc: Optional[Doc], name: Optional[str]) -> Optional[Doc]:
    """The device object called name; None if absent (or doc is None). With
    name None, the only device (None if there are zero or several)."""
    if not doc:
        return None
    devs: list[Doc] = doc.get("devices") or []
    if name is None:
        return devs[0] if len(devs) == 1 else None
    for d in devs:
        if d.get("device") == name:
            return d
    return None


def port(dev: Optional[Doc], num: int) -> Optional[Doc]:
    ports: list[Doc] = (dev or {}).get("ports") or []
    for p in ports:
        if p.get("port") == num:
            return p
    return None


def _link_text(link: Optional[Doc]) -> Optional[str]:
    if not link:
        return None
    return f"{link['speed_gts']:g} GT/s x{link['width']}"


def describe(doc: Optional[Doc], dev_name: Optional[str], port_num: int,
             error: Optional[str] = None) -> Doc:
    """Flat metadata of one end: host, kernel, device, fw, port, PCIe, NUMA,
    physical limit. Unknown values are None; 'nic_error' says why."""
    host: Doc = (doc or {}).get("host") or {}
    dev = device(doc, dev_name)
    p = port(dev, port_num)
    pci: Doc = (dev or {}).get("pci") or {}
    link: Doc = pci.get("link") or {}
    out: Doc = {
        "host": host.get("hostname"), "kernel": host.get("kernel"),
        "device": dev_name if dev is None else dev.get("device"),
        "fw_ver": (dev or {}).get("fw_ver"), "node_guid": (dev or {}).get("node_guid"),
        "virtual": (dev or {}).get("virtual"),
        "port_state": (p or {}).get("state"), "port_rate": (p or {}).get("rate"),
        "port_rate_gbps": (p or {}).get("rate_gbps"), "port_width": (p or {}).get("width"),
        "link_layer": (p or {}).get("link_layer"), "netdev": (p or {}).get("netdev"),
        "netdev_speed_mbps": (p or {}).get("netdev_speed_mbps"),
        "pcie_address": pci.get("address"),
        "pcie_link": _link_text(link.get("current")),
        "pcie_max_link": _link_text(link.get("max")),
        "pcie_gbps": (link.get("current") or {}).get("gbps"),
        "pcie_source": link.get("source"),
        "numa_node": (dev or {}).get("numa_node"),
        "limit_gbps": (p or {}).get("limit_gbps"),
        "limit_reason": (p or {}).get("limit_reason"),
        "nic_error": error,
    }
    if error is None and dev is None:
        out["nic_error"] = f"nicinfo does not list device {dev_name}" if doc else "no nicinfo"
    elif error is None and p is None:
        out["nic_error"] = f"{out['device']} has no port {port_num}"
    if dev is not None and not pci:
        out["pcie_link"] = None
        out["pcie_reason"] = dev.get("pci_reason")
    return out


def pair_limit(client: Doc, server: Doc) -> tuple[Optional[float], str]:
    """(limit Gb/s, reason): the smaller of both ends' limits when both are
    known; else (None, why)."""
    missing: dict[str, list[str]] = {}
    for side, d in (("client", client), ("server", server)):
        if d.get("limit_gbps") is None:
            why = f"{d.get('device')}: {d.get('limit_reason') or d.get('nic_error') or 'unknown'}"
            missing.setdefault(why, []).append(side)
    if missing:
        return None, "; ".join(f"{' and '.join(sides)} {why}" for why, sides in missing.items())
    lim: float = min(client["limit_gbps"], server["limit_gbps"])
    which = "client" if client["limit_gbps"] <= server["limit_gbps"] else "server"
    return lim, f"{which} {(client if which == 'client' else server)['limit_reason']}"

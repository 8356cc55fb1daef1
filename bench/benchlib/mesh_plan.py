# SPDX-License-Identifier: BSD-2-Clause
"""bench/mesh's schedule: a traffic pattern over N nodes split into rounds of
(server, client) pairs that run at the same time.

The default all-pairs schedule is the shift pattern (as mpiGraph's): in
round k (1..n-1) node i's client sends to node (i+k) mod n's server. Every
ordered pair is covered in n-1 rounds, and in each round every node runs one
server and one client: one stream into each NIC and one out of it, which a
full-duplex link carries without the two competing for one direction. When
a NIC must not serve two runs at once, --disjoint gives rounds in which no
node appears twice: the circle method's n-1 (n even; n for n odd) perfect
matchings of unordered pairs, each run once per direction, 2(n-1) rounds
for n even (2n for n odd)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

PATTERNS = ("all-pairs", "one-to-many:HOST", "many-to-one:HOST", "ring", "file:PATH")


class PlanError(ValueError):
    """A pattern or a rounds file that cannot be scheduled."""


@dataclass(frozen=True)
class Link:
    server: str
    client: str

    def __str__(self) -> str:
        return f"{self.client}>{self.server}"


Round = list[Link]


def shift_rounds(nodes: Sequence[str]) -> list[Round]:
    """n-1 rounds; in round k node i sends to node i+k."""
    n = len(nodes)
    return [[Link(server=nodes[(i + k) % n], client=nodes[i]) for i in range(n)]
            for k in range(1, n)]


def _matchings(nodes: Sequence[str]) -> list[list[tuple[str, str]]]:
    """The circle method: rounds of disjoint unordered pairs covering every
    pair once (a bye, None, pads an odd count)."""
    ring: list[Optional[str]] = list(nodes)
    if len(ring) % 2:
        ring.append(None)
    m = len(ring)
    out: list[list[tuple[str, str]]] = []
    for _ in range(m - 1):
        pairs = []
        for j in range(m // 2):
            a, b = ring[j], ring[m - 1 - j]
            if a is not None and b is not None:
                pairs.append((a, b))
        out.append(pairs)
        ring = [ring[0], ring[-1], *ring[1:-1]]   # keep the first, turn the rest
    return out


def disjoint_rounds(nodes: Sequence[str]) -> list[Round]:
    """Every ordered pair once, no node twice in a round."""
    ms = _matchings(nodes)
    return ([[Link(server=b, client=a) for a, b in r] for r in ms]
            + [[Link(server=a, client=b) for a, b in r] for r in ms])


def _host(spec: str, nodes: Sequence[str]) -> str:
    host = spec.split(":", 1)[1]
    if host not in nodes:
        raise PlanError(f"{spec}: {host} is not one of the nodes ({', '.join(nodes)})")
    return host


def parse_rounds_file(text: str, nodes: Sequence[str], path: str = "rounds") -> list[Round]:
    """One round per line: CLIENT>SERVER pairs separated by spaces or commas;
    '#' starts a comment. Nodes must be known; a node may not run two clients
    or two servers in one round (ports and CPUs would collide)."""
    rounds: list[Round] = []
    for num, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].replace(",", " ").strip()
        if not line:
            continue
        r: Round = []
        for word in line.split():
            if word.count(">") != 1:
                raise PlanError(f"{path}:{num}: '{word}' is not CLIENT>SERVER")
            c, s = word.split(">")
            for h in (c, s):
                if h not in nodes:
                    raise PlanError(f"{path}:{num}: '{h}' is not one of the nodes "
                                    f"({', '.join(nodes)})")
            if c == s:
                raise PlanError(f"{path}:{num}: '{word}': a node cannot test itself")
            r.append(Link(server=s, client=c))
        rounds.append(r)
    if not rounds:
        raise PlanError(f"{path}: no rounds")
    return rounds


def plan(pattern: str, nodes: Sequence[str], disjoint: bool = False,
         rounds_text: Optional[str] = None) -> list[Round]:
    """The rounds of a pattern over nodes (in the order given)."""
    if len(set(nodes)) != len(nodes):
        raise PlanError(f"a node is named twice: {', '.join(nodes)}")
    if len(nodes) < 2:
        raise PlanError(f"a pattern needs 2 nodes or more (got {len(nodes)})")
    if pattern == "all-pairs":
        return disjoint_rounds(nodes) if disjoint else shift_rounds(nodes)
    if pattern == "ring":
        links = [Link(server=nodes[(i + 1) % len(nodes)], client=nodes[i])
                 for i in range(len(nodes))]
        if not disjoint:
            return [links]
        # a ring of n links: even links then odd ones (and the last alone for n odd)
        return [r for r in (links[0::2][: len(nodes) // 2], links[1::2],
                            links[len(nodes) - 1:] if len(nodes) % 2 else []) if r]
    if pattern.startswith("one-to-many:"):
        host = _host(pattern, nodes)
        links = [Link(server=n, client=host) for n in nodes if n != host]
        return [[l] for l in links]      # one client process per round on HOST's NIC
    if pattern.startswith("many-to-one:"):
        host = _host(pattern, nodes)
        links = [Link(server=host, client=n) for n in nodes if n != host]
        return [[l] for l in links]
    if pattern.startswith("file:"):
        if rounds_text is None:
            raise PlanError(f"{pattern}: no rounds file read")
        return parse_rounds_file(rounds_text, nodes, pattern[5:])
    raise PlanError(f"unknown pattern '{pattern}' (one of: {', '.join(PATTERNS)})")


def check_round(r: Round) -> Optional[str]:
    """Why a round cannot run as one (a node with two servers or two
    clients), or None."""
    seen: set[tuple[str, str]] = set()
    for l in r:
        for role, h in (("server", l.server), ("client", l.client)):
            if (role, h) in seen:
                return f"{h} would run two {role}s in one round"
            seen.add((role, h))
    return None


def is_disjoint(r: Round) -> bool:
    hosts = [h for l in r for h in (l.server, l.client)]
    return len(hosts) == len(set(hosts))


def ordered_pairs(rounds: Iterable[Round]) -> list[Link]:
    return [l for r in rounds for l in r]


def efficiency(rounds: Sequence[tuple[float, Sequence[float]]]) -> Optional[float]:
    """Pair-seconds done / (pairs x round wall time) summed over rounds:
    1.0 when every pair of a round runs for the whole round at the same
    time, 1/k when a round's k pairs ran one after another."""
    num = sum(sum(ts) for _, ts in rounds)
    den = sum(wall * len(ts) for wall, ts in rounds)
    return num / den if den > 0 else None

# SPDX-License-Identifier: BSD-2-Clause
"""The verdict of one interop cell (bench/interop): from each end's exit
status, whether we had to stop it, and its output text, say "pass" or why
not. Pure functions: no processes, no files.

Reasons, first match wins (a root cause before the failures it causes on
the other end: a crashed or refusing server makes its client's exchange
fail):

  crash signal SIGxxx    an end was killed by a signal it did not get from us
  refused version        a version refusal (ours, or upstream's "not
                         compatible with versions older than 5.70")
  refused option         an end does not know or take an option of the mode
  refused parameters     6.28+ parameter negotiation found the two ends' terms differ
  completion error       a work completion with an error status
  desync/exchange failed an out-of-band exchange failed or could not be parsed
  connect failed         the client found no server
  exit N                 an end failed otherwise (the detail has its last line)
  timeout                we stopped an end (or its far-side timeout did)
  rows disagree          both ends exit 0, but the result rows are not the
                         expected sizes and iteration counts on both sides
  pass
"""

from __future__ import annotations

import re
import signal
from dataclasses import dataclass, field
from typing import Optional, Pattern

from . import results

# The exit status as the far side's shell saw it (128 + N for signal N):
# bench/interop runs every tool under a shell that prints this line last.
EXIT_MARK = "bench/interop: exit status "
EXIT_MARK_RE = re.compile(r"^" + re.escape(EXIT_MARK) + r"(-?\d+)\s*$", re.M)
TIMEOUT_RC = 124          # GNU timeout, ci/lab exec, launchers.run_pair

CRASH_TEXT = re.compile(r"\*\*\* (?:buffer overflow|stack smashing) detected \*\*\*|"
                        r"AddressSanitizer|UndefinedBehaviorSanitizer|Segmentation fault|"
                        r"double free or corruption|malloc\(\): |free\(\): invalid|"
                        r"core dumped")
REFUSED_VERSION = re.compile(
    r"not compatible with versions older than|"                   # upstream
    r"the oldest compatible with this build|"                     # ours: too old
    r"will negotiate parameters \(6\.28\+ protocol\)|"            # ours: 6.28
    r"raw keys are 56 bytes up to perftest 6\.28 and 64 from")    # ours: -z/-R layout
REFUSED_OPTION = re.compile(r"not supported by this build|is not implemented yet|unrecognized option|"
                            r"invalid option|option requires an argument|"
                            r"Parser function exited with Error|is not available in ib_")
REFUSED_PARAMS = re.compile(r"Failed to negotiate parameters|mismatch: local=")
COMPLETION = re.compile(r"Completion with error|Failed status (\d+)|"
                        r"IBV_WC_[A-Z_]*ERR|Got completion with error")
COMPLETION_STATUS = re.compile(r"Failed status (\d+)")
DESYNC = re.compile(r"Failed to exchange|Couldn't parse|malformed|desynchroni[sz]ed|"
                    r"Couldn't read remote address|Couldn't read reports|"
                    r"Couldn't write to socket|Version exchange failed|peer sent an invalid|"
                    r"peer not responding|peer (?:closed|disconnected)|Connection reset by peer")
CONNECT = re.compile(r"Couldn't connect to|could not connect to|Unable to connect|"
                     r"Connection refused|No client connected")
# A result row: bytes and iterations, then three figures or more (a figure
# may be "-nan" or "inf" when a clock misbehaves; the row still counts).
ROW = re.compile(r"^\s*(\d+)\s+(\d+)(?:\s+[-+]?(?:[\d.]+(?:e[-+]?\d+)?|nan|inf)){3,}\s*$", re.I)
LOSS = re.compile(r"(\d+) of (\d+) messages lost")


@dataclass
class End:
    """What one end of a cell left: its exit code as the launcher reported it
    (None: never started; negative: killed by that signal, as Python reports
    a local child), whether we stopped it, and its stdout + stderr."""
    rc: Optional[int] = None
    stopped: bool = False
    text: str = ""


@dataclass
class Expect:
    """What a passing cell prints. iters: -n given (None: not checked);
    all_sizes: -a; size: -s given (None: not checked); server_rows: 'all' (the server prints a row per size),
    'last' (the client's final row) or 'none' (latency servers that print none)."""
    tool: str
    conn: str = "RC"
    iters: Optional[int] = None
    qps: int = 1
    all_sizes: bool = False
    server_rows: str = "all"
    size: Optional[int] = None


@dataclass
class Verdict:
    reason: str                 # "pass" or one of the reasons above
    detail: str = ""            # which end, and its telling line
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.reason == "pass"


def exit_status(rc: Optional[int], text: Optional[str]) -> Optional[int]:
    """The end's exit status: the shell's marker line when present (it says
    128 + N for a signal, whatever ssh or ci/lab made of it), else rc."""
    found = EXIT_MARK_RE.findall(text or "")
    return int(found[-1]) if found else rc


def strip_mark(text: Optional[str]) -> str:
    return EXIT_MARK_RE.sub("", text or "")


def signal_of(rc: Optional[int]) -> Optional[int]:
    """The signal number an exit status stands for, or None: -N (a local
    child), 128 + N (a shell's report); 124 is timeout's, not a signal."""
    if rc is None:
        return None
    if rc < 0:
        return -rc
    if 128 < rc < 128 + 65:
        return rc - 128
    return None


def signal_name(n: int) -> str:
    try:
        return signal.Signals(n).name
    except ValueError:
        return f"signal {n}"


def last_line(text: Optional[str], pattern: Optional[Pattern[str]] = None) -> str:
    """The last non-empty line (or the first line matching pattern) of text."""
    lines = [l.strip() for l in strip_mark(text).splitlines() if l.strip()]
    if pattern is not None:
        for l in lines:
            if pattern.search(l):
                return l[:240]
    return lines[-1][:240] if lines else "no output"


def result_rows(text: Optional[str]) -> list[tuple[int, int]]:
    """[(bytes, iterations)] of the result table rows (benchlib.results)."""
    return results.shape(strip_mark(text))


def _ends(server: End, client: End) -> tuple[tuple[str, End], tuple[str, End]]:
    return (("server", server), ("client", client))


def _first_text(server: End, client: End,
                pattern: Pattern[str]) -> tuple[Optional[str], Optional[str]]:
    """(side, line) of the first end whose text matches pattern."""
    for side, e in _ends(server, client):
        if pattern.search(strip_mark(e.text)):
            return side, last_line(e.text, pattern)
    return None, None


def classify(server: End, client: End, expect: Expect,
             harness: Optional[str] = None) -> Verdict:
    """The Verdict of a cell. server, client: End; expect: Expect; harness:
    the pair runner's own complaint (a server that never listened), or None."""
    codes = {side: exit_status(e.rc, e.text) for side, e in _ends(server, client)}
    # 1. a crash: a signal we did not send, or a crash report in the text
    for side, e in _ends(server, client):
        sig = signal_of(codes[side])
        if sig is not None and not e.stopped:
            return Verdict(f"crash signal {signal_name(sig)}",
                           f"{side}: exit {codes[side]}: {last_line(e.text, CRASH_TEXT)}")
    for side, e in _ends(server, client):
        if codes[side] not in (None, 0) and CRASH_TEXT.search(e.text):
            return Verdict("crash", f"{side}: exit {codes[side]}: {last_line(e.text, CRASH_TEXT)}")
    failed = {side for side, e in _ends(server, client)
              if e.stopped or codes[side] not in (0,)}
    if not failed and harness is None:
        return _rows_verdict(server, client, expect)
    # 2. what the ends said, most telling first
    for reason, pattern in (("refused version", REFUSED_VERSION),
                            ("refused option", REFUSED_OPTION),
                            ("refused parameters", REFUSED_PARAMS),
                            ("completion error", COMPLETION),
                            ("desync/exchange failed", DESYNC),
                            ("connect failed", CONNECT)):
        hit, line = _first_text(server, client, pattern)
        if hit:
            v = Verdict(reason, f"{hit}: {line}")
            st = COMPLETION_STATUS.search(strip_mark((server if hit == "server" else client).text))
            if reason == "completion error" and st:
                v.notes.append(f"status {st.group(1)}")
            return v
    # 3. an end that failed by itself (the other may then have been stopped)
    for side, e in _ends(server, client):
        if not e.stopped and codes[side] not in (None, 0, TIMEOUT_RC):
            return Verdict(f"exit {codes[side]}", f"{side}: {last_line(e.text)}")
    # 4. we had to stop an end
    for side, e in _ends(server, client):
        if e.stopped or codes[side] == TIMEOUT_RC:
            why = harness or f"{side} still running at the cell's timeout"
            return Verdict("timeout", f"{why}; {side} said: {last_line(e.text)}")
    return Verdict("exit ?", harness or "an end did not run")


def _rows_verdict(server: End, client: End, expect: Expect) -> Verdict:
    """Both ends exited 0: the rows must be what the mode asks, on both sides."""
    crows, srows = result_rows(client.text), result_rows(server.text)
    def bad(why: str) -> Verdict:
        return Verdict("rows disagree", why)
    if not crows:
        return bad("client printed no result row")
    per_row = expect.iters * (expect.qps if expect.tool.endswith("_bw") else 1) \
        if expect.iters else None
    if per_row is not None:
        off = [r for r in crows if r[1] != per_row]
        if off:
            return bad(f"client row {off[0][0]} B has {off[0][1]} iterations, "
                       f"expected {per_row}")
    sizes = [r[0] for r in crows]
    if expect.all_sizes:
        want = [1 << i for i in range(1, len(sizes) + 1)]
        if sizes != want:
            return bad(f"client sizes {_sizes(sizes)} are not 2, 4, 8, ...")
        top = 1 << 23
        if expect.conn != "UD" and sizes[-1] != top:
            return bad(f"client sizes end at {sizes[-1]}, expected {top}")
        if expect.conn == "UD" and sizes[-1] > 4096:
            return bad(f"UD client sizes go past 4096 (to {sizes[-1]})")
    elif len(crows) != 1:
        return bad(f"client printed {len(crows)} rows ({_sizes(sizes)}), expected 1")
    elif expect.size is not None and sizes[0] != expect.size:
        return bad(f"client row is {sizes[0]} B, expected {expect.size}")
    empty: list[tuple[int, int]] = []
    want_rows = {"all": crows, "last": crows[-1:], "none": empty}[expect.server_rows]
    if expect.server_rows == "none" and srows:
        want_rows = crows if len(srows) > 1 else crows[-1:]   # a build that prints them
    v = Verdict("pass")
    if len(srows) != len(want_rows):
        return bad(f"server printed {len(srows)} rows ({_sizes([r[0] for r in srows])}), "
                   f"expected {len(want_rows)}")
    lost = LOSS.search(server.text)
    for s, c in zip(srows, want_rows):
        if s == c:
            continue
        if s[0] == c[0] and s[1] < c[1] and expect.conn == "UD" and lost:
            v.notes.append(f"receiver lost {c[1] - s[1]} of {c[1]} (UD)")
            continue
        return bad(f"server row {s[0]} B x {s[1]} vs client {c[0]} B x {c[1]}")
    return v


def _sizes(sizes: list[int]) -> str:
    s = ", ".join(str(x) for x in sizes[:6])
    return s + (", ..." if len(sizes) > 6 else "") if sizes else "none"

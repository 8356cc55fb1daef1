#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# TAP test: rdmawire's command line on bad input: each a clear message and a
# non-zero status (2 usage, 1 a file that cannot be used); an empty capture
# is reported, with a note on stderr, and exit 0.
set -u
top=${top_builddir:-.}
RW=$top/capture/rdmawire
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }
# expect CODE TEXT NAME CMD...: CMD exits CODE and its stderr holds TEXT
expect() {
	local code=$1 text=$2 name=$3 rc
	shift 3
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq "$code" ] && grep -qF -- "$text" "$tmp/err"; then
		ok "$name"
	else
		not_ok "$name (exit $rc)"
		sed 's/^/# /' "$tmp/err"
	fi
}
# pcap MAGIC_HEX LINKTYPE_HEX FILE: a capture file header, no packets
pcap() { printf "$(printf '%s' "$1$2" | sed 's/../\\x&/g')" >"$3"; }

echo "1..8"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_rdmawire_cli.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
# nanosecond magic, version 2.4, zone 0, sigfigs 0, snaplen 65535; link type 1 / 247
pcap 4d3cb2a1020004000000000000000000ffff0000 01000000 "$tmp/empty.pcap"
pcap 4d3cb2a1020004000000000000000000ffff0000 f7000000 "$tmp/ib.pcap"
echo "not a capture" >"$tmp/text"

expect 2 "no capture file" "no arguments: usage, exit 2" "$RW"
expect 2 "want QPN=PSN" "--psn without '=': exit 2" "$RW" "$tmp/empty.pcap" --psn 12
expect 1 "$tmp/missing.pcap" "a missing file is named, exit 1" "$RW" "$tmp/missing.pcap"
expect 1 "$tmp/text" "a file that is no capture is named, exit 1" "$RW" "$tmp/text"
expect 1 "link type 247" "raw InfiniBand frames (link type 247) are refused, exit 1" "$RW" "$tmp/ib.pcap"
expect 1 "$tmp/text:1:" "a bad trace names its line, exit 1" "$RW" "$tmp/empty.pcap" --trace "$tmp/text"
expect 0 "no RoCE v2 packet" "an empty capture: reported, exit 0" "$RW" "$tmp/empty.pcap"
if "$RW" "$tmp/empty.pcap" --json 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(d["frames"] != 0 or d["flows"] != [])'; then
	ok "--json of an empty capture is JSON with no frames and no flows"
else
	not_ok "--json of an empty capture is JSON with no frames and no flows"
fi
exit 0

#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# TAP test of rdmacap's packet backend on this host (capture/rdmacap.8):
# two network namespaces of the test's own joined by a veth pair; streamgen
# sends 4 groups x 2 sources with sequence numbers skipped on purpose,
# rdmacap captures on the other side until SIGINT. The loss must be the
# skipped numbers exactly, every source its own files, and tshark and
# tcpdump must read every pcap with the same counts. Then a full disk (a
# small tmpfs): a clear error, exit 1, and a pcap that tshark still reads.
# Needs root (namespaces, AF_PACKET); skips cleanly without it.
set -u
top=${top_builddir:-.}
CAP=$top/capture/rdmacap
GEN=$top/capture/streamgen
skip_all() { echo "1..0 # SKIP $1"; exit 0; }
[[ $EUID -eq 0 ]] || skip_all "needs root (network namespaces, AF_PACKET)"
for c in ip tshark tcpdump python3; do
	command -v $c >/dev/null || skip_all "no $c (ci/deps installs it)"
done
tag=cap$$
TX=${tag}tx RX=${tag}rx
ip netns add "$TX" 2>/dev/null || skip_all "cannot create a network namespace"
ip netns add "$RX"
work=$(mktemp -d /tmp/test_capture_host.XXXXXX)
cleanup() {
	umount "$work/full" 2>/dev/null
	ip netns del "$TX" 2>/dev/null
	ip netns del "$RX" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
ip link add v$tag type veth peer name w$tag
ip link set v$tag netns "$TX"
ip link set w$tag netns "$RX"
ip -n "$TX" addr add 10.77.0.1/24 dev v$tag
ip -n "$TX" addr add 10.77.0.2/24 dev v$tag
ip -n "$RX" addr add 10.77.0.10/24 dev w$tag
ip -n "$TX" link set v$tag up
ip -n "$RX" link set w$tag up
ip -n "$TX" link set lo up
ip -n "$RX" link set lo up
ip -n "$TX" route add 224.0.0.0/4 dev v$tag

n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; shift; printf '# %s\n' "$@"; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else not_ok "$name" "failed: $*"; fi; }

GROUPS_ARGS=() CAP_GROUPS=()
for g in 1 2 3 4; do GROUPS_ARGS+=(-g 239.77.0.$g:5000); CAP_GROUPS+=(-g 239.77.0.$g:5000); done
COUNT=400 SIZE=1024 SKIP=17,100,101,399
PER=$((COUNT - 4))
mkdir "$work/out"
ip netns exec "$RX" "$CAP" packet -i w$tag "${CAP_GROUPS[@]}" -o "$work/out" --preset seed \
	-f pcap,raw,hdr --json "$work/cap.json" > "$work/cap.log" 2>&1 &
cap=$!
# the capture is ready when it prints its banner (joins done)
for _ in $(seq 50); do grep -q '^rdmacap: packet:' "$work/cap.log" && break; sleep 0.1; done
sleep 0.5
ip netns exec "$TX" "$GEN" -i v$tag -s 10.77.0.1 -s 10.77.0.2 "${GROUPS_ARGS[@]}" -n $COUNT -l $SIZE \
	-r 8000 --skip $SKIP > "$work/gen.log" 2>&1
gen_rc=$?
sleep 0.5
kill -INT $cap
wait $cap
cap_rc=$?
check "streamgen exit 0 ($(cat "$work/gen.log"))" test $gen_rc -eq 0
check "rdmacap stops on SIGINT with exit 0" test $cap_rc -eq 0
[[ $cap_rc -eq 0 ]] || sed 's/^/# /' "$work/cap.log"
# the JSON: 8 sources, each PER packets and 3 lost (17, 100, 101: 399 is the
# last number, a loss no later packet can reveal), no drop of any kind
j() { python3 -c "import json,sys; d=json.load(open('$work/cap.json')); print($1)" 2>/dev/null; }
check "8 sources" test "$(j 'd["sources_count"]')" = 8
check "every source $PER packets" test "$(j "all(s['packets'] == $PER for s in d['sources'])")" = True
check "every source lost exactly 3 (17, 100, 101)" test "$(j "[s['lost'] for s in d['sources']]")" = "[3, 3, 3, 3, 3, 3, 3, 3]"
check "total lost 24, late 0" test "$(j '(d["lost"], d["late"])')" = "(24, 0)"
check "no drops counted" test "$(j 'sum(d["drops"].values())')" = 0
check "timestamps named (host)" test "$(j 'd["timestamps"]')" = host
check "live lines printed" grep -q 'rdmacap: total' "$work/cap.log"
np=$(ls "$work/out"/*.pcap 2>/dev/null | wc -l)
check "8 pcap files, one per source (got $np)" test "$np" = 8
bad=
for f in "$work/out"/*.pcap; do
	t=$(tshark -r "$f" -T fields -e frame.number 2>/dev/null | wc -l)
	d=$(tcpdump -r "$f" 2>/dev/null | wc -l)
	[[ $t == "$PER" && $d == "$PER" ]] || bad+=" $(basename "$f"):tshark=$t,tcpdump=$d"
done
check "tshark and tcpdump count $PER in every pcap" test -z "$bad"
[[ -z $bad ]] || echo "# $bad"
ns=$(tshark -r "$work/out/10.77.0.2-239.77.0.3-5000.pcap" -c 1 -T fields -e frame.time_epoch 2>/dev/null)
check "nanosecond stamps read by tshark ($ns)" grep -qE '^[0-9]+\.[0-9]{9}$' <<<"$ns"
raw=$(stat -c %s "$work/out/10.77.0.1-239.77.0.1-5000.raw")
check "raw file: payload after the 64-byte header ($raw B)" test "$raw" = $((PER * (SIZE - 64)))
hdr=$(stat -c %s "$work/out/10.77.0.1-239.77.0.1-5000.hdr")
check "hdr file: 106-byte headers ($hdr B)" test "$hdr" = $((PER * 106))
first=$(tshark -r "$work/out/10.77.0.1-239.77.0.4-5000.pcap" -T fields -e udp.payload 2>/dev/null | sed -n 18p | cut -c1-16)
check "in order: the 18th datagram carries seq 18 (17 skipped) ($first)" test "$first" = 0000000000000012

# a full disk: 256 KiB of tmpfs for about 1.6 MB of pcap
mkdir "$work/full"
mount -t tmpfs -o size=256k tmpfs "$work/full"
io=buffered   # what the capture below must say it used
dd if=/dev/zero of="$work/full/probe" bs=4096 count=1 oflag=direct 2>/dev/null && io=direct
rm -f "$work/full/probe"
ip netns exec "$RX" "$CAP" packet -i w$tag -g 239.77.0.1:5000 -o "$work/full" -q \
	--json "$work/full.json" > "$work/full.log" 2>&1 &
cap=$!
for _ in $(seq 50); do grep -q '^rdmacap: packet:' "$work/full.log" && break; sleep 0.1; done
sleep 0.3
ip netns exec "$TX" "$GEN" -i v$tag -s 10.77.0.1 -g 239.77.0.1:5000 -n 1600 -l $SIZE -r 8000 >/dev/null 2>&1
sleep 0.3
kill -INT $cap 2>/dev/null
wait $cap
full_rc=$?
check "disk full: exit 1" test $full_rc -eq 1
check "disk full: the error names ENOSPC" grep -q 'No space left on device' "$work/full.log"
f=$work/full/10.77.0.1-239.77.0.1-5000.pcap
t=$(tshark -r "$f" -T fields -e frame.number 2>&1 >"$work/tshark.out" | grep -v 'Running as user' >"$work/tshark.err"; wc -l <"$work/tshark.out")
check "disk full: tshark reads the pcap whole ($t packets, no warning)" \
	test "$t" -gt 100 -a ! -s "$work/tshark.err"
[[ -s $work/tshark.err ]] && sed 's/^/# /' "$work/tshark.err"
# O_DIRECT where the file system takes it (tmpfs from Linux 6.6): then the
# cut above was of a direct write that the disk stopped part-way
got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["files_io"])' "$work/full.json" 2>&1)
check "disk full: files written $io as the file system allows ($got)" test "$got" = "$io"

# bad input: exit 2, a message, nothing written
rm -rf "$work/bad"; mkdir "$work/bad"
out=$("$CAP" packet -i w$tag -g 239.77.0.1:5000 -o "$work/bad" 2>&1); rc=$?
check "unknown netdev here: exit 2 ($out)" test $rc -eq 2 -a -z "$(ls -A "$work/bad")"
out=$("$CAP" packet -i lo -g 10.1.1.1:5000 -o "$work/bad" 2>&1); rc=$?
check "group not multicast: exit 2 ($out)" test $rc -eq 2
out=$("$GEN" -g 10.1.1.1:5000 2>&1); rc=$?
check "streamgen: group not multicast: exit 2 ($out)" test $rc -eq 2
echo "1..$n"
